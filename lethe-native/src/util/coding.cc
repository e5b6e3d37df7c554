#include "util/coding.h"

namespace lethe {

char* EncodeVarint32(char* dst, uint32_t v) { return EncodeVarint64(dst, v); }

char* EncodeVarint64(char* dst, uint64_t v) {
  auto* p = reinterpret_cast<unsigned char*>(dst);
  while (v >= 0x80) {
    *p++ = static_cast<unsigned char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<unsigned char>(v);
  return reinterpret_cast<char*>(p);
}

void PutVarint32(std::string* dst, uint32_t v) {
  char buf[5];
  dst->append(buf, EncodeVarint32(buf, v) - buf);
}

void PutVarint64(std::string* dst, uint64_t v) {
  char buf[10];
  dst->append(buf, EncodeVarint64(buf, v) - buf);
}

void PutLengthPrefixed(std::string* dst, std::string_view value) {
  PutVarint32(dst, static_cast<uint32_t>(value.size()));
  dst->append(value.data(), value.size());
}

int VarintLength(uint64_t v) {
  int len = 1;
  while (v >= 0x80) {
    v >>= 7;
    len++;
  }
  return len;
}

const char* GetVarint64PtrSlow(const char* p, const char* limit, uint64_t* v) {
  uint64_t result = 0;
  for (uint32_t shift = 0; shift <= 63 && p < limit; shift += 7) {
    uint64_t byte = static_cast<unsigned char>(*p++);
    if (byte & 0x80) {
      result |= (byte & 0x7f) << shift;
    } else {
      result |= byte << shift;
      *v = result;
      return p;
    }
  }
  return nullptr;
}

const char* GetVarint32PtrSlow(const char* p, const char* limit, uint32_t* v) {
  uint64_t wide;
  const char* q = GetVarint64PtrSlow(p, limit, &wide);
  if (q == nullptr || wide > UINT32_MAX) return nullptr;
  *v = static_cast<uint32_t>(wide);
  return q;
}

bool GetVarint32(std::string_view* input, uint32_t* v) {
  const char* p = input->data();
  const char* limit = p + input->size();
  const char* q = GetVarint32Ptr(p, limit, v);
  if (q == nullptr) return false;
  input->remove_prefix(q - p);
  return true;
}

bool GetVarint64(std::string_view* input, uint64_t* v) {
  const char* p = input->data();
  const char* limit = p + input->size();
  const char* q = GetVarint64Ptr(p, limit, v);
  if (q == nullptr) return false;
  input->remove_prefix(q - p);
  return true;
}

bool GetFixed32(std::string_view* input, uint32_t* v) {
  if (input->size() < 4) return false;
  *v = DecodeFixed32(input->data());
  input->remove_prefix(4);
  return true;
}

bool GetFixed64(std::string_view* input, uint64_t* v) {
  if (input->size() < 8) return false;
  *v = DecodeFixed64(input->data());
  input->remove_prefix(8);
  return true;
}

bool GetLengthPrefixed(std::string_view* input, std::string_view* result) {
  uint32_t len;
  if (!GetVarint32(input, &len) || input->size() < len) return false;
  *result = input->substr(0, len);
  input->remove_prefix(len);
  return true;
}

}  // namespace lethe
