// Internal keys: how the engine orders the versions of a sort key.
//
// internal key = sort key | fixed64 tag, tag = (sequence << 8) | kind.
// Internal keys order by sort key ascending, then by tag descending, so the
// newest version of a key comes first (docs/formats.md, "Internal key").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/coding.h"

namespace lethe {

using SequenceNumber = uint64_t;
// Sequence numbers use 56 bits; the low byte of a tag is the kind.
constexpr SequenceNumber kMaxSequenceNumber = (1ull << 56) - 1;

// The kind of an entry. Values are stored in files and WAL: never renumber.
enum class EntryKind : uint8_t {
  kTombstone = 0,  // point delete
  kValue = 1,
  kMerge = 2,      // a list-append operand
  kRangeTombstone = 3,  // only in WAL batches and range-tombstone blocks
};
// The kind sought by a lookup key: the largest kind, so that (key, seq,
// kSeekKind) orders before every entry of key with that sequence.
constexpr EntryKind kSeekKind = EntryKind::kMerge;

inline uint64_t PackTag(SequenceNumber seq, EntryKind kind) {
  return (seq << 8) | static_cast<uint8_t>(kind);
}
inline SequenceNumber TagSequence(uint64_t tag) { return tag >> 8; }
inline EntryKind TagKind(uint64_t tag) { return static_cast<EntryKind>(tag & 0xff); }
inline bool IsValidPointKind(uint8_t k) { return k <= static_cast<uint8_t>(EntryKind::kMerge); }

inline void AppendInternalKey(std::string* dst, std::string_view sort_key, SequenceNumber seq,
                              EntryKind kind) {
  dst->append(sort_key.data(), sort_key.size());
  PutFixed64(dst, PackTag(seq, kind));
}
inline std::string MakeInternalKey(std::string_view sort_key, SequenceNumber seq,
                                   EntryKind kind) {
  std::string r;
  r.reserve(sort_key.size() + 8);
  AppendInternalKey(&r, sort_key, seq, kind);
  return r;
}
// REQUIRES: ikey.size() >= 8.
inline std::string_view ExtractSortKey(std::string_view ikey) {
  return ikey.substr(0, ikey.size() - 8);
}
inline uint64_t ExtractTag(std::string_view ikey) {
  return DecodeFixed64(ikey.data() + ikey.size() - 8);
}

inline int CompareInternalKey(std::string_view a, std::string_view b) {
  int r = ExtractSortKey(a).compare(ExtractSortKey(b));
  if (r != 0) return r;
  uint64_t ta = ExtractTag(a), tb = ExtractTag(b);
  return ta > tb ? -1 : (ta < tb ? 1 : 0);
}

struct InternalKeyLess {
  bool operator()(std::string_view a, std::string_view b) const {
    return CompareInternalKey(a, b) < 0;
  }
};

// The smallest sort key greater than key: key followed by a zero byte.
inline std::string SortKeySuccessor(std::string_view key) {
  std::string r(key);
  r.push_back('\0');
  return r;
}

// The largest sort key a file must claim to cover keys < end. For an end
// of the form a + '\0' (the cut points of compaction output) that is exactly
// a; for any other end, end itself (one key too many, which only makes
// overlap checks conservative).
inline std::string InclusiveBoundOf(std::string_view exclusive_end) {
  if (!exclusive_end.empty() && exclusive_end.back() == '\0') {
    return std::string(exclusive_end.substr(0, exclusive_end.size() - 1));
  }
  return std::string(exclusive_end);
}

// List-append merge (Flink's list state layout: elements joined by ',').
constexpr char kMergeDelimiter = ',';
inline void AppendMergeOperand(std::string* acc, bool acc_empty, std::string_view operand) {
  if (!acc_empty) acc->push_back(kMergeDelimiter);
  acc->append(operand.data(), operand.size());
}

}  // namespace lethe
