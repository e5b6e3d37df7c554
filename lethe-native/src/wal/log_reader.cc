#include "wal/log_reader.h"

#include <algorithm>
#include <cstring>

#include "util/coding.h"
#include "util/crc32c.h"
#include "wal/log_format.h"

namespace lethe::log {

bool Reader::ValidRecordAfterStart(std::string_view bytes) {
  // Checksumming every candidate costs up to (tail size)^2 for a long tail
  // of plausible lengths. Past this budget (well under a second), the tail
  // is too long and too odd for a torn append: report it as damage.
  constexpr uint64_t kScanBudgetBytes = 1ull << 30;
  uint64_t hashed = 0;
  for (size_t q = 1; q + kHeaderSize <= bytes.size(); q++) {
    const uint32_t stored_crc = DecodeFixed32(bytes.data() + q);
    const uint32_t length = DecodeFixed32(bytes.data() + q + 4);
    if (stored_crc == 0 || length > bytes.size() - q - kHeaderSize) continue;
    hashed += length;
    if (hashed > kScanBudgetBytes) return true;
    const uint32_t crc = crc32c::Extend(crc32c::Value(bytes.data() + q + 4, 4), bytes.data() + q + kHeaderSize, length);
    if (crc32c::Unmask(stored_crc) == crc) return true;
  }
  return false;
}

bool Reader::ReadRecord(std::string_view* record, std::string* scratch) {
  if (eof_) return false;
  char header[kHeaderSize];
  std::string_view got;
  status_ = file_->Read(kHeaderSize, &got, header);
  if (!status_.ok()) return false;
  if (got.empty()) {
    eof_ = true;
    return false;
  }
  // A bad record ends the log. `seen` holds the bytes of it already read
  // (from its first byte on); the rest of the file is read too, to count it
  // and to tell a torn append from damage: a record that passes its
  // checksum after the bad one means the log went on, so the bad record was
  // not the last append before a crash.
  auto drop_tail = [&](std::string_view seen) {
    std::string rest(seen);
    std::string buf(64 * 1024, '\0');
    while (true) {
      std::string_view chunk;
      if (!file_->Read(buf.size(), &chunk, buf.data()).ok() || chunk.empty()) break;
      rest.append(chunk);
    }
    tail_dropped_bytes_ = rest.size();
    damaged_before_end_ = verify_ && ValidRecordAfterStart(rest);
    eof_ = true;
    return false;
  };
  if (got.size() < kHeaderSize) return drop_tail(got);
  uint32_t stored_crc = DecodeFixed32(header);
  uint32_t length = DecodeFixed32(header + 4);
  if (length > kMaxRecordSize || (length == 0 && stored_crc == 0)) return drop_tail(std::string_view(header, kHeaderSize));
  // Read in chunks: a damaged length must not allocate more than the file
  // holds (an 8-byte file could otherwise ask for 1 GiB).
  constexpr size_t kChunkBytes = 1 << 20;
  scratch->clear();
  while (scratch->size() < length) {
    const size_t old = scratch->size(), want = std::min<size_t>(kChunkBytes, length - old);
    scratch->resize(old + want);
    std::string_view part;
    status_ = file_->Read(want, &part, scratch->data() + old);
    if (!status_.ok()) return false;
    if (part.data() != scratch->data() + old) std::memmove(scratch->data() + old, part.data(), part.size());
    scratch->resize(old + part.size());
    if (part.size() < want) break;
  }
  got = *scratch;
  if (got.size() < length) return drop_tail(std::string(header, kHeaderSize).append(got));
  if (verify_ && stored_crc != 0) {
    uint32_t crc = crc32c::Extend(crc32c::Value(header + 4, 4), got.data(), got.size());
    if (crc32c::Unmask(stored_crc) != crc) {
      whole_record_failed_ = true;
      return drop_tail(std::string(header, kHeaderSize).append(got));
    }
  }
  offset_ += kHeaderSize + length;
  *record = got;
  return true;
}

}  // namespace lethe::log
