// FADE (paper §4.1): level budgets for tombstones and the delete-driven
// compaction trigger. Pure functions of a column family's files, its options
// and a time: no I/O, no locks, no clock of their own.
//
// A tombstone written at time t must be physically gone, with everything it
// deletes, by t + D_th. It leaves the tree only when a compaction carries it
// into the last level L (the deepest holding files), where nothing older can
// remain beneath it. So levels 0..n-1 (n = max(1, L)) get budgets that grow
// with their capacity and sum to D' = D_th * (1 - kSlack) (§4.1.2): a file at
// level i < n whose oldest tombstone is older than d_0 + ... + d_i is overdue.
// The paper's d_i = T * d_{i-1} holds from level 1 on; level 0 gets as much as
// level 1, since it holds about as much before it is compacted (leveled
// engines size level 1 like level 0). With d_0 = d_1 / T instead, level 0
// would be compacted into all of level 1 T times as often as it fills: the
// delete-heavy benchmark measured 4x RocksDB's write amplification that way.
// Files of the last level holding tombstones (kept by snapshots, or moved
// there before the tree grew) are overdue after D'. A memtable holding a
// tombstone is overdue after d_0 / 2. The slack absorbs the timer period
// (at most D_th / 20) and compaction time. Budgets follow the tree's depth:
// they are recomputed from the files at every pick.
#pragma once

#include <cstdint>
#include <optional>

#include "compaction/compaction_picker.h"

namespace lethe {

// Share of D_th kept back for the timer period and compaction time.
constexpr double kFadeSlack = 0.1;

// The deepest level holding a file (0 if none).
int FadeLastLevel(const ColumnFamilyFiles& files);

// The time (µs after a tombstone's write) by which it must have left `level`
// of a tree whose last level is `last_level`. REQUIRES: FADE on.
uint64_t FadeDeadlineUs(const ColumnFamilyOptions& options, int level, int last_level);

// The age at which a memtable holding a tombstone must be flushed.
uint64_t FadeMemtableDeadlineUs(const ColumnFamilyOptions& options, int last_level);

// How often an idle engine re-checks the budgets: D_th / 20 within [1 ms, 1 s].
// When the file's oldest invalid entry became invalid: its oldest point or
// range tombstone, or the earliest secondary delete covering part of it
// (0: nothing invalid).
uint64_t FadeInvalidSinceUs(const ColumnFamilyFiles& files, const FileMetaData& f);

uint64_t FadeCheckPeriodUs(const ColumnFamilyOptions& options);

// The delete-driven compaction of the file whose budget expired first (ties:
// more invalidated entries, then the smaller level), or nothing. A last-level
// file is rewritten in place, unless a live snapshot (`oldest_snapshot`, or
// kMaxSequenceNumber without snapshots) is older than its newest entry: the
// tombstones would survive the rewrite for that snapshot.
std::optional<CompactionPlan> PickDeleteDriven(const ColumnFamilyFiles& files,
                                               const ColumnFamilyOptions& options, uint64_t now_us,
                                               uint64_t oldest_snapshot);

// The file of `level` (>= 1) a saturation compaction takes under FADE's file
// choice (options.fade_file_pick).
FileRef PickFadeSaturationFile(const ColumnFamilyFiles& files, const ColumnFamilyOptions& options,
                               int level);

}  // namespace lethe
