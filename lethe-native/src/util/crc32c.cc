#include "util/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <nmmintrin.h>
#endif

namespace lethe::crc32c {
namespace {

constexpr uint32_t kPoly = 0x82f63b78u;  // reflected Castagnoli polynomial

constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr auto kTable = MakeTable();

uint32_t ExtendPortable(uint32_t crc, const char* data, size_t n) {
  crc = ~crc;
  auto* p = reinterpret_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; i++) crc = kTable[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

#if defined(__x86_64__)
// One stream: the instruction's latency (3 cycles) bounds it to 8 bytes per
// 3 cycles.
__attribute__((target("sse4.2"))) uint64_t ExtendOneStream(uint64_t c, const char** data, size_t* n) {
  while (*n >= 8) {
    uint64_t word;
    std::memcpy(&word, *data, 8);
    c = _mm_crc32_u64(c, word);
    *data += 8;
    *n -= 8;
  }
  return c;
}

// Three streams at once keep the instruction's pipeline full (one per
// cycle). The streams' CRCs are joined by linearity: with R(c, d) the CRC
// register after d from register c (no pre- or post-inversion),
// R(c, A B C) = Z(Z(R(c, A)) ^ R(0, B)) ^ R(0, C), where Z = R(., |A| zero
// bytes) is linear in the register, so four byte tables give it.
class ZeroShift {
 public:
  explicit ZeroShift(size_t zero_bytes) {
    for (int b = 0; b < 4; b++) {
      for (uint32_t v = 0; v < 256; v++) table_[b][v] = Zeros(v << (8 * b), zero_bytes);
    }
  }
  uint32_t operator()(uint32_t c) const {
    return table_[0][c & 0xff] ^ table_[1][(c >> 8) & 0xff] ^ table_[2][(c >> 16) & 0xff] ^ table_[3][c >> 24];
  }

 private:
  __attribute__((target("sse4.2"))) static uint32_t Zeros(uint32_t c, size_t n) {
    uint64_t r = c;
    for (size_t i = 0; i < n; i += 8) r = _mm_crc32_u64(r, 0);
    return static_cast<uint32_t>(r);
  }
  uint32_t table_[4][256];
};

// Stream lengths: multiples of 8. A page (about 4 KiB) takes one long
// round and a few short ones.
constexpr size_t kLongStream = 1024, kShortStream = 128;

__attribute__((target("sse4.2"))) uint64_t ExtendThreeStreams(uint64_t c, const char** data, size_t* n,
                                                              size_t stream, const ZeroShift& shift) {
  while (*n >= 3 * stream) {
    uint64_t c1 = 0, c2 = 0;
    const char* p = *data;
    for (const char* end = p + stream; p < end; p += 8) {
      uint64_t w0, w1, w2;
      std::memcpy(&w0, p, 8);
      std::memcpy(&w1, p + stream, 8);
      std::memcpy(&w2, p + 2 * stream, 8);
      c = _mm_crc32_u64(c, w0);
      c1 = _mm_crc32_u64(c1, w1);
      c2 = _mm_crc32_u64(c2, w2);
    }
    c = shift(static_cast<uint32_t>(c)) ^ c1;
    c = shift(static_cast<uint32_t>(c)) ^ c2;
    *data += 3 * stream;
    *n -= 3 * stream;
  }
  return c;
}

__attribute__((target("sse4.2"))) uint32_t ExtendHardware(uint32_t crc, const char* data, size_t n) {
  static const ZeroShift long_shift(kLongStream), short_shift(kShortStream);
  uint64_t c = static_cast<uint32_t>(~crc);
  c = ExtendThreeStreams(c, &data, &n, kLongStream, long_shift);
  c = ExtendThreeStreams(c, &data, &n, kShortStream, short_shift);
  c = ExtendOneStream(c, &data, &n);
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n > 0) {
    c32 = _mm_crc32_u8(c32, static_cast<unsigned char>(*data++));
    n--;
  }
  return ~c32;
}

bool HasSse42() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  return (ecx & bit_SSE4_2) != 0;
}
#endif

using ExtendFn = uint32_t (*)(uint32_t, const char*, size_t);
ExtendFn Choose() {
#if defined(__x86_64__)
  if (HasSse42()) return ExtendHardware;
#endif
  return ExtendPortable;
}

}  // namespace

uint32_t Extend(uint32_t init_crc, const char* data, size_t n) {
  static const ExtendFn fn = Choose();
  return fn(init_crc, data, n);
}

}  // namespace lethe::crc32c
