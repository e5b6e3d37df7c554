// An iterator over the entries of another that a reader at a sequence needs
// when no older snapshot exists: a memtable as it was when that sequence was
// the last one written (writers may go on adding newer entries), written out
// once (a checkpoint's copy).
//
// Per sort key it passes over the versions newer than the bound, then yields
// the newest one at most the bound and, behind merge operands, the older
// ones down to the first value or tombstone; the versions below that are
// shadowed for such a reader, and it passes over them too. A key with many
// versions (state updated in place) costs a seek, not a walk over all of
// them: after a few steps over such versions it seeks past them.
//
// Forward only: SeekToLast and Prev leave it invalid with NotSupported.
#pragma once

#include <memory>

#include "format/internal_key.h"
#include "iterator/internal_iterator.h"

namespace lethe {

std::unique_ptr<InternalIterator> NewVisibleVersionsIterator(std::unique_ptr<InternalIterator> input,
                                                             SequenceNumber max_seq);

}  // namespace lethe
