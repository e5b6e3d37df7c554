#include "wal/log_writer.h"

#include "util/coding.h"
#include "util/crc32c.h"
#include "wal/log_format.h"

namespace lethe::log {

Status Writer::AddRecord(std::string_view payload) {
  if (payload.size() > kMaxRecordSize) return Status::InvalidArgument("record too large for log");
  if (!error_.ok()) return error_;
  char header[kHeaderSize];
  EncodeFixed32(header + 4, static_cast<uint32_t>(payload.size()));
  uint32_t crc = 0;
  if (checksums_) {
    crc = crc32c::Value(header + 4, 4);
    crc = crc32c::Mask(crc32c::Extend(crc, payload.data(), payload.size()));
  }
  EncodeFixed32(header, crc);
  Status s = file_->Append(std::string_view(header, kHeaderSize));
  if (s.ok()) s = file_->Append(payload);
  if (s.ok()) s = file_->Flush();
  bytes_written_ += kHeaderSize + payload.size();
  if (!s.ok()) error_ = s;
  return s;
}

}  // namespace lethe::log
