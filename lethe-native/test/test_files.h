// File records for tests of pure functions over a column family's files
// (compaction picking, level targets): a number, a key range, a size.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "version/file_metadata.h"

namespace lethe {

inline FileRef TestFile(uint64_t number, std::string smallest, std::string largest, uint64_t bytes,
                        uint64_t largest_seq = 1) {
  auto f = std::make_shared<FileMetaData>();
  f->number = number;
  f->smallest = std::move(smallest);
  f->largest = std::move(largest);
  f->file_size = bytes;
  f->largest_seq = largest_seq;
  return f;
}

}  // namespace lethe
