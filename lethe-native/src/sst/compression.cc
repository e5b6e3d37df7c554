#include "sst/compression.h"

#include <lz4.h>
#include <zstd.h>

#include <cstdint>
#include <memory>

namespace lethe {
namespace {

// Not zstd's default of 3: on pages of 4 KiB, level 1 compressed text-like
// records, timer rows, counters and random bytes 1.1-2.2x as fast to within
// 1 % of level 3's size (smaller on some); reading is the same speed.
constexpr int kZstdLevel = 1;

bool Worthwhile(size_t raw, size_t compressed) {
  return compressed <= raw - raw / 8 && raw <= compressed * kMaxCompressionRatio;
}

bool CompressLz4(std::string_view raw, std::string* out) {
  if (raw.size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) return false;
  out->resize(static_cast<size_t>(LZ4_compressBound(static_cast<int>(raw.size()))));
  int n = LZ4_compress_default(raw.data(), out->data(), static_cast<int>(raw.size()),
                               static_cast<int>(out->size()));
  if (n <= 0) return false;
  out->resize(static_cast<size_t>(n));
  return true;
}

bool CompressZstd(std::string_view raw, std::string* out) {
  // One context per thread: creating one per page would cost more than the page.
  thread_local std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> ctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
  if (ctx == nullptr) return false;
  out->resize(ZSTD_compressBound(raw.size()));
  size_t n = ZSTD_compressCCtx(ctx.get(), out->data(), out->size(), raw.data(), raw.size(), kZstdLevel);
  if (ZSTD_isError(n)) return false;
  out->resize(n);
  return true;
}

}  // namespace

bool KnownCompression(uint8_t type) { return type <= static_cast<uint8_t>(Compression::kZSTD); }

const char* CompressionName(Compression type) {
  switch (type) {
    case Compression::kNone: return "none";
    case Compression::kLZ4: return "lz4";
    case Compression::kZSTD: return "zstd";
  }
  return "unknown";
}

Compression CompressPage(Compression type, std::string_view raw, std::string* out) {
  bool ok = false;
  if (type == Compression::kLZ4) ok = CompressLz4(raw, out);
  if (type == Compression::kZSTD) ok = CompressZstd(raw, out);
  return ok && Worthwhile(raw.size(), out->size()) ? type : Compression::kNone;
}

Status UncompressPage(Compression type, std::string_view stored, char* dst, size_t raw_size) {
  if (type == Compression::kLZ4) {
    if (stored.size() > static_cast<size_t>(INT32_MAX) || raw_size > static_cast<size_t>(INT32_MAX)) {
      return Status::Corruption("lz4 page too large");
    }
    int n = LZ4_decompress_safe(stored.data(), dst, static_cast<int>(stored.size()), static_cast<int>(raw_size));
    if (n < 0 || static_cast<size_t>(n) != raw_size) return Status::Corruption("bad lz4 page");
    return Status::OK();
  }
  if (type == Compression::kZSTD) {
    thread_local std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
    if (ctx == nullptr) return Status::IOError("zstd: out of memory");
    size_t n = ZSTD_decompressDCtx(ctx.get(), dst, raw_size, stored.data(), stored.size());
    if (ZSTD_isError(n) || n != raw_size) return Status::Corruption("bad zstd page");
    return Status::OK();
  }
  return Status::Corruption("unknown page compression " + std::to_string(static_cast<int>(type)));
}

}  // namespace lethe
