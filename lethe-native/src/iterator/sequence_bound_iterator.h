// An iterator over the entries of another whose sequence number is at most a
// bound: a memtable as it was when that sequence was the last one written,
// while writers go on adding newer entries.
#pragma once

#include <memory>

#include "format/internal_key.h"
#include "iterator/internal_iterator.h"

namespace lethe {

std::unique_ptr<InternalIterator> NewSequenceBoundIterator(std::unique_ptr<InternalIterator> input,
                                                           SequenceNumber max_seq);

}  // namespace lethe
