#include <gtest/gtest.h>

#include "db/db_impl.h"
#include "lethe/write_batch.h"

namespace lethe {
namespace {

struct Recorder : public WriteBatch::Handler {
  std::string log;
  Status Put(uint32_t cf, std::string_view k, std::string_view v, uint64_t dk) override {
    log += "Put(" + std::to_string(cf) + "," + std::string(k) + "," + std::string(v) + "," + std::to_string(dk) + ")";
    return Status::OK();
  }
  Status Delete(uint32_t cf, std::string_view k, uint64_t dk) override {
    log += "Delete(" + std::to_string(cf) + "," + std::string(k) +
           (dk == kMaxDeleteKey ? std::string() : "," + std::to_string(dk)) + ")";
    return Status::OK();
  }
  Status DeleteRange(uint32_t cf, std::string_view b, std::string_view e) override {
    log += "DeleteRange(" + std::to_string(cf) + "," + std::string(b) + "," + std::string(e) + ")";
    return Status::OK();
  }
  Status Merge(uint32_t cf, std::string_view k, std::string_view v, uint64_t dk) override {
    log += "Merge(" + std::to_string(cf) + "," + std::string(k) + "," + std::string(v) + "," + std::to_string(dk) + ")";
    return Status::OK();
  }
};

std::string Hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string r;
  for (unsigned char c : s) {
    r.push_back(d[c >> 4]);
    r.push_back(d[c & 15]);
  }
  return r;
}

TEST(WriteBatchTest, GoldenEncoding) {
  // The encoding is a public format: the Java API produces it byte for byte.
  ColumnFamilyHandleImpl cf0(nullptr, nullptr, 0, "default"), cf2(nullptr, nullptr, 2, "other");
  WriteBatch b;
  b.Put(&cf0, "k", "v", 7);
  b.Delete(&cf2, "x");
  b.Delete(&cf0, "y", 9);
  EXPECT_EQ(Hex(b.Data()),
            "0000000000000000" "03000000"          // sequence, count
            "01" "00" "016b" "0176" "0700000000000000"  // put cf0 "k" "v" dk=7
            "00" "02" "0178"                         // delete cf2 "x"
            "04" "00" "0179" "0900000000000000");    // delete cf0 "y" dk=9
  Recorder r;
  ASSERT_TRUE(b.Iterate(&r).ok());
  EXPECT_EQ(r.log, "Put(0,k,v,7)Delete(2,x)Delete(0,y,9)");
}

TEST(WriteBatchTest, AllKindsRoundTrip) {
  ColumnFamilyHandleImpl cf(nullptr, nullptr, 5, "cf");
  WriteBatch b;
  b.Merge(&cf, "m", "op", 9);
  b.DeleteRange(&cf, "a", "z");
  EXPECT_EQ(b.Count(), 2u);
  WriteBatch copy;
  ASSERT_TRUE(copy.SetData(b.Data()).ok());
  Recorder r;
  ASSERT_TRUE(copy.Iterate(&r).ok());
  EXPECT_EQ(r.log, "Merge(5,m,op,9)DeleteRange(5,a,z)");
}

TEST(WriteBatchTest, MalformedBatchesAreCorruption) {
  ColumnFamilyHandleImpl cf(nullptr, nullptr, 0, "default");
  WriteBatch b;
  b.Put(&cf, "key", "value", 1);
  b.Delete(&cf, "key", 2);
  std::string data = b.Data();
  Recorder r;
  for (size_t cut = WriteBatch::kHeaderSize + 1; cut < data.size(); cut++) {
    WriteBatch t;
    ASSERT_TRUE(t.SetData(data.substr(0, cut)).ok());
    EXPECT_TRUE(t.Iterate(&r).IsCorruption()) << cut;
  }
  std::string wrong_count = data;
  wrong_count[8] = 3;
  WriteBatch t;
  ASSERT_TRUE(t.SetData(wrong_count).ok());
  EXPECT_TRUE(t.Iterate(&r).IsCorruption());
  EXPECT_TRUE(t.SetData("short").IsInvalidArgument());
}

}  // namespace
}  // namespace lethe
