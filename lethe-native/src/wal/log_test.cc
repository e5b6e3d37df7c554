#include <gtest/gtest.h>

#include "lethe/env.h"
#include "wal/log_reader.h"
#include "wal/log_writer.h"

namespace lethe::log {
namespace {

class LogTest : public ::testing::Test {
 protected:
  void Write(const std::vector<std::string>& records, bool checksums = true) {
    std::unique_ptr<WritableFile> f;
    ASSERT_TRUE(env_->NewWritableFile("/log", &f).ok());
    Writer w(std::move(f), checksums);
    for (const auto& r : records) ASSERT_TRUE(w.AddRecord(r).ok());
    ASSERT_TRUE(w.Close().ok());
  }
  std::vector<std::string> Read(Reader** out_reader = nullptr) {
    std::unique_ptr<SequentialFile> f;
    EXPECT_TRUE(env_->NewSequentialFile("/log", &f).ok());
    reader_ = std::make_unique<Reader>(std::move(f), true);
    std::vector<std::string> got;
    std::string scratch;
    std::string_view rec;
    while (reader_->ReadRecord(&rec, &scratch)) got.emplace_back(rec);
    return got;
  }
  std::string Contents() {
    std::string d;
    env_->ReadFileToString("/log", &d);
    return d;
  }
  void SetContents(const std::string& d) { ASSERT_TRUE(env_->WriteStringToFile("/log", d).ok()); }

  std::unique_ptr<MemEnv> env_ = NewMemEnv();
  std::unique_ptr<Reader> reader_;
};

TEST_F(LogTest, RoundTrip) {
  std::vector<std::string> recs = {"a", "", std::string(100000, 'x'), "last"};
  Write(recs);
  EXPECT_EQ(Read(), recs);
  EXPECT_EQ(reader_->tail_dropped_bytes(), 0u);
}

TEST_F(LogTest, TornTailIsDroppedNotFatal) {
  Write({"first", "second", "third"});
  std::string d = Contents();
  SetContents(d.substr(0, d.size() - 2));
  EXPECT_EQ(Read(), (std::vector<std::string>{"first", "second"}));
  EXPECT_GT(reader_->tail_dropped_bytes(), 0u);
  EXPECT_FALSE(reader_->damaged_before_end());
}

TEST_F(LogTest, DamageInTheMiddleIsReported) {
  Write({"first", "second", "third"});
  std::string d = Contents();
  d[8 + 5 + 8 + 2] ^= 1;  // a payload byte of "second"
  SetContents(d);
  EXPECT_EQ(Read(), (std::vector<std::string>{"first"}));
  EXPECT_TRUE(reader_->damaged_before_end());
}

// A bad header followed by a long tail where every position reads as a
// plausible 16 MiB record: checking each candidate's checksum would take
// tens of minutes; the scan's budget ends it, reporting damage.
TEST_F(LogTest, ALongOddTailEndsTheScanAsDamage) {
  std::string d = std::string("\x01\0\0\0\0\0\0\0", 8) + std::string(17 << 20, '\x01');
  SetContents(d);
  EXPECT_TRUE(Read().empty());
  EXPECT_TRUE(reader_->damaged_before_end());
  EXPECT_EQ(reader_->tail_dropped_bytes(), d.size());
}

TEST_F(LogTest, WithoutChecksumsRecordsStillRead) {
  Write({"a", "bb"}, /*checksums=*/false);
  EXPECT_EQ(Contents().substr(0, 4), std::string(4, '\0'));
  EXPECT_EQ(Read(), (std::vector<std::string>{"a", "bb"}));
}

}  // namespace
}  // namespace lethe::log
