// Engine-side access to a WriteBatch's header (sequence number) and rep.
#pragma once

#include "format/internal_key.h"
#include "lethe/write_batch.h"
#include "util/coding.h"

namespace lethe {

class WriteBatchInternal {
 public:
  static SequenceNumber Sequence(const WriteBatch& b) { return DecodeFixed64(b.rep_.data()); }
  static void SetSequence(WriteBatch* b, SequenceNumber seq) { EncodeFixed64(b->rep_.data(), seq); }
  static std::string_view Contents(const WriteBatch& b) { return b.rep_; }
  static void SetContents(WriteBatch* b, std::string_view contents) { b->rep_.assign(contents); }
};

// A WAL record that is not a write batch: "manifest edit N is durable",
// written after each manifest edit to the WAL then current. Recovery
// compares it with the manifest it read: a manifest that ends before edit N
// lost edits after they were made durable (cut short or damaged), which
// would otherwise read like a crash during its last append
// (docs/formats.md, "WAL"). Layout: a batch header with sequence 0 and
// count 0 (no write batch has either), then the marker byte and the edit
// number as a varint64.
constexpr uint8_t kManifestEditMarker = 0xE1;

inline std::string EncodeManifestEditMarker(uint64_t edit_number) {
  std::string r(WriteBatch::kHeaderSize, '\0');
  r.push_back(static_cast<char>(kManifestEditMarker));
  PutVarint64(&r, edit_number);
  return r;
}

// Whether `record` is a marker (a WAL record with count 0); if so, decodes
// it and returns false in *ok when it is malformed.
inline bool DecodeManifestEditMarker(std::string_view record, uint64_t* edit_number, bool* ok) {
  if (record.size() < WriteBatch::kHeaderSize || DecodeFixed32(record.data() + 8) != 0) return false;
  std::string_view body = record.substr(WriteBatch::kHeaderSize);
  *ok = DecodeFixed64(record.data()) == 0 && !body.empty() &&
        static_cast<uint8_t>(body[0]) == kManifestEditMarker;
  if (*ok) {
    body.remove_prefix(1);
    *ok = GetVarint64(&body, edit_number) && body.empty();
  }
  return true;
}

}  // namespace lethe
