#include "sst/page.h"

#include <algorithm>

#include "format/internal_key.h"
#include "util/coding.h"
#include "util/shared_prefix.h"

namespace lethe {

void PageBuilder::Reset() {
  buf_.clear();
  restarts_.assign(1, 0);
  last_key_.clear();
  counter_ = 0;
  count_ = 0;
}

size_t PageBuilder::EntrySize(std::string_view prev_key, bool restart, std::string_view ikey, size_t value_size,
                              uint64_t delete_key) {
  const size_t shared = restart ? 0 : SharedPrefixLength(prev_key, ikey);
  const size_t unshared = ikey.size() - shared;
  return VarintLength(shared) + VarintLength(unshared) + VarintLength(value_size) + unshared + value_size +
         VarintLength(delete_key + 1) + (restart ? 4 : 0);
}

void PageBuilder::Add(std::string_view ikey, std::string_view value, uint64_t delete_key) {
  size_t shared = 0;
  if (counter_ < kRestartInterval) {
    shared = SharedPrefixLength(last_key_, ikey);
  } else {
    restarts_.push_back(static_cast<uint32_t>(buf_.size()));
    counter_ = 0;
  }
  PutVarint32(&buf_, static_cast<uint32_t>(shared));
  PutVarint32(&buf_, static_cast<uint32_t>(ikey.size() - shared));
  PutVarint32(&buf_, static_cast<uint32_t>(value.size()));
  buf_.append(ikey.data() + shared, ikey.size() - shared);
  buf_.append(value.data(), value.size());
  PutVarint64(&buf_, delete_key + 1);
  last_key_.assign(ikey.data(), ikey.size());
  counter_++;
  count_++;
}

std::string_view PageBuilder::Finish() {
  for (uint32_t r : restarts_) PutFixed32(&buf_, r);
  PutFixed32(&buf_, static_cast<uint32_t>(restarts_.size()));
  return buf_;
}

void PrefetchRestarts(const Page& page) {
  const std::string_view d = page.data();
  if (d.size() < 4) return;
  const uint32_t n = DecodeFixed32(d.data() + d.size() - 4);
  if (n == 0 || n > (d.size() - 4) / 4) return;
  const char* restarts = d.data() + d.size() - 4 - size_t{4} * n;
  constexpr uint32_t kMost = 8;
  const uint32_t fetched = std::min(n, kMost);
  for (uint32_t j = 0; j < fetched; j++) {
    const uint32_t offset = DecodeFixed32(restarts + size_t{4} * (uint64_t{j} * n / fetched));
    if (offset < d.size()) __builtin_prefetch(d.data() + offset);
  }
}

PageIterator::PageIterator(PageRef page) : page_(std::move(page)) {
  std::string_view d = page_->data();
  data_ = d.data();
  if (d.size() < 4) {
    Fail();
    return;
  }
  num_restarts_ = DecodeFixed32(data_ + d.size() - 4);
  if (num_restarts_ == 0 || num_restarts_ > (d.size() - 4) / 4) {
    Fail();
    return;
  }
  restarts_offset_ = static_cast<uint32_t>(d.size() - 4 - num_restarts_ * 4);
}

void PageIterator::Fail() {
  valid_ = false;
  num_restarts_ = 0;
  restarts_offset_ = 0;
  if (status_.ok()) status_ = Status::Corruption("malformed data page");
}

uint32_t PageIterator::RestartOffset(uint32_t index) const {
  return DecodeFixed32(data_ + restarts_offset_ + index * 4);
}

bool PageIterator::ParseAt(uint32_t offset) {
  if (offset >= restarts_offset_) {
    valid_ = false;
    return false;
  }
  const char* p = data_ + offset;
  const char* limit = data_ + restarts_offset_;
  uint32_t shared, unshared, vsize;
  if ((p = GetVarint32Ptr(p, limit, &shared)) == nullptr ||
      (p = GetVarint32Ptr(p, limit, &unshared)) == nullptr ||
      (p = GetVarint32Ptr(p, limit, &vsize)) == nullptr ||
      static_cast<size_t>(limit - p) < static_cast<size_t>(unshared) + vsize ||
      shared > key_.size()) {
    Fail();
    return false;
  }
  key_.resize(shared);
  key_.append(p, unshared);
  p += unshared;
  value_ = std::string_view(p, vsize);
  p += vsize;
  uint64_t dk1;
  if ((p = GetVarint64Ptr(p, limit, &dk1)) == nullptr || key_.size() < 8) {
    Fail();
    return false;
  }
  delete_key_ = dk1 - 1;
  current_ = offset;
  next_ = static_cast<uint32_t>(p - data_);
  valid_ = true;
  return true;
}

void PageIterator::SeekToRestart(uint32_t index) {
  key_.clear();
  ParseAt(RestartOffset(index));
}

void PageIterator::SeekToFirst() {
  if (num_restarts_ == 0) return Fail();
  SeekToRestart(0);
}

void PageIterator::SeekToLast() {
  if (num_restarts_ == 0) return Fail();
  SeekToRestart(num_restarts_ - 1);
  while (valid_ && next_ < restarts_offset_) ParseAt(next_);
}

void PageIterator::Next() {
  if (valid_) ParseAt(next_);
}

// Entries are prefix-compressed, so a step back decodes forwards from the
// last restart point before the current entry.
void PageIterator::Prev() {
  if (!valid_) return;
  const uint32_t original = current_;
  uint32_t r = num_restarts_;
  while (r > 0 && RestartOffset(r - 1) >= original) r--;
  if (r == 0) {
    valid_ = false;
    return;
  }
  SeekToRestart(r - 1);
  while (valid_ && next_ < original) ParseAt(next_);
}

void PageIterator::Seek(std::string_view target) {
  SeekBlock(target);
  SeekInBlock(target);
}

void PageIterator::SeekBlock(std::string_view target) {
  if (num_restarts_ == 0) return Fail();
  // Binary search for the last restart point whose key is < target.
  uint32_t lo = 0, hi = num_restarts_ - 1;
  while (lo < hi) {
    uint32_t mid = (lo + hi + 1) / 2;
    key_.clear();
    if (!ParseAt(RestartOffset(mid))) return;
    if (CompareInternalKey(key_, target) < 0) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  SeekToRestart(lo);
}

void PageIterator::SeekInBlock(std::string_view target) {
  while (valid_ && CompareInternalKey(key_, target) < 0) ParseAt(next_);
}

void PageIterator::PrefetchBlock() const {
  if (!valid_) return;
  constexpr uint32_t kLine = 64, kMostBytes = 2048;
  const uint32_t end = std::min(restarts_offset_, current_ + kMostBytes);
  for (uint32_t at = (current_ / kLine + 1) * kLine; at < end; at += kLine) __builtin_prefetch(data_ + at);
}

}  // namespace lethe
