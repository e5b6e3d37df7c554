// DBIter: the user-facing iterator. Over a merged stream of internal entries
// it shows, per sort key, the newest state visible at the read sequence:
// hides newer versions and point tombstones, folds merge operands, and
// applies the bounds. What range tombstones delete is gone from the stream
// already (skip_covered_iterator.h).
#pragma once

#include <memory>
#include <string>

#include "format/internal_key.h"
#include "iterator/internal_iterator.h"
#include "lethe/iterator.h"
#include "lethe/options.h"
#include "format/secondary_deletes.h"

namespace lethe {

// `pin` keeps the sources of `input` (memtables, version, tombstones) and
// `secondary` (may be null: entries it hides act as point tombstones) alive.
std::unique_ptr<Iterator> NewDBIterator(std::unique_ptr<InternalIterator> input, SequenceNumber read_seq, const ReadOptions& options,
                                        std::shared_ptr<const void> pin,
                                        const SecondaryDeletes* secondary = nullptr);

}  // namespace lethe
