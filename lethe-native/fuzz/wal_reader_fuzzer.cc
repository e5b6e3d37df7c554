// Fuzz target: the write-ahead log as recovery reads it.
//
// The input is a WAL file. It is read with log::Reader, with and without
// checksum verification, and every record is decoded as a write batch and
// iterated, as DBImpl::RecoverLogFile does. Properties:
//  * the reader accounts for every byte: the offset of the last good record
//    plus the dropped tail is the file size (docs/formats.md, section 4);
//  * a batch that decodes has as many records as its header says; a manifest
//    edit marker's number survives a round trip;
//  * round trip: records written by log::Writer (payloads cut from the input)
//    read back identical, with and without checksums.
// Seeds: `wal_reader_fuzzer --write_seeds=DIR`.
#include <fuzzer/FuzzedDataProvider.h>

#include "db/write_batch_internal.h"
#include "fuzz_util.h"
#include "lethe/db.h"
#include "lethe/env.h"
#include "util/coding.h"
#include "wal/log_format.h"
#include "wal/log_reader.h"
#include "wal/log_writer.h"

namespace lethe {
namespace {

constexpr const char* kLog = "/000007.log";

// Counts what a batch holds and touches every byte handed out.
class CountingHandler final : public WriteBatch::Handler {
 public:
  Status Put(uint32_t, std::string_view k, std::string_view v, uint64_t) override { return Note(k, v); }
  Status Delete(uint32_t, std::string_view k, uint64_t) override { return Note(k, {}); }
  Status DeleteRange(uint32_t, std::string_view b, std::string_view e) override { return Note(b, e); }
  Status Merge(uint32_t, std::string_view k, std::string_view v, uint64_t) override { return Note(k, v); }
  uint32_t records = 0;
  size_t bytes = 0;

 private:
  Status Note(std::string_view a, std::string_view b) {
    records++;
    for (char c : a) bytes += static_cast<unsigned char>(c);
    for (char c : b) bytes += static_cast<unsigned char>(c);
    return Status::OK();
  }
};

void ReadLog(MemEnv* env, size_t file_size, bool verify) {
  std::unique_ptr<SequentialFile> file;
  FUZZ_CHECK(env->NewSequentialFile(kLog, &file).ok());
  log::Reader reader(std::move(file), verify);
  std::string scratch;
  std::string_view record;
  while (reader.ReadRecord(&record, &scratch)) {
    if (record.size() < WriteBatch::kHeaderSize) continue;  // recovery: Corruption
    uint64_t edit_number = 0;
    bool marker_ok = false;
    if (DecodeManifestEditMarker(record, &edit_number, &marker_ok)) {
      // A marker's number survives a round trip (the input's varint need
      // not be minimal, so the bytes may differ).
      if (marker_ok) {
        uint64_t again = 0;
        bool again_ok = false;
        FUZZ_CHECK(DecodeManifestEditMarker(EncodeManifestEditMarker(edit_number), &again, &again_ok));
        FUZZ_CHECK(again_ok && again == edit_number);
      }
      continue;
    }
    WriteBatch batch;
    WriteBatchInternal::SetContents(&batch, record);
    CountingHandler handler;
    if (batch.Iterate(&handler).ok()) FUZZ_CHECK(handler.records == batch.Count());
  }
  FUZZ_CHECK(reader.status().ok());
  FUZZ_CHECK(reader.offset() + reader.tail_dropped_bytes() == file_size);
}

// Writes payloads cut from the input and reads them back.
void RoundTrip(MemEnv* env, FuzzedDataProvider* in) {
  const bool checksums = in->ConsumeBool();
  std::vector<std::string> records;
  while (in->remaining_bytes() > 0 && records.size() < 16) {
    std::string r = in->ConsumeRandomLengthString();
    // Without checksums an empty record's header is all zeros, which readers
    // take for a zero-filled tail (the end). WAL records are never empty:
    // a batch has a 12-byte header.
    if (!checksums && r.empty()) continue;
    records.push_back(std::move(r));
  }
  std::unique_ptr<WritableFile> file;
  FUZZ_CHECK(env->NewWritableFile(kLog, &file).ok());
  log::Writer writer(std::move(file), checksums);
  for (const std::string& r : records) FUZZ_CHECK(writer.AddRecord(r).ok());
  FUZZ_CHECK(writer.Close().ok());

  std::unique_ptr<SequentialFile> rf;
  FUZZ_CHECK(env->NewSequentialFile(kLog, &rf).ok());
  log::Reader reader(std::move(rf), /*verify_checksums=*/true);
  std::string scratch;
  std::string_view record;
  size_t i = 0;
  while (reader.ReadRecord(&record, &scratch)) {
    FUZZ_CHECK(i < records.size() && record == records[i]);
    i++;
  }
  FUZZ_CHECK(i == records.size());
  FUZZ_CHECK(reader.status().ok() && reader.tail_dropped_bytes() == 0 && !reader.damaged_before_end());
  FUZZ_CHECK(reader.offset() == writer.bytes_written());
}

// A column family handle for building seed batches without a database.
class SeedFamily final : public ColumnFamilyHandle {
 public:
  explicit SeedFamily(uint32_t id) : id_(id) {}
  uint32_t id() const override { return id_; }
  const std::string& name() const override { return name_; }

 private:
  uint32_t id_;
  std::string name_ = "seed";
};

std::vector<std::string> MakeSeeds() {
  SeedFamily cf0(0), cf3(3);
  std::vector<std::string> batches;
  WriteBatch b;
  b.Put(&cf0, "apple", "red", 17);
  b.Delete(&cf0, "banana");
  b.Delete(&cf3, "cherry", 42);
  b.Merge(&cf3, "list", "x", 9);
  b.DeleteRange(&cf0, "d", "f");
  WriteBatchInternal::SetSequence(&b, 100);
  batches.push_back(b.Data());
  b.Clear();
  b.Put(&cf0, std::string(300, 'k'), std::string(1000, 'v'));
  WriteBatchInternal::SetSequence(&b, 105);
  batches.push_back(b.Data());
  b.Clear();
  WriteBatchInternal::SetSequence(&b, 106);
  batches.push_back(b.Data());  // an empty batch: header only

  std::vector<std::string> seeds;
  auto env = NewMemEnv();
  for (bool checksums : {true, false}) {
    std::unique_ptr<WritableFile> file;
    env->NewWritableFile(kLog, &file);
    log::Writer writer(std::move(file), checksums);
    for (const std::string& batch : batches) writer.AddRecord(batch);
    writer.Close();
    std::string log;
    env->ReadFileToString(kLog, &log);
    seeds.push_back(log);
    seeds.push_back(log.substr(0, log.size() - 5));  // a torn last record
  }
  return seeds;
}

}  // namespace
}  // namespace lethe

LETHE_FUZZ_SEEDS(lethe::MakeSeeds)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lethe;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto env = NewMemEnv();
  FUZZ_CHECK(env->WriteStringToFile(kLog, input).ok());
  ReadLog(env.get(), size, /*verify=*/true);
  ReadLog(env.get(), size, /*verify=*/false);
  FuzzedDataProvider in(data, size);
  RoundTrip(env.get(), &in);
  return 0;
}
