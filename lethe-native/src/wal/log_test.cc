#include <gtest/gtest.h>

#include "lethe/env.h"
#include "wal/log_format.h"
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

// A file on a disk with `*space` bytes left (negative: unlimited): an
// append that does not fit fails, as on a full disk.
class SpaceLimitedFile final : public WritableFile {
 public:
  SpaceLimitedFile(std::unique_ptr<WritableFile> base, const int64_t* space) : base_(std::move(base)), space_(space) {}
  Status Append(std::string_view data) override {
    if (*space_ >= 0 && static_cast<int64_t>(data.size() + used_) > *space_) {
      return Status::NoSpace("/log", "no space left on device");
    }
    used_ += data.size();
    return base_->Append(data);
  }
  Status Flush() override { return base_->Flush(); }
  Status Sync() override { return base_->Sync(); }
  Status Close() override { return base_->Close(); }

 private:
  std::unique_ptr<WritableFile> base_;
  const int64_t* space_;
  uint64_t used_ = 0;
};

// The disk fills between a record's header and its payload, so the log ends
// in a partial record. Once space is back the writer still appends nothing:
// the partial record stays a torn tail, not damage with records behind it.
TEST_F(LogTest, AfterAFailedAppendNothingMoreIsWritten) {
  std::unique_ptr<WritableFile> base;
  ASSERT_TRUE(env_->NewWritableFile("/log", &base).ok());
  int64_t space = -1;
  Writer w(std::make_unique<SpaceLimitedFile>(std::move(base), &space), true);
  ASSERT_TRUE(w.AddRecord("first").ok());
  space = static_cast<int64_t>(Contents().size()) + kHeaderSize + 3;
  Status failed = w.AddRecord("second");
  ASSERT_TRUE(failed.IsNoSpace()) << failed.ToString();
  const std::string partial = Contents();
  ASSERT_EQ(partial.size(), 2 * kHeaderSize + 5);  // "first" and a header
  space = -1;
  EXPECT_TRUE(w.AddRecord("third").IsNoSpace());
  EXPECT_EQ(Contents(), partial);
  EXPECT_EQ(Read(), (std::vector<std::string>{"first"}));
  EXPECT_EQ(reader_->tail_dropped_bytes(), kHeaderSize);
  EXPECT_FALSE(reader_->damaged_before_end());
}

TEST_F(LogTest, WithoutChecksumsRecordsStillRead) {
  Write({"a", "bb"}, /*checksums=*/false);
  EXPECT_EQ(Contents().substr(0, 4), std::string(4, '\0'));
  EXPECT_EQ(Read(), (std::vector<std::string>{"a", "bb"}));
}

}  // namespace
}  // namespace lethe::log
