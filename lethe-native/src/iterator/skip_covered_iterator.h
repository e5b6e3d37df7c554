// SkipCoveredIterator: one source of a read without the entries that range
// tombstones delete, so the layers above never look at a range tombstone.
// - Newer sources' tombstones: passed over with one seek per covered stretch
//   instead of entry by entry. A tombstone visible at the read sequence in a
//   newer source is newer than every entry of the keys it covers in an older
//   source (the LSM invariant get_context.h relies on), so all of them are
//   deleted and none needs to be looked at.
// - The source's own tombstones: an entry is passed over when one that covers
//   it is newer than it (the same source may hold newer entries in the range).
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "format/internal_key.h"
#include "format/range_tombstone.h"
#include "iterator/internal_iterator.h"

namespace lethe {

// `newer`: the tombstones of the sources newer than `source`'s; `own`: the
// source's own (may be null); all kept alive by the caller. Returns source
// itself when none has any. `skips` (may be null) counts the seeks.
std::unique_ptr<InternalIterator> NewSkipCoveredIterator(std::unique_ptr<InternalIterator> source,
                                                         std::vector<const TombstoneSource*> newer,
                                                         const TombstoneSource* own, SequenceNumber read_seq,
                                                         std::atomic<uint64_t>* skips);

}  // namespace lethe
