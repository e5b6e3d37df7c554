// Data page: entries of one page sorted by internal key, with prefix
// compression and restart points (docs/formats.md, "Data page").
//
//   entry   = shared varint32 | unshared varint32 | value_size varint32 |
//             key suffix | value | delete_key + 1 as varint64
//   trailer = restart offsets (fixed32 each) | restart count fixed32
//
// The delete key is stored plus one (wrapping), so kMaxDeleteKey ("never")
// costs one byte. Call order for the builder: (Add* Finish Reset)*.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "iterator/internal_iterator.h"
#include "util/recycled_buffer.h"

namespace lethe {

class PageBuilder {
 public:
  // Restart every 16 entries: the LevelDB default, a good balance between
  // prefix compression and binary-search granularity.
  static constexpr int kRestartInterval = 16;

  PageBuilder() { Reset(); }
  void Add(std::string_view ikey, std::string_view value, uint64_t delete_key);
  // The bytes Add writes for an entry after `prev_key` (none at a restart),
  // its restart offset included.
  static size_t EntrySize(std::string_view prev_key, bool restart, std::string_view ikey, size_t value_size,
                          uint64_t delete_key);
  // Returns the finished page contents (valid until Reset).
  std::string_view Finish();
  void Reset();
  size_t CurrentSize() const { return buf_.size() + restarts_.size() * 4 + 4; }
  bool empty() const { return count_ == 0; }

 private:
  std::string buf_;
  std::vector<uint32_t> restarts_;
  std::string last_key_;
  int counter_ = 0;
  uint32_t count_ = 0;
};

// A page's bytes (without the checksum trailer), shared by the page cache
// and iterators. A plain buffer: a std::string would zero-fill before read.
struct Page {
  RecycledBuffer buf;
  size_t size = 0;
  std::string_view data() const { return {buf.data(), size}; }
};
using PageRef = std::shared_ptr<const Page>;

// Starts fetching a page's restart points (up to 8, spread over the page)
// into the CPU cache, where a search reads first: for a batch of lookups,
// so that their pages' memory waits overlap. Reads only the page's trailer.
void PrefetchRestarts(const Page& page);

// Iterates one page. Malformed contents end iteration with Corruption.
class PageIterator final : public InternalIterator {
 public:
  explicit PageIterator(PageRef page);
  bool Valid() const override { return valid_; }
  void SeekToFirst() override;
  void SeekToLast() override;
  void Seek(std::string_view internal_key) override;
  void Next() override;
  void Prev() override;
  std::string_view key() const override { return key_; }
  std::string_view value() const override { return value_; }
  uint64_t delete_key() const override { return delete_key_; }
  Status status() const override { return status_; }

  // Seek's two halves, for a batch of lookups that fetches each page's block
  // before searching any: to the start of the run of entries between two
  // restart points that holds target's place, then on to that place.
  void SeekBlock(std::string_view target);
  void SeekInBlock(std::string_view target);
  // Starts fetching into the CPU cache the bytes from the current entry to
  // the next restart point (at most 2 KiB).
  void PrefetchBlock() const;

 private:
  bool ParseAt(uint32_t offset);  // decodes the entry at offset (key_ must hold the prefix)
  void SeekToRestart(uint32_t index);
  void Fail();
  uint32_t RestartOffset(uint32_t index) const;

  PageRef page_;
  const char* data_ = nullptr;
  uint32_t restarts_offset_ = 0;  // where the restart array starts
  uint32_t num_restarts_ = 0;
  uint32_t current_ = 0;  // offset of the current entry
  uint32_t next_ = 0;     // offset of the entry after the current one
  bool valid_ = false;
  std::string key_;
  std::string_view value_;
  uint64_t delete_key_ = 0;
  Status status_;
};

}  // namespace lethe
