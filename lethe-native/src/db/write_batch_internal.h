// Engine-side access to a WriteBatch's header (sequence number) and rep.
#pragma once

#include "db/dbformat.h"
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

}  // namespace lethe
