// Time-ordered compaction (CompactionStyle::kTimeOrdered): for column
// families whose data leaves by its delete key, such as window contents
// (each entry carries its window's end; the horizon passes whole windows).
// Pure functions of a column family's files, its options and a time.
//
// Leveled compaction merges every byte into the levels below it again and
// again, although the horizon will drop it a few windows later anyway. Here
// every file stays in level 0 as a sorted run of its own (flushes write one
// file each), newest first, and a file leaves when page drops have taken its
// last page. What is merged, always a run of neighbours in level 0's order
// (so that for every key the newer versions stay in front of the older):
//  * young files: a run of at least level0_compaction_trigger neighbours,
//    each smaller than level1_bytes (the small flushes that Flush calls and
//    memory pressure cut), into one file;
//  * at time_ordered_max_files files, the two neighbours smallest together,
//    so that data which never leaves by delete key cannot pile up;
//  * FADE (D_th set): a file whose tombstones outlived D' is merged with
//    every older file, the only way a tombstone and what it deletes can
//    leave a tree of overlapping runs; unless the horizon is above all its
//    tombstones (a window's clears carry the window's end), which leave,
//    with what they delete, when the file is rewritten alone. A file
//    invalidated only by secondary deletes not yet applied to it is
//    rewritten alone too, which applies them.
// A column family that holds files below level 0 (never written that way;
// a tree switched from leveled) is compacted as a leveled one.
#pragma once

#include <optional>

#include "compaction/compaction_picker.h"

namespace lethe {

// Whether the column family is compacted time-ordered.
bool TimeOrderedActive(const ColumnFamilyFiles& files, const ColumnFamilyOptions& options);

// The most urgent time-ordered compaction, or nothing; `oldest_snapshot` as
// for PickCompaction (a file a snapshot holds tombstones in waits).
// REQUIRES: TimeOrderedActive(files, options).
std::optional<CompactionPlan> PickTimeOrderedCompaction(const ColumnFamilyFiles& files,
                                                        const ColumnFamilyOptions& options, uint64_t now_us,
                                                        uint64_t oldest_snapshot);

// Whether writes must wait for compaction: level 0 holds
// level0_stop_writes_trigger files (time-ordered: that many beyond
// time_ordered_max_files, where the picker always has a merge to offer).
bool Level0Stalls(const ColumnFamilyFiles& files, const ColumnFamilyOptions& options);

}  // namespace lethe
