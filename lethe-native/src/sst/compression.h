// Page compression: one data page in, one independently decodable block
// out (LZ4 block format or a ZSTD frame, without framing of our own: the
// page's index entry holds its codec and its size before compression).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "lethe/options.h"
#include "lethe/status.h"

namespace lethe {

// A compressed page never stands for more than this many times its stored
// size: the reader allocates the decoded size from the index, so the bound
// keeps a damaged index from asking for gigabytes. Pages that compress
// better are stored uncompressed (real state rarely comes near it).
constexpr size_t kMaxCompressionRatio = 255;

// Whether `type` is a codec this build knows (a byte read from a file).
bool KnownCompression(uint8_t type);

// Compresses `raw` with `type` into *out (a buffer the caller may reuse).
// Returns the codec actually used: kNone, with *out unspecified, when the
// page would not shrink by at least an eighth or would exceed
// kMaxCompressionRatio.
Compression CompressPage(Compression type, std::string_view raw, std::string* out);

// Decodes `stored` (compressed with `type`) into dst, which holds exactly
// raw_size bytes. Corruption when the codec fails or the size differs.
Status UncompressPage(Compression type, std::string_view stored, char* dst, size_t raw_size);

const char* CompressionName(Compression type);

}  // namespace lethe
