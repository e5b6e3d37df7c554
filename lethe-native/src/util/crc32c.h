// CRC32C (Castagnoli), the checksum of every page, WAL record and manifest
// record. Uses the SSE4.2 instruction when the CPU has it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lethe::crc32c {

// The CRC of concat(A, data) given init_crc = CRC(A).
uint32_t Extend(uint32_t init_crc, const char* data, size_t n);
inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }

// A CRC stored next to the data it covers is masked, so that computing the
// CRC of a string containing embedded CRCs stays well distributed.
constexpr uint32_t kMaskDelta = 0xa282ead8ul;
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return ((rot >> 17) | (rot << 15));
}

}  // namespace lethe::crc32c
