#include "version/version_edit.h"

#include <cstdint>

#include "sst/compression.h"
#include "util/coding.h"

namespace lethe {
namespace {

// Record tags of an edit. Never reuse or renumber a tag.
enum Tag : uint32_t {
  kLogNumber = 1,
  kNextFileNumber = 2,
  kLastSequence = 3,
  kAddColumnFamily = 4,   // id varint32 | name lp | options lp
  kDropColumnFamily = 5,  // id varint32
  kDeletedFile = 6,       // cf varint32 | level varint32 | number varint64
  kNewFile = 7,           // cf varint32 | level varint32 | file fields lp
  kMaxColumnFamily = 8,
  kSecondaryDeletes = 9,  // cf varint32 | records lp (SecondaryDeletes::EncodeTo); replaces
  kWalLogNumber = 10,     // like kLogNumber, and a WAL with this number exists
  kEditNumber = 11,
};

// Fields of a file record (tag varint32 then varint64 unless noted).
enum FileTag : uint32_t {
  kFNumber = 1, kFSize = 2, kFSmallest = 3 /* lp */, kFLargest = 4 /* lp */,
  kFSmallestSeq = 5, kFLargestSeq = 6, kFEntries = 7, kFPointTombstones = 8,
  kFRangeTombstones = 9, kFMerges = 10, kFDeleteKeyMin = 11 /* fixed64 */,
  kFDeleteKeyMax = 12 /* fixed64 */, kFOldestTombstoneTime = 13, kFCreatedTime = 14,
  kFRawKeyBytes = 15, kFRawValueBytes = 16, kFEstimatedInvalidated = 17,
  kFDroppedPages = 18 /* lp: count varint32 | ascending page indexes as varint32 deltas */,
  kFSecondaryAppliedSeq = 19, kFPatchFile = 20, kFPatchSize = 21,
  kFPatchedPages = 22 /* lp: like kFDroppedPages */, kFTombstoneDeleteKeyMax = 23 /* fixed64 */,
};

// Column family option fields (tag varint32 then varint64).
enum OptTag : uint32_t {
  kOSizeRatio = 1, kOPageSize = 2, kOPagesPerTile = 3, kOBloomBits = 4, kOTargetFileSize = 5,
  kOLevel1Bytes = 6, kOL0Trigger = 7, kOL0Stop = 8, kODeletePersistenceThreshold = 9,
  kOFadeFilePick = 10, kOCompression = 11, kOBottommostCompression = 12, kODynamicLevelBytes = 13,
  kOIndexPartitionSize = 14, kOCompactionStyle = 15, kOTimeOrderedMaxFiles = 16,
  kOFlushCompression = 17,
};
// The ranges a decoded option must lie in: DB::Open's checks (page size,
// pages per tile; size ratio >= 2 is checked inline), the Java API's for
// the Bloom filter bits (beyond about 44 bits a key buy nothing: k stops at
// 30 probes), and int for the other int fields.
constexpr uint64_t kMinPageSize = 64;
constexpr uint64_t kMaxPagesPerTile = 4096;
constexpr uint64_t kMaxBloomBitsPerKey = 64;
constexpr uint64_t kMaxIntOption = INT32_MAX;

void EncodeFile(const FileMetaData& f, std::string* dst) {
  auto v = [dst](FileTag t, uint64_t x) {
    PutVarint32(dst, t);
    PutVarint64(dst, x);
  };
  v(kFNumber, f.number);
  v(kFSize, f.file_size);
  PutVarint32(dst, kFSmallest);
  PutLengthPrefixed(dst, f.smallest);
  PutVarint32(dst, kFLargest);
  PutLengthPrefixed(dst, f.largest);
  v(kFSmallestSeq, f.smallest_seq);
  v(kFLargestSeq, f.largest_seq);
  v(kFEntries, f.num_entries);
  v(kFPointTombstones, f.num_point_tombstones);
  v(kFRangeTombstones, f.num_range_tombstones);
  v(kFMerges, f.num_merges);
  PutVarint32(dst, kFDeleteKeyMin);
  PutFixed64(dst, f.delete_key_min);
  PutVarint32(dst, kFDeleteKeyMax);
  PutFixed64(dst, f.delete_key_max);
  if (f.tombstone_delete_key_max != kMaxDeleteKey) {
    PutVarint32(dst, kFTombstoneDeleteKeyMax);
    PutFixed64(dst, f.tombstone_delete_key_max);
  }
  v(kFOldestTombstoneTime, f.oldest_tombstone_time_us);
  v(kFCreatedTime, f.created_time_us);
  v(kFRawKeyBytes, f.raw_key_bytes);
  v(kFRawValueBytes, f.raw_value_bytes);
  v(kFEstimatedInvalidated, f.estimated_invalidated);
  if (f.secondary_applied_seq != 0) v(kFSecondaryAppliedSeq, f.secondary_applied_seq);
  auto page_list = [dst](FileTag tag, const std::vector<uint32_t>& list) {
    if (list.empty()) return;
    std::string pages;
    PutVarint32(&pages, static_cast<uint32_t>(list.size()));
    uint32_t prev = 0;
    for (uint32_t p : list) {
      PutVarint32(&pages, p - prev);
      prev = p;
    }
    PutVarint32(dst, tag);
    PutLengthPrefixed(dst, pages);
  };
  page_list(kFDroppedPages, f.dropped_pages);
  if (f.patch_file != 0) {
    v(kFPatchFile, f.patch_file);
    v(kFPatchSize, f.patch_size);
    page_list(kFPatchedPages, f.patched_pages);
  }
}

// Readers binary-search the lists, so they must ascend strictly: a delta
// that wraps, or a second list of the same kind appended to the first, is
// Corruption (the encoder writes each list once).
Status DecodePageList(std::string_view in, std::vector<uint32_t>* pages) {
  if (!pages->empty()) return Status::Corruption("manifest: repeated page list");
  uint32_t n;
  if (!GetVarint32(&in, &n) || n > in.size()) return Status::Corruption("manifest: bad page list count");
  uint32_t prev = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t d;
    if (!GetVarint32(&in, &d) || (i > 0 && d == 0) || d > UINT32_MAX - prev) {
      return Status::Corruption("manifest: bad page list");
    }
    prev += d;
    pages->push_back(prev);
  }
  return in.empty() ? Status::OK() : Status::Corruption("manifest: bad page list");
}

Status DecodeFile(std::string_view in, FileMetaData* f) {
  bool have_number = false;
  while (!in.empty()) {
    uint32_t tag;
    if (!GetVarint32(&in, &tag)) return Status::Corruption("manifest: bad file field tag");
    std::string_view s;
    uint64_t x = 0;
    bool ok = true;
    switch (tag) {
      case kFSmallest:
      case kFLargest:
        ok = GetLengthPrefixed(&in, &s);
        (tag == kFSmallest ? f->smallest : f->largest).assign(s);
        break;
      case kFDroppedPages:
      case kFPatchedPages: {
        ok = GetLengthPrefixed(&in, &s);
        if (!ok) break;
        Status st = DecodePageList(s, tag == kFDroppedPages ? &f->dropped_pages : &f->patched_pages);
        if (!st.ok()) return st;
        break;
      }
      case kFDeleteKeyMin:
      case kFDeleteKeyMax:
        ok = GetFixed64(&in, &x);
        (tag == kFDeleteKeyMin ? f->delete_key_min : f->delete_key_max) = x;
        break;
      case kFTombstoneDeleteKeyMax:
        ok = GetFixed64(&in, &f->tombstone_delete_key_max);
        break;
      default: {
        ok = GetVarint64(&in, &x);
        switch (tag) {
          case kFNumber: f->number = x; have_number = true; break;
          case kFSize: f->file_size = x; break;
          case kFSmallestSeq: f->smallest_seq = x; break;
          case kFLargestSeq: f->largest_seq = x; break;
          case kFEntries: f->num_entries = x; break;
          case kFPointTombstones: f->num_point_tombstones = x; break;
          case kFRangeTombstones: f->num_range_tombstones = x; break;
          case kFMerges: f->num_merges = x; break;
          case kFOldestTombstoneTime: f->oldest_tombstone_time_us = x; break;
          case kFCreatedTime: f->created_time_us = x; break;
          case kFRawKeyBytes: f->raw_key_bytes = x; break;
          case kFRawValueBytes: f->raw_value_bytes = x; break;
          case kFEstimatedInvalidated: f->estimated_invalidated = x; break;
          case kFSecondaryAppliedSeq: f->secondary_applied_seq = x; break;
          case kFPatchFile: f->patch_file = x; break;
          case kFPatchSize: f->patch_size = x; break;
          default: return Status::Corruption("manifest: unknown file field", std::to_string(tag));
        }
      }
    }
    if (!ok) return Status::Corruption("manifest: truncated file field");
  }
  if (!have_number) return Status::Corruption("manifest: file record without a number");
  return Status::OK();
}

}  // namespace

void EncodeColumnFamilyOptions(const ColumnFamilyOptions& o, std::string* dst) {
  auto v = [dst](OptTag t, uint64_t x) {
    PutVarint32(dst, t);
    PutVarint64(dst, x);
  };
  v(kOSizeRatio, static_cast<uint64_t>(o.size_ratio));
  v(kOPageSize, o.page_size);
  v(kOPagesPerTile, static_cast<uint64_t>(o.pages_per_tile));
  v(kOBloomBits, static_cast<uint64_t>(o.bloom_bits_per_key));
  v(kOTargetFileSize, o.target_file_size);
  v(kOLevel1Bytes, o.level1_bytes);
  v(kOL0Trigger, static_cast<uint64_t>(o.level0_compaction_trigger));
  v(kOL0Stop, static_cast<uint64_t>(o.level0_stop_writes_trigger));
  v(kODeletePersistenceThreshold, o.delete_persistence_threshold_us);
  v(kOFadeFilePick, static_cast<uint64_t>(o.fade_file_pick));
  v(kOCompression, static_cast<uint64_t>(o.compression));
  if (o.bottommost_compression) v(kOBottommostCompression, static_cast<uint64_t>(*o.bottommost_compression));
  if (o.flush_compression) v(kOFlushCompression, static_cast<uint64_t>(*o.flush_compression));
  v(kODynamicLevelBytes, o.dynamic_level_bytes ? 1 : 0);
  v(kOIndexPartitionSize, o.index_partition_size);
  v(kOCompactionStyle, static_cast<uint64_t>(o.compaction_style));
  v(kOTimeOrderedMaxFiles, static_cast<uint64_t>(o.time_ordered_max_files));
}

Status DecodeColumnFamilyOptions(std::string_view in, ColumnFamilyOptions* o) {
  // A known option out of range (docs/formats.md, section 7) is damage:
  // trusted, one byte could make a flush allocate gigabytes of filter.
  auto bad = [](uint32_t tag, uint64_t x) {
    return Status::Corruption("manifest: column family option out of range",
                              std::to_string(tag) + "=" + std::to_string(x));
  };
  o->dynamic_level_bytes = false;  // a tree built before the option has static targets
  o->compaction_style = CompactionStyle::kLeveled;  // so is a tree built before this one
  while (!in.empty()) {
    uint32_t tag;
    uint64_t x;
    if (!GetVarint32(&in, &tag) || !GetVarint64(&in, &x)) {
      return Status::Corruption("manifest: bad column family options");
    }
    switch (tag) {
      case kOSizeRatio:
        if (x < 2 || x > kMaxIntOption) return bad(tag, x);
        o->size_ratio = static_cast<int>(x);
        break;
      case kOPageSize:
        if (x < kMinPageSize) return bad(tag, x);
        o->page_size = x;
        break;
      case kOPagesPerTile:
        if (x > kMaxPagesPerTile) return bad(tag, x);
        o->pages_per_tile = static_cast<int>(x);
        break;
      case kOBloomBits:
        if (x > kMaxBloomBitsPerKey) return bad(tag, x);
        o->bloom_bits_per_key = static_cast<int>(x);
        break;
      case kOTargetFileSize: o->target_file_size = x; break;
      case kOLevel1Bytes: o->level1_bytes = x; break;
      case kOL0Trigger:
        if (x > kMaxIntOption) return bad(tag, x);
        o->level0_compaction_trigger = static_cast<int>(x);
        break;
      case kOL0Stop:
        if (x > kMaxIntOption) return bad(tag, x);
        o->level0_stop_writes_trigger = static_cast<int>(x);
        break;
      case kODeletePersistenceThreshold: o->delete_persistence_threshold_us = x; break;
      case kOFadeFilePick:
        if (x > static_cast<uint64_t>(FadeFilePick::kOldestDelete)) {
          return Status::Corruption("manifest: unknown FADE file pick", std::to_string(x));
        }
        o->fade_file_pick = static_cast<FadeFilePick>(x);
        break;
      case kOCompression:
      case kOBottommostCompression:
      case kOFlushCompression: {
        if (x > 0xff || !KnownCompression(static_cast<uint8_t>(x))) {
          return Status::Corruption("manifest: unknown compression", std::to_string(x));
        }
        auto c = static_cast<Compression>(x);
        if (tag == kOCompression) o->compression = c;
        if (tag == kOBottommostCompression) o->bottommost_compression = c;
        if (tag == kOFlushCompression) o->flush_compression = c;
        break;
      }
      case kODynamicLevelBytes:
        if (x > 1) return bad(tag, x);
        o->dynamic_level_bytes = x == 1;
        break;
      case kOIndexPartitionSize: o->index_partition_size = x; break;
      case kOCompactionStyle:
        if (x > static_cast<uint64_t>(CompactionStyle::kTimeOrdered)) return bad(tag, x);
        o->compaction_style = static_cast<CompactionStyle>(x);
        break;
      case kOTimeOrderedMaxFiles:
        if (x < 2 || x > kMaxIntOption) return bad(tag, x);
        o->time_ordered_max_files = static_cast<int>(x);
        break;
      default: break;  // an option from a newer writer: the default applies
    }
  }
  return Status::OK();
}

void VersionEdit::EncodeTo(std::string* dst) const {
  if (log_number_) { PutVarint32(dst, log_names_wal_ ? kWalLogNumber : kLogNumber); PutVarint64(dst, *log_number_); }
  if (edit_number_) { PutVarint32(dst, kEditNumber); PutVarint64(dst, *edit_number_); }
  if (next_file_number_) { PutVarint32(dst, kNextFileNumber); PutVarint64(dst, *next_file_number_); }
  if (last_sequence_) { PutVarint32(dst, kLastSequence); PutVarint64(dst, *last_sequence_); }
  if (max_column_family_) { PutVarint32(dst, kMaxColumnFamily); PutVarint32(dst, *max_column_family_); }
  for (const auto& cf : added_cfs_) {
    PutVarint32(dst, kAddColumnFamily);
    PutVarint32(dst, cf.id);
    PutLengthPrefixed(dst, cf.name);
    std::string opts;
    EncodeColumnFamilyOptions(cf.options, &opts);
    PutLengthPrefixed(dst, opts);
  }
  for (uint32_t id : dropped_cfs_) {
    PutVarint32(dst, kDropColumnFamily);
    PutVarint32(dst, id);
  }
  for (const auto& d : deleted_files_) {
    PutVarint32(dst, kDeletedFile);
    PutVarint32(dst, d.cf);
    PutVarint32(dst, static_cast<uint32_t>(d.level));
    PutVarint64(dst, d.number);
  }
  for (const auto& [cf, records] : secondary_deletes_) {
    PutVarint32(dst, kSecondaryDeletes);
    PutVarint32(dst, cf);
    std::string r;
    records.EncodeTo(&r);
    PutLengthPrefixed(dst, r);
  }
  for (const auto& n : new_files_) {
    PutVarint32(dst, kNewFile);
    PutVarint32(dst, n.cf);
    PutVarint32(dst, static_cast<uint32_t>(n.level));
    std::string f;
    EncodeFile(n.meta, &f);
    PutLengthPrefixed(dst, f);
  }
}

Status VersionEdit::DecodeFrom(std::string_view in) {
  *this = VersionEdit();
  while (!in.empty()) {
    uint32_t tag;
    if (!GetVarint32(&in, &tag)) return Status::Corruption("manifest: bad edit tag");
    uint64_t x;
    uint32_t a, b;
    std::string_view s, t;
    switch (tag) {
      case kLogNumber:
      case kWalLogNumber:
        if (!GetVarint64(&in, &x)) return Status::Corruption("manifest: bad log number");
        log_number_ = x;
        log_names_wal_ = tag == kWalLogNumber;
        break;
      case kEditNumber:
        if (!GetVarint64(&in, &x)) return Status::Corruption("manifest: bad edit number");
        edit_number_ = x;
        break;
      case kNextFileNumber:
        if (!GetVarint64(&in, &x)) return Status::Corruption("manifest: bad next file number");
        next_file_number_ = x;
        break;
      case kLastSequence:
        if (!GetVarint64(&in, &x)) return Status::Corruption("manifest: bad last sequence");
        last_sequence_ = x;
        break;
      case kMaxColumnFamily:
        if (!GetVarint32(&in, &a)) return Status::Corruption("manifest: bad max column family");
        max_column_family_ = a;
        break;
      case kAddColumnFamily: {
        ColumnFamilyDescriptor cf;
        if (!GetVarint32(&in, &cf.id) || !GetLengthPrefixed(&in, &s) || !GetLengthPrefixed(&in, &t)) {
          return Status::Corruption("manifest: bad column family record");
        }
        cf.name.assign(s);
        Status st = DecodeColumnFamilyOptions(t, &cf.options);
        if (!st.ok()) return st;
        added_cfs_.push_back(std::move(cf));
        break;
      }
      case kDropColumnFamily:
        if (!GetVarint32(&in, &a)) return Status::Corruption("manifest: bad column family drop");
        dropped_cfs_.push_back(a);
        break;
      case kDeletedFile:
        if (!GetVarint32(&in, &a) || !GetVarint32(&in, &b) || !GetVarint64(&in, &x) || b >= kNumLevels) {
          return Status::Corruption("manifest: bad deleted file record");
        }
        deleted_files_.push_back({a, static_cast<int>(b), x});
        break;
      case kNewFile: {
        NewFile n;
        if (!GetVarint32(&in, &a) || !GetVarint32(&in, &b) || !GetLengthPrefixed(&in, &s) || b >= kNumLevels) {
          return Status::Corruption("manifest: bad new file record");
        }
        n.cf = a;
        n.level = static_cast<int>(b);
        Status st = DecodeFile(s, &n.meta);
        if (!st.ok()) return st;
        new_files_.push_back(std::move(n));
        break;
      }
      case kSecondaryDeletes: {
        SecondaryDeletes records;
        if (!GetVarint32(&in, &a) || !GetLengthPrefixed(&in, &s)) {
          return Status::Corruption("manifest: bad secondary delete record");
        }
        Status st = records.DecodeFrom(s);
        if (!st.ok()) return st;
        secondary_deletes_.emplace_back(a, std::move(records));
        break;
      }
      default:
        return Status::Corruption("manifest: unknown edit tag", std::to_string(tag));
    }
  }
  return Status::OK();
}

}  // namespace lethe
