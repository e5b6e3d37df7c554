// FADE: level budgets for tombstones and the delete-driven
// compaction trigger. Pure functions of a column family's files, its options
// and a time: no I/O, no locks, no clock of their own.
//
// A tombstone written at time t must be physically gone, with everything it
// deletes, by t + D_th. It leaves the tree only when a compaction carries it
// into the last level L (the deepest holding files), where nothing older can
// remain beneath it. So levels 0..n-1 (n = max(1, L)) get budgets that grow
// with their capacity and sum to D' = D_th * (1 - kSlack): a file at
// level i < n whose oldest tombstone is older than d_0 + ... + d_i is overdue.
// d_i = T * d_{i-1} holds from level 1 on; level 0 gets as much as
// level 1, since it holds about as much before it is compacted (leveled
// engines size level 1 like level 0). With d_0 = d_1 / T instead, level 0
// would be compacted into all of level 1 T times as often as it fills: the
// delete-heavy benchmark measured 4x RocksDB's write amplification that way.
// Files of the last level holding tombstones (kept by snapshots, or moved
// there before the tree grew) are overdue after D'. A memtable holding a
// tombstone is overdue after d_0 / 2. A file whose compaction would skip the
// levels between it and the last (nothing there overlaps it), or whose
// overlapping files there are all due before its D' ends, is overdue only
// after D': the levels' budgets pay for merges into them, and it makes none
// (only while it merges at most T times its bytes in the last level).
// The slack absorbs the timer period
// (at most D_th / 20) and compaction time. Budgets follow the tree's depth:
// they are recomputed from the files at every pick.
//
// Levels count by rank: level 0 is rank 0, the base level (level 0's target,
// level_targets.h) rank 1, the next rank 2, and so on; levels above the base,
// which only hand their files down, rank 1. A tree with dynamic level targets
// thus gets the budgets of a static tree of the same depth.
#pragma once

#include <cstdint>
#include <optional>

#include "compaction/compaction_picker.h"
#include "compaction/level_targets.h"

namespace lethe {

// Share of D_th kept back for the timer period and compaction time.
constexpr double kFadeSlack = 0.1;

// The deepest level holding a file (0 if none).
int FadeLastLevel(const ColumnFamilyFiles& files);

// The rank of `level` (see above).
int FadeRank(const LevelTargets& targets, int level);

// The time (µs after a tombstone's write) by which it must have left the
// level of rank `rank` in a tree whose last level has rank `last_rank`.
// REQUIRES: FADE on.
uint64_t FadeDeadlineUs(const ColumnFamilyOptions& options, int rank, int last_rank);

// The age at which a memtable holding a tombstone must be flushed.
uint64_t FadeMemtableDeadlineUs(const ColumnFamilyOptions& options, int last_rank);

// When the file's oldest invalid entry became invalid: its oldest point or
// range tombstone, or the earliest secondary delete covering part of it
// (0: nothing invalid).
uint64_t FadeInvalidSinceUs(const ColumnFamilyFiles& files, const FileMetaData& f);

// How often an idle engine re-checks the budgets: D_th / 20 within [1 ms, 1 s].
uint64_t FadeCheckPeriodUs(const ColumnFamilyOptions& options);

// Time rules for secondary deletes. A horizon that keeps moving (TTL state,
// windows) will soon cover more of a partly covered page, a one-off one will
// not; so a moving horizon's partial page rewrites may wait, as long as
// D_th is still met by the rewrite rather than by compacting the whole file.

// How close together two horizon moves must be, and how recent the last, for
// the horizon to count as moving: a quarter of D_th, or
// kHorizonMovingWindowFadeOffUs while FADE is off.
constexpr uint64_t kHorizonMovingWindowFadeOffUs = 10'000'000;  // a typical checkpoint interval or less
uint64_t FadeHorizonMovingWindowUs(const ColumnFamilyOptions& options);
// Whether a horizon that moved at `before_us` and then at `last_us` (0: never)
// keeps moving at `now_us`.
bool FadeHorizonMoving(const ColumnFamilyOptions& options, uint64_t before_us, uint64_t last_us,
                       uint64_t now_us);
// Whether a partly covered page, invalid since `invalid_since_us` (0: not
// known), has waited long enough under a moving horizon: a quarter of D_th,
// which leaves the rest of the budget to the rewrite. Never with FADE off:
// without a bound the page waits for more coverage or for compaction.
bool FadePatchDue(const ColumnFamilyOptions& options, uint64_t invalid_since_us, uint64_t now_us);
// Within this time of the previous horizon record, a new one may be merged
// into it (keeping the earlier time, so FADE may only act early): the check
// period, or without FADE any time.
uint64_t FadeHorizonCoalesceWindowUs(const ColumnFamilyOptions& options);

// Whether the compaction of `f` (of `level`; for level 0, of every level-0
// file) would pass straight into the last level `last`: no level between
// holds a file overlapping it, and what it overlaps in the last level is at
// most T times its own bytes (as for a step between adjacent levels).
bool FadeReachesLastLevel(const ColumnFamilyFiles& files, const ColumnFamilyOptions& options, int level,
                          const FileMetaData& f, int last);

// The time (µs after its oldest invalid entry) by which `f` (of `level`) must
// be compacted: its rank's deadline, or the whole budget if its compaction
// would reach the last level in one step, now or once every overlapping file
// between, due earlier by its own budget, has moved on (it then skips the
// levels between, and with them their budgets).
uint64_t FadeFileDeadlineUs(const ColumnFamilyFiles& files, const ColumnFamilyOptions& options,
                            const LevelTargets& targets, int level, const FileMetaData& f);

// Where a compaction of level 0 for its file count writes: the last level
// if it reaches it in one step (FadeReachesLastLevel) and the oldest invalid
// entry in level 0 is at least half the whole budget old, else
// targets.level0_output. Level 0 filled in about that age, so another
// level-0 compaction would come no sooner than the budget ends: its data,
// merged into the level between, would have to go on into the last level
// alone, written once more than if it went there now.
int FadeLevel0Output(const ColumnFamilyFiles& files, const ColumnFamilyOptions& options,
                     const LevelTargets& targets, uint64_t now_us);

// The delete-driven compaction of the file whose budget expired first (ties:
// more invalidated entries, then the smaller level), or nothing. A last-level
// file is rewritten in place, unless a live snapshot (`oldest_snapshot`, or
// kMaxSequenceNumber without snapshots) is older than its newest entry: the
// tombstones would survive the rewrite for that snapshot.
std::optional<CompactionPlan> PickDeleteDriven(const ColumnFamilyFiles& files,
                                               const ColumnFamilyOptions& options,
                                               const LevelTargets& targets, uint64_t now_us,
                                               uint64_t oldest_snapshot);

// The file of `level` (>= 1) a saturation compaction takes under FADE's file
// choice (options.fade_file_pick).
FileRef PickFadeSaturationFile(const ColumnFamilyFiles& files, const ColumnFamilyOptions& options,
                               int level);

}  // namespace lethe
