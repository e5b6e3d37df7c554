// Byte encodings shared by every on-disk format: little-endian fixed-width
// integers, LEB128 varints and length-prefixed strings (docs/formats.md).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace lethe {

inline void EncodeFixed32(char* dst, uint32_t v) { std::memcpy(dst, &v, 4); }
inline void EncodeFixed64(char* dst, uint64_t v) { std::memcpy(dst, &v, 8); }
inline uint32_t DecodeFixed32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t DecodeFixed64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "formats assume a little-endian host");

inline void PutFixed32(std::string* dst, uint32_t v) {
  char buf[4];
  EncodeFixed32(buf, v);
  dst->append(buf, 4);
}
inline void PutFixed64(std::string* dst, uint64_t v) {
  char buf[8];
  EncodeFixed64(buf, v);
  dst->append(buf, 8);
}

char* EncodeVarint32(char* dst, uint32_t v);
char* EncodeVarint64(char* dst, uint64_t v);
void PutVarint32(std::string* dst, uint32_t v);
void PutVarint64(std::string* dst, uint64_t v);
void PutLengthPrefixed(std::string* dst, std::string_view value);
int VarintLength(uint64_t v);

// Decoders return nullptr (or false) on malformed or truncated input; they
// never read past limit.
const char* GetVarint32PtrSlow(const char* p, const char* limit, uint32_t* v);
const char* GetVarint64PtrSlow(const char* p, const char* limit, uint64_t* v);
// Inline one-byte fast paths: most lengths in pages and memtables are < 128;
// varint32 also decodes two bytes inline (values of 128 B to 16 KiB, such as
// a table row or a window's list, are common state values).
inline const char* GetVarint32Ptr(const char* p, const char* limit, uint32_t* v) {
  if (p < limit && (static_cast<unsigned char>(*p) & 0x80) == 0) {
    *v = static_cast<unsigned char>(*p);
    return p + 1;
  }
  if (limit - p >= 2 && (static_cast<unsigned char>(p[1]) & 0x80) == 0) {
    *v = (static_cast<unsigned char>(p[0]) & 0x7fu) | (static_cast<uint32_t>(static_cast<unsigned char>(p[1])) << 7);
    return p + 2;
  }
  return GetVarint32PtrSlow(p, limit, v);
}
inline const char* GetVarint64Ptr(const char* p, const char* limit, uint64_t* v) {
  if (p < limit && (static_cast<unsigned char>(*p) & 0x80) == 0) {
    *v = static_cast<unsigned char>(*p);
    return p + 1;
  }
  return GetVarint64PtrSlow(p, limit, v);
}
// These consume from the front of *input.
bool GetVarint32(std::string_view* input, uint32_t* v);
bool GetVarint64(std::string_view* input, uint64_t* v);
bool GetFixed32(std::string_view* input, uint32_t* v);
bool GetFixed64(std::string_view* input, uint64_t* v);
bool GetLengthPrefixed(std::string_view* input, std::string_view* result);

}  // namespace lethe
