// A merge of internal iterators into one stream in internal-key order.
// Used inside a delete tile (its pages) and across a column family's
// sources (memtables, level-0 files, levels).
#pragma once

#include <memory>
#include <vector>

#include "iterator/internal_iterator.h"

namespace lethe {

std::unique_ptr<InternalIterator> NewMergingIterator(
    std::vector<std::unique_ptr<InternalIterator>> children);

}  // namespace lethe
