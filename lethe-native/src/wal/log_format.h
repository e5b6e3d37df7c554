// The record log: the framing shared by the write-ahead log and the manifest
// (docs/formats.md, "Record log").
//
//   record = masked_crc32c fixed32 | length fixed32 | payload (length bytes)
//
// The CRC covers the length field and the payload. When a log is written
// without checksums (Options::wal_checksums = false) the CRC field holds 0
// and is not verified; the manifest always carries checksums.
#pragma once

#include <cstddef>

namespace lethe::log {

constexpr size_t kHeaderSize = 8;
// A record longer than this is treated as damage (a torn length field).
constexpr size_t kMaxRecordSize = 1u << 30;

}  // namespace lethe::log
