// WriteBatch encoding and decoding (format in include/lethe/write_batch.h).
#include "lethe/write_batch.h"

#include "db/write_batch_internal.h"
#include "lethe/db.h"
#include "util/coding.h"

namespace lethe {

WriteBatch::WriteBatch() { Clear(); }

void WriteBatch::Clear() {
  rep_.clear();
  rep_.resize(kHeaderSize);
}

uint32_t WriteBatch::Count() const { return DecodeFixed32(rep_.data() + 8); }

static void Bump(std::string* rep) {
  EncodeFixed32(rep->data() + 8, DecodeFixed32(rep->data() + 8) + 1);
}

void WriteBatch::Put(ColumnFamilyHandle* cf, std::string_view key, std::string_view value,
                     uint64_t delete_key) {
  Bump(&rep_);
  rep_.push_back(static_cast<char>(kPut));
  PutVarint32(&rep_, cf->id());
  PutLengthPrefixed(&rep_, key);
  PutLengthPrefixed(&rep_, value);
  PutFixed64(&rep_, delete_key);
}

void WriteBatch::Delete(ColumnFamilyHandle* cf, std::string_view key, uint64_t delete_key) {
  Bump(&rep_);
  rep_.push_back(static_cast<char>(delete_key == kMaxDeleteKey ? kDelete : kDeleteWithKey));
  PutVarint32(&rep_, cf->id());
  PutLengthPrefixed(&rep_, key);
  if (delete_key != kMaxDeleteKey) PutFixed64(&rep_, delete_key);
}

void WriteBatch::DeleteRange(ColumnFamilyHandle* cf, std::string_view begin,
                             std::string_view end) {
  Bump(&rep_);
  rep_.push_back(static_cast<char>(kDeleteRange));
  PutVarint32(&rep_, cf->id());
  PutLengthPrefixed(&rep_, begin);
  PutLengthPrefixed(&rep_, end);
}

void WriteBatch::Merge(ColumnFamilyHandle* cf, std::string_view key, std::string_view operand,
                       uint64_t delete_key) {
  Bump(&rep_);
  rep_.push_back(static_cast<char>(kMerge));
  PutVarint32(&rep_, cf->id());
  PutLengthPrefixed(&rep_, key);
  PutLengthPrefixed(&rep_, operand);
  PutFixed64(&rep_, delete_key);
}

Status WriteBatch::SetData(std::string_view data) {
  if (data.size() < kHeaderSize) return Status::InvalidArgument("write batch shorter than its header");
  rep_.assign(data.data(), data.size());
  return Status::OK();
}

Status WriteBatch::Iterate(Handler* handler) const {
  std::string_view input(rep_);
  if (input.size() < kHeaderSize) return Status::Corruption("write batch too small");
  uint32_t expected = Count();
  input.remove_prefix(kHeaderSize);
  uint32_t found = 0;
  while (!input.empty()) {
    auto kind = static_cast<uint8_t>(input[0]);
    input.remove_prefix(1);
    uint32_t cf;
    std::string_view key, value;
    uint64_t delete_key;
    if (!GetVarint32(&input, &cf)) return Status::Corruption("bad column family in write batch");
    Status s;
    switch (kind) {
      case kPut:
      case kMerge:
        if (!GetLengthPrefixed(&input, &key) || !GetLengthPrefixed(&input, &value) ||
            !GetFixed64(&input, &delete_key)) {
          return Status::Corruption("bad put or merge record in write batch");
        }
        s = kind == kPut ? handler->Put(cf, key, value, delete_key)
                         : handler->Merge(cf, key, value, delete_key);
        break;
      case kDelete:
        if (!GetLengthPrefixed(&input, &key)) return Status::Corruption("bad delete record in write batch");
        s = handler->Delete(cf, key, kMaxDeleteKey);
        break;
      case kDeleteWithKey:
        if (!GetLengthPrefixed(&input, &key) || !GetFixed64(&input, &delete_key)) {
          return Status::Corruption("bad delete record in write batch");
        }
        s = handler->Delete(cf, key, delete_key);
        break;
      case kDeleteRange:
        if (!GetLengthPrefixed(&input, &key) || !GetLengthPrefixed(&input, &value)) {
          return Status::Corruption("bad delete-range record in write batch");
        }
        s = handler->DeleteRange(cf, key, value);
        break;
      default:
        return Status::Corruption("unknown record kind in write batch");
    }
    if (!s.ok()) return s;
    found++;
  }
  if (found != expected) return Status::Corruption("write batch count does not match its records");
  return Status::OK();
}

}  // namespace lethe
