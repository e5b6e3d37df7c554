// Fuzz target: TableReader on damaged and hostile table files.
//
// The first input byte picks the mode:
//  * even: the rest is a table file, opened with and without checksum
//    verification (checksums make most mutations fail early);
//  * odd: the rest describes a valid table (builder options, entries, range
//    tombstones) followed by byte flips. The table is built with
//    TableBuilder and must read back exactly; then the flips are applied and
//    the damaged file is read with and without verification. This reaches
//    the page, index and properties decoders with well-formed surroundings.
// Every opened table is read completely: iteration, seeks, point lookups,
// filter probes, tombstone coverage, with and without page overrides
// (dropped and patched pages) and through a page cache. Every outcome must
// be a Status: no crash, hang, huge allocation or sanitizer report.
// Seeds: `table_reader_fuzzer --write_seeds=DIR`.
#include <algorithm>
#include <fuzzer/FuzzedDataProvider.h>

#include <set>

#include "format/internal_key.h"
#include "fuzz_util.h"
#include "lethe/env.h"
#include "sst/table_builder.h"
#include "sst/table_reader.h"

namespace lethe {
namespace {

constexpr const char* kTable = "/000005.sst";

struct Entry {
  std::string ikey, value;
  uint64_t delete_key;
};

struct Description {
  TableBuilderOptions options;
  std::vector<Entry> entries;  // in internal-key order
  std::vector<RangeTombstone> tombstones;
};

// Decodes a table description from the input (any bytes make one).
Description Describe(FuzzedDataProvider* in) {
  Description d;
  d.options.page_size = in->ConsumeIntegralInRange<size_t>(64, 2048);
  d.options.pages_per_tile = in->ConsumeIntegralInRange(1, 8);
  d.options.bloom_bits_per_key = in->ConsumeIntegralInRange(0, 16);
  d.options.compression = static_cast<Compression>(in->ConsumeIntegralInRange(0, 2));
  d.options.index_partition_size = in->ConsumeIntegralInRange<size_t>(0, 512);  // 0: one partition
  std::set<std::string> keys;
  const size_t n = in->ConsumeIntegralInRange<size_t>(0, 64);
  for (size_t i = 0; i < n; i++) keys.insert(in->ConsumeRandomLengthString(16));
  SequenceNumber seq = in->ConsumeIntegralInRange<SequenceNumber>(1000, kMaxSequenceNumber);  // > 3 * 64 + 1
  for (const std::string& k : keys) {
    const int versions = in->ConsumeIntegralInRange(1, 3);
    for (int v = 0; v < versions; v++, seq--) {  // newest first
      auto kind = static_cast<EntryKind>(in->ConsumeIntegralInRange(0, 2));
      std::string value = kind == EntryKind::kTombstone ? "" : in->ConsumeRandomLengthString(64);
      // Repeated values make pages that compress, so flips reach the codecs.
      for (int r = in->ConsumeIntegralInRange(0, 6); r > 0 && !value.empty(); r--) value += value;
      uint64_t dk = in->ConsumeBool() ? kMaxDeleteKey : in->ConsumeIntegral<uint64_t>();
      d.entries.push_back(Entry{MakeInternalKey(k, seq, kind), std::move(value), dk});
    }
  }
  const int tombstones = in->ConsumeIntegralInRange(0, 3);
  for (int i = 0; i < tombstones; i++) {
    std::string start = in->ConsumeRandomLengthString(8), end = in->ConsumeRandomLengthString(8);
    d.tombstones.push_back(RangeTombstone{start, end, in->ConsumeIntegralInRange<SequenceNumber>(1, seq)});
  }
  return d;
}

std::string Build(MemEnv* env, const Description& d) {
  std::unique_ptr<WritableFile> file;
  FUZZ_CHECK(env->NewWritableFile(kTable, &file).ok());
  TableBuilder builder(d.options, file.get());
  for (const Entry& e : d.entries) builder.Add(e.ikey, e.value, e.delete_key);
  for (const RangeTombstone& t : d.tombstones) builder.AddRangeTombstone(t);
  FUZZ_CHECK(builder.Finish().ok());
  FUZZ_CHECK(file->Close().ok());
  std::string contents;
  FUZZ_CHECK(env->ReadFileToString(kTable, &contents).ok());
  return contents;
}

Status Open(MemEnv* env, bool verify, PageCache* cache, std::unique_ptr<TableReader>* table) {
  uint64_t size;
  FUZZ_CHECK(env->GetFileSize(kTable, &size).ok());
  std::unique_ptr<RandomAccessFile> file;
  FUZZ_CHECK(env->NewRandomAccessFile(kTable, &file).ok());
  TableReader::Options options;
  options.verify_checksums = verify;
  options.page_cache = cache;
  return TableReader::Open(options, kTable, 5, std::move(file), size, table);
}

// The answer of a finished lookup, as one comparable string.
std::string Answer(GetContext* ctx) {
  std::string value;
  uint64_t dk = 0;
  Status s = ctx->Finish(&value, &dk);
  return s.ToString() + "|" + value + "|" + std::to_string(dk);
}

// One batch of the sorted keys must answer each key as Get does.
void ExerciseMultiGet(const TableReader& table, std::vector<std::string> keys, const PageOverrides* overrides) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<GetContext> ctxs;
  ctxs.reserve(keys.size());
  std::vector<GetContext*> batch;
  for (const std::string& k : keys) batch.push_back(&ctxs.emplace_back(k, kMaxSequenceNumber));
  table.MultiGet(batch, /*fill_cache=*/false, overrides);
  for (size_t i = 0; i < keys.size(); i++) {
    GetContext single(keys[i], kMaxSequenceNumber);
    Status s = table.Get(&single, /*fill_cache=*/false, overrides);
    if (!s.ok()) single.Fail(s);
    FUZZ_CHECK(Answer(batch[i]) == Answer(&single));
  }
}

// Reads everything `table` offers; failures must come back as a Status.
void Exercise(const TableReader& table, const std::vector<std::string>& probes,
              const PageOverrides* overrides) {
  std::vector<std::string> keys = probes;  // sort keys to seek and look up
  std::vector<PartitionRef> partitions;
  if (table.ReadPartitions(&partitions).ok()) {
    for (const PartitionRef& part : partitions) {
      for (size_t t = 0; t < part->tile_count() && keys.size() <= 24; t++) {
        keys.push_back(std::string(part->tile(t).smallest));
        keys.push_back(std::string(part->tile(t).largest));
      }
    }
  }
  auto it = table.NewIterator(/*fill_cache=*/true, overrides);
  size_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), n++) {
    FUZZ_CHECK(it->key().size() >= 8);  // ExtractSortKey's precondition
    if (n % 16 == 0 && keys.size() < 32) keys.emplace_back(ExtractSortKey(it->key()));
  }
  (void)it->status();
  // Backwards, a damaged table may show entries the forward scan stopped before.
  size_t back = 0;
  for (it->SeekToLast(); it->Valid() && back < (size_t{1} << 20); it->Prev(), back++) {
    FUZZ_CHECK(it->key().size() >= 8);
  }
  for (const std::string& k : keys) {
    for (SequenceNumber seq : {kMaxSequenceNumber, SequenceNumber{100}}) {
      it->Seek(MakeInternalKey(k, seq, kSeekKind));
      for (int i = 0; i < 3 && it->Valid(); i++) it->Next();
      it->SeekForPrev(MakeInternalKey(k, seq, kSeekKind));
      for (int i = 0; i < 3 && it->Valid(); i++) i % 2 == 0 ? it->Prev() : it->Next();
      GetContext ctx(k, seq);
      if (table.Get(&ctx, /*fill_cache=*/false, overrides).ok()) {
        std::string value;
        uint64_t dk;
        (void)ctx.Finish(&value, &dk);
      }
      if (table.fragmented_tombstones() != nullptr) (void)table.fragmented_tombstones()->MaxCoveringSeq(k, seq);
    }
    (void)table.MayContain(k, overrides);
  }
  ExerciseMultiGet(table, std::move(keys), overrides);
}

// Opens the file in `env` and, if it opens, reads all of it, also with page
// overrides derived from the input.
void OpenAndExercise(MemEnv* env, bool verify, const std::vector<std::string>& probes,
                     uint32_t dropped_page, uint32_t patched_page) {
  PageCache cache(1 << 20);
  std::unique_ptr<TableReader> table;
  if (!Open(env, verify, verify ? &cache : nullptr, &table).ok()) return;
  Exercise(*table, probes, nullptr);
  // The table is its own patch: valid when its tile 0 has one page.
  std::vector<uint32_t> dropped{dropped_page}, patched{patched_page};
  PageOverrides overrides{&dropped, &patched, table.get()};
  Exercise(*table, probes, &overrides);
}

void FuzzRawFile(MemEnv* env, std::string_view file) {
  FUZZ_CHECK(env->WriteStringToFile(kTable, file).ok());
  std::vector<std::string> probes{"", std::string(file.substr(0, 8))};
  for (bool verify : {true, false}) OpenAndExercise(env, verify, probes, 1, 0);
}

void FuzzBuiltFile(MemEnv* env, FuzzedDataProvider* in) {
  const Description d = Describe(in);
  std::string file = Build(env, d);

  // Round trip: the valid table reads back exactly what was added.
  {
    std::unique_ptr<TableReader> table;
    Status s = Open(env, /*verify=*/true, nullptr, &table);
    FUZZ_CHECK(s.ok());
    auto it = table->NewIterator(false);
    size_t i = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), i++) {
      FUZZ_CHECK(i < d.entries.size());
      FUZZ_CHECK(it->key() == d.entries[i].ikey && it->value() == d.entries[i].value);
      FUZZ_CHECK(it->delete_key() == d.entries[i].delete_key);
    }
    FUZZ_CHECK(it->status().ok() && i == d.entries.size());
    FUZZ_CHECK(table->range_tombstones().size() == d.tombstones.size());
  }

  // Damage: byte flips, then maybe a cut.
  const int flips = in->ConsumeIntegralInRange(1, 8);
  for (int f = 0; f < flips && in->remaining_bytes() >= 5; f++) {
    size_t pos = in->ConsumeIntegral<uint32_t>() % file.size();
    file[pos] = static_cast<char>(file[pos] ^ in->ConsumeIntegralInRange(1, 255));
  }
  if (in->ConsumeBool()) file.resize(in->ConsumeIntegralInRange<size_t>(0, file.size()));
  std::vector<std::string> probes;
  for (size_t i = 0; i < d.entries.size() && probes.size() < 8; i += 1 + d.entries.size() / 8) {
    probes.emplace_back(ExtractSortKey(d.entries[i].ikey));
  }
  FUZZ_CHECK(env->WriteStringToFile(kTable, file).ok());
  const uint32_t dropped = in->ConsumeIntegralInRange(0, 4), patched = in->ConsumeIntegralInRange(0, 4);
  for (bool verify : {false, true}) OpenAndExercise(env, verify, probes, dropped, patched);
}

// A seed table: 40 keys, values and merges, and one range tombstone.
Description SeedTable(int h, Compression c) {
  Description d;
  d.options = TableBuilderOptions{128, h, 10, c};
  d.options.index_partition_size = h == 1 ? 256 : 0;  // several partitions, or one
  for (int i = 0; i < 40; i++) {
    std::string k = "key" + std::to_string(1000 + i);
    d.entries.push_back(Entry{MakeInternalKey(k, 500 - i, i % 5 == 0 ? EntryKind::kMerge : EntryKind::kValue),
                              "value" + std::to_string(i) + std::string(40, 'v'),
                              i % 3 == 0 ? kMaxDeleteKey : uint64_t(i * 7 % 40)});
  }
  d.tombstones.push_back(RangeTombstone{"key1010", "key1015", 450});
  return d;
}

std::vector<std::string> MakeSeeds() {
  std::vector<std::string> seeds;
  auto env = NewMemEnv();
  // Raw files: tables with h = 1 and 4, stored, LZ4 and ZSTD pages, and a
  // tombstone-only table.
  for (int h : {1, 4}) {
    for (Compression c : {Compression::kNone, Compression::kLZ4, Compression::kZSTD}) {
      seeds.push_back(std::string(1, '\0') + Build(env.get(), SeedTable(h, c)));
    }
  }
  Description only_tombstones;
  only_tombstones.tombstones.push_back(RangeTombstone{"a", "m", 9});
  seeds.push_back(std::string(1, '\0') + Build(env.get(), only_tombstones));
  // Descriptions: the provider takes integers from the end and strings from
  // the front, so any bytes describe a table; these make a few sizes.
  std::string text = "alpha\\ beta\\ gamma\\ delta\\ epsilon\\ zeta\\ eta\\ theta\\ iota\\ kappa\\ ";
  for (int copies : {1, 4, 16}) {
    std::string s = "\x01";
    for (int c = 0; c < copies; c++) s += text;
    s += std::string("\x07\x03\x21\x00\x05\x10\x40\x02\x09\x7f", 10);
    seeds.push_back(s);
  }
  return seeds;
}

}  // namespace
}  // namespace lethe

LETHE_FUZZ_SEEDS(lethe::MakeSeeds)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  auto env = lethe::NewMemEnv();
  if ((data[0] & 1) == 0) {
    lethe::FuzzRawFile(env.get(), std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  } else {
    FuzzedDataProvider in(data + 1, size - 1);
    lethe::FuzzBuiltFile(env.get(), &in);
  }
  return 0;
}
