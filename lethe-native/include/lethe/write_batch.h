// WriteBatch: a group of updates applied atomically, possibly across column
// families. The encoded form is a public format (docs/formats.md, "Write
// batch"): the Java API builds it in Java and hands it over in one call.
//
// Encoding (all integers little-endian):
//   header:  sequence fixed64 | count fixed32
//   record:  kind byte | column family varint32 | fields by kind:
//     kPut    (1): key lenprefixed | value lenprefixed | delete_key fixed64
//     kDelete (0): key lenprefixed
//     kMerge  (2): key lenprefixed | operand lenprefixed | delete_key fixed64
//     kDeleteRange (3): begin lenprefixed | end lenprefixed
//     kDeleteWithKey (4): key lenprefixed | delete_key fixed64 (a point delete
//                          that a secondary delete may remove, see db.h)
//   lenprefixed = varint32 length followed by the bytes.
//
// Thread-safety: none; a batch is built by one thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "lethe/options.h"
#include "lethe/status.h"

namespace lethe {

class ColumnFamilyHandle;

class WriteBatch {
 public:
  // Record kinds in the encoded batch; values are part of the format.
  enum Kind : uint8_t { kDelete = 0, kPut = 1, kMerge = 2, kDeleteRange = 3, kDeleteWithKey = 4 };
  static constexpr size_t kHeaderSize = 12;

  WriteBatch();

  void Put(ColumnFamilyHandle* cf, std::string_view key, std::string_view value,
           uint64_t delete_key = kMaxDeleteKey);
  // A point delete. With a delete key below kMaxDeleteKey it obeys the delete-key
  // contract of db.h (at least the delete key of every version it deletes).
  void Delete(ColumnFamilyHandle* cf, std::string_view key, uint64_t delete_key = kMaxDeleteKey);
  // Deletes every key k with begin <= k < end.
  void DeleteRange(ColumnFamilyHandle* cf, std::string_view begin, std::string_view end);
  void Merge(ColumnFamilyHandle* cf, std::string_view key, std::string_view operand,
             uint64_t delete_key = kMaxDeleteKey);

  void Clear();
  uint32_t Count() const;
  size_t ByteSize() const { return rep_.size(); }
  const std::string& Data() const { return rep_; }

  // Replaces the contents with an encoded batch (from Data() or from Java).
  // The encoding is validated when the batch is written.
  Status SetData(std::string_view data);

  // Receives the records of a batch in order.
  class Handler {
   public:
    virtual ~Handler() = default;
    virtual Status Put(uint32_t cf, std::string_view key, std::string_view value,
                       uint64_t delete_key) = 0;
    virtual Status Delete(uint32_t cf, std::string_view key, uint64_t delete_key) = 0;
    virtual Status DeleteRange(uint32_t cf, std::string_view begin, std::string_view end) = 0;
    virtual Status Merge(uint32_t cf, std::string_view key, std::string_view operand,
                         uint64_t delete_key) = 0;
  };
  // Decodes the batch and calls the handler per record. Corruption if the
  // encoding is malformed or the count does not match.
  Status Iterate(Handler* handler) const;

 private:
  friend class WriteBatchInternal;
  std::string rep_;
};

}  // namespace lethe
