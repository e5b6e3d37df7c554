#include "iterator/internal_iterator.h"

#include "format/internal_key.h"

namespace lethe {

void InternalIterator::SeekForPrev(std::string_view internal_key) {
  Seek(internal_key);
  if (!Valid()) {
    if (status().ok()) SeekToLast();
  } else if (CompareInternalKey(key(), internal_key) > 0) {
    Prev();
  }
}

}  // namespace lethe
