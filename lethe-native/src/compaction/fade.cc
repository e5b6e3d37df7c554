#include "compaction/fade.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace lethe {

int FadeLastLevel(const ColumnFamilyFiles& files) {
  return std::max(0, files.DeepestNonEmptyLevel());
}

// A rank's share of the budget follows its capacity: level 0 holds about as
// much as the base level before it is compacted, rank r >= 1 holds T^(r-1)
// times the base level.
static double FadeWeight(int rank, double t) { return rank == 0 ? 1 : std::pow(t, rank - 1); }

int FadeRank(const LevelTargets& targets, int level) {
  return level == 0 ? 0 : std::max(1, level - targets.base_level + 1);
}

uint64_t FadeDeadlineUs(const ColumnFamilyOptions& options, int rank, int last_rank) {
  const double budget = static_cast<double>(options.delete_persistence_threshold_us) * (1 - kFadeSlack);
  const int n = std::max(1, last_rank);  // ranks 0..n-1 share the budget
  if (rank >= n) return static_cast<uint64_t>(budget);
  const double t = std::max(2, options.size_ratio);
  double total = 0, upto = 0;
  for (int r = 0; r < n; r++) {
    total += FadeWeight(r, t);
    if (r <= rank) upto += FadeWeight(r, t);
  }
  return std::max<uint64_t>(1, static_cast<uint64_t>(budget * upto / total));
}

uint64_t FadeMemtableDeadlineUs(const ColumnFamilyOptions& options, int last_rank) {
  return std::max<uint64_t>(1, FadeDeadlineUs(options, 0, last_rank) / 2);
}

uint64_t FadeCheckPeriodUs(const ColumnFamilyOptions& options) {
  return std::clamp<uint64_t>(options.delete_persistence_threshold_us / 20, 1000, 1000000);
}

uint64_t FadeHorizonMovingWindowUs(const ColumnFamilyOptions& options) {
  const uint64_t dth = options.delete_persistence_threshold_us;
  return dth == 0 ? kHorizonMovingWindowFadeOffUs : dth / 4;
}

bool FadeHorizonMoving(const ColumnFamilyOptions& options, uint64_t before_us, uint64_t last_us, uint64_t now_us) {
  const uint64_t window = FadeHorizonMovingWindowUs(options);
  return before_us != 0 && last_us - before_us <= window && now_us - std::min(now_us, last_us) <= window;
}

bool FadePatchDue(const ColumnFamilyOptions& options, uint64_t invalid_since_us, uint64_t now_us) {
  const uint64_t dth = options.delete_persistence_threshold_us;
  return dth != 0 && invalid_since_us != 0 && now_us >= invalid_since_us + dth / 4;
}

uint64_t FadeHorizonCoalesceWindowUs(const ColumnFamilyOptions& options) {
  return options.delete_persistence_threshold_us == 0 ? UINT64_MAX : FadeCheckPeriodUs(options);
}

uint64_t FadeInvalidSinceUs(const ColumnFamilyFiles& files, const FileMetaData& f) {
  uint64_t t = f.num_point_tombstones + f.num_range_tombstones > 0 ? f.oldest_tombstone_time_us : 0;
  if (!files.secondary.empty()) {
    uint64_t s = files.secondary.InvalidationTime(f.secondary_applied_seq, f.smallest_seq, f.delete_key_min,
                                                  f.delete_key_max);
    if (s != 0 && (t == 0 || s < t)) t = s;
  }
  return t;
}

// The bytes of the files of `level` overlapping [lo, hi].
static uint64_t BytesOverlapping(const ColumnFamilyFiles& files, int level, const std::string& lo,
                                 const std::string& hi) {
  uint64_t bytes = 0;
  for (const FileRef& o : files.Overlapping(level, lo, hi)) bytes += o->file_size;
  return bytes;
}

static uint64_t OverlapBytes(const ColumnFamilyFiles& files, int level, const FileMetaData& f) {
  return level + 1 < kNumLevels ? BytesOverlapping(files, level + 1, f.smallest, f.largest) : 0;
}

// What the compaction of `f` (of `level`) takes: its key range (all of level 0
// for a level-0 file, as level 0 moves down together) and its bytes.
struct CompactionSpan {
  std::string lo, hi;
  uint64_t bytes = 0;
};

static CompactionSpan SpanOf(const ColumnFamilyFiles& files, int level, const FileMetaData& f) {
  CompactionSpan span;
  if (level == 0) {
    CompactionKeyRange(files.levels[0], &span.lo, &span.hi);
    span.bytes = files.LevelBytes(0);
  } else {
    span.lo = f.smallest;
    span.hi = f.largest;
    span.bytes = f.file_size;
  }
  return span;
}

// Calls visit(level, file) for each file of the levels strictly between
// `level` and `last` overlapping `span`, until it returns false.
template <class Visit>
static bool ForEachBetween(const ColumnFamilyFiles& files, int level, const CompactionSpan& span, int last,
                           Visit visit) {
  for (int l = level + 1; l < last; l++) {
    for (const FileRef& g : files.Overlapping(l, span.lo, span.hi)) {
      if (!visit(l, *g)) return false;
    }
  }
  return true;
}

// Whether a compaction of `span` straight into `last` merges at most T times
// its bytes there (`arriving`: bytes still to come into that range), as one
// step between adjacent levels does: a skip must not turn into a rewrite of
// a large last level at once.
static bool DirectMergeFits(const ColumnFamilyFiles& files, const ColumnFamilyOptions& options,
                            const CompactionSpan& span, int last, uint64_t arriving = 0) {
  const uint64_t merged = arriving + BytesOverlapping(files, last, span.lo, span.hi);
  return merged <= static_cast<uint64_t>(std::max(2, options.size_ratio)) * std::max<uint64_t>(1, span.bytes);
}

bool FadeReachesLastLevel(const ColumnFamilyFiles& files, const ColumnFamilyOptions& options, int level,
                          const FileMetaData& f, int last) {
  if (level >= last) return false;
  const CompactionSpan span = SpanOf(files, level, f);
  return DirectMergeFits(files, options, span, last) &&
         ForEachBetween(files, level, span, last, [](int, const FileMetaData&) { return false; });
}

// The whole budget: the deadline of the last level's rank.
static uint64_t WholeBudgetUs(const ColumnFamilyOptions& options, int last_rank) {
  return FadeDeadlineUs(options, last_rank, last_rank);
}

uint64_t FadeFileDeadlineUs(const ColumnFamilyFiles& files, const ColumnFamilyOptions& options,
                            const LevelTargets& targets, int level, const FileMetaData& f) {
  const int last = FadeLastLevel(files);
  const int last_rank = FadeRank(targets, last);
  const uint64_t whole = WholeBudgetUs(options, last_rank);
  if (level >= last) return whole;
  const uint64_t own = FadeDeadlineUs(options, FadeRank(targets, level), last_rank);
  const uint64_t since = FadeInvalidSinceUs(files, f);
  if (since == 0) return own;
  // Every overlapping file between is due, by its own budget, before f's
  // whole budget ends: those levels will be clear, and f can wait for them
  // and then go straight into the last level.
  const CompactionSpan span = SpanOf(files, level, f);
  bool all_due = true;
  uint64_t between_bytes = 0;
  ForEachBetween(files, level, span, last, [&](int l, const FileMetaData& g) {
    const uint64_t g_since = FadeInvalidSinceUs(files, g);
    const int g_rank = FadeReachesLastLevel(files, options, l, g, last) ? last_rank : FadeRank(targets, l);
    all_due = g_since != 0 && g_since + FadeDeadlineUs(options, g_rank, last_rank) < since + whole;
    between_bytes += g.file_size;
    return all_due;
  });
  return all_due && DirectMergeFits(files, options, span, last, between_bytes) ? whole : own;
}

int FadeLevel0Output(const ColumnFamilyFiles& files, const ColumnFamilyOptions& options,
                     const LevelTargets& targets, uint64_t now_us) {
  const auto& level0 = files.levels[0];
  const int last = FadeLastLevel(files);
  if (options.delete_persistence_threshold_us == 0 || level0.empty() ||
      !FadeReachesLastLevel(files, options, 0, *level0.front(), last)) {
    return targets.level0_output;
  }
  uint64_t since = 0;
  for (const FileRef& f : level0) {
    const uint64_t t = FadeInvalidSinceUs(files, *f);
    if (t != 0 && (since == 0 || t < since)) since = t;
  }
  const uint64_t budget = WholeBudgetUs(options, FadeRank(targets, last));
  const bool due_before_next = since != 0 && now_us >= since && 2 * (now_us - since) >= budget;
  return due_before_next ? last : targets.level0_output;
}

std::optional<CompactionPlan> PickDeleteDriven(const ColumnFamilyFiles& files,
                                               const ColumnFamilyOptions& options,
                                               const LevelTargets& targets, uint64_t now_us,
                                               uint64_t oldest_snapshot) {
  if (options.delete_persistence_threshold_us == 0) return std::nullopt;
  const int last = FadeLastLevel(files);
  const int last_rank = FadeRank(targets, last);
  // Best so far: (expiry time, -invalidated, level); smaller is more urgent.
  std::tuple<uint64_t, int64_t, int> best{UINT64_MAX, 0, 0};
  FileRef best_file;
  for (int level = 0; level <= last; level++) {
    for (const FileRef& f : files.levels[level]) {
      const uint64_t since = FadeInvalidSinceUs(files, *f);
      if (since == 0) continue;
      // Its own rank's deadline is the earliest it may have; the rest is dearer.
      if (since + FadeDeadlineUs(options, FadeRank(targets, level), last_rank) > now_us) continue;
      const uint64_t expiry = since + FadeFileDeadlineUs(files, options, targets, level, *f);
      if (expiry > now_us) continue;
      // A rewrite in place could not drop what a snapshot still needs.
      if (level == last && level > 0 && oldest_snapshot < f->largest_seq) continue;
      auto key = std::make_tuple(expiry, -static_cast<int64_t>(f->estimated_invalidated), level);
      if (best_file == nullptr || key < best) {
        best = key;
        best_file = f;
      }
    }
  }
  if (best_file == nullptr) return std::nullopt;
  const int level = std::get<2>(best);
  const bool direct = FadeReachesLastLevel(files, options, level, *best_file, last);
  CompactionPlan plan;
  if (level == 0) {
    // Level-0 files overlap: they move down together to keep newer above older.
    plan = PlanLevelCompaction(files, 0, direct ? last : targets.level0_output, CompactionReason::kDeleteDriven);
  } else {
    plan.level = level;
    plan.output_level = level == last ? level : direct ? last : level + 1;
    plan.reason = CompactionReason::kDeleteDriven;
    plan.inputs[0].push_back(best_file);
    if (plan.output_level != level) {
      plan.inputs[1] = files.Overlapping(plan.output_level, best_file->smallest, best_file->largest);
    }
  }
  // Moved into the last level unchanged, the tombstones would stay; rewrite.
  plan.allow_trivial_move = plan.output_level < last;
  plan.score = 1e9 + static_cast<double>(now_us - std::get<0>(best));
  return plan;
}

FileRef PickFadeSaturationFile(const ColumnFamilyFiles& files, const ColumnFamilyOptions& options,
                               int level) {
  const auto& candidates = files.levels[level];
  FileRef min_overlap;
  double min_ratio = 0;
  for (const FileRef& f : candidates) {
    double ratio = static_cast<double>(OverlapBytes(files, level, *f)) /
                   static_cast<double>(std::max<uint64_t>(1, f->file_size));
    if (min_overlap == nullptr || ratio < min_ratio) {
      min_overlap = f;
      min_ratio = ratio;
    }
  }
  FileRef chosen;
  uint64_t chosen_since = 0;
  for (const FileRef& f : candidates) {
    const uint64_t since = FadeInvalidSinceUs(files, *f);
    if (since == 0) continue;
    switch (options.fade_file_pick) {
      case FadeFilePick::kMostDeletes:
        if (chosen == nullptr || f->estimated_invalidated > chosen->estimated_invalidated ||
            (f->estimated_invalidated == chosen->estimated_invalidated && since < chosen_since)) {
          chosen = f;
          chosen_since = since;
        }
        break;
      case FadeFilePick::kOldestDelete:
        if (chosen == nullptr || since < chosen_since) {
          chosen = f;
          chosen_since = since;
        }
        break;
      case FadeFilePick::kMinOverlap:
        break;
    }
  }
  // Without deletes in the level (or under SO), the cheapest file to merge.
  return chosen != nullptr ? chosen : min_overlap;
}

}  // namespace lethe
