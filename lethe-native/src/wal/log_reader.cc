#include "wal/log_reader.h"

#include "util/coding.h"
#include "util/crc32c.h"
#include "wal/log_format.h"

namespace lethe::log {

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
  auto drop_tail = [&](uint64_t bytes_seen) {
    // Count what is left, for the caller's report.
    uint64_t rest = bytes_seen;
    std::string buf(64 * 1024, '\0');
    while (true) {
      std::string_view chunk;
      if (!file_->Read(buf.size(), &chunk, buf.data()).ok() || chunk.empty()) break;
      rest += chunk.size();
    }
    tail_dropped_bytes_ = rest;
    eof_ = true;
    return false;
  };
  if (got.size() < kHeaderSize) return drop_tail(got.size());
  uint32_t stored_crc = DecodeFixed32(header);
  uint32_t length = DecodeFixed32(header + 4);
  if (length > kMaxRecordSize || (length == 0 && stored_crc == 0)) return drop_tail(kHeaderSize);
  scratch->resize(length);
  status_ = file_->Read(length, &got, scratch->data());
  if (!status_.ok()) return false;
  if (got.size() < length) return drop_tail(kHeaderSize + got.size());
  if (verify_ && stored_crc != 0) {
    uint32_t crc = crc32c::Extend(crc32c::Value(header + 4, 4), got.data(), got.size());
    if (crc32c::Unmask(stored_crc) != crc) {
      drop_tail(kHeaderSize + got.size());
      damaged_before_end_ = tail_dropped_bytes_ > kHeaderSize + got.size();
      return false;
    }
  }
  offset_ += kHeaderSize + length;
  *record = got;
  return true;
}

}  // namespace lethe::log
