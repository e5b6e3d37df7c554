#include "compaction/page_drop_planner.h"

#include <algorithm>

#include "compaction/fade.h"

namespace lethe {

namespace {

// How the records cover one page (rules 1 and 2 of the header).
struct Cover {
  const PlannedPage* page;
  bool by_horizon = false;
  bool by_range = false;
};

Cover CoverOf(const PageDropInput& in, const PlannedPage& p) {
  const SecondaryDeletes& sd = *in.records;
  const FileMetaData& f = *in.file;
  Cover c{&p};
  if (p.delete_key_max < sd.horizon()) {
    c.by_horizon = !AnySnapshotIn(*in.snapshots, f.smallest_seq, sd.HorizonHiddenFrom(p.delete_key_max));
  }
  for (const DeleteKeyRangeRecord& r : sd.ranges) {
    if (f.largest_seq < r.seq && r.lo <= p.delete_key_min && p.delete_key_max <= r.hi &&
        !AnySnapshotIn(*in.snapshots, f.smallest_seq, r.seq)) {
      c.by_range = true;
      break;
    }
  }
  return c;
}

// Whether a record the file has not applied yet reaches into the page.
bool Touched(const PageDropInput& in, const PlannedPage& p) {
  const SecondaryDeletes& sd = *in.records;
  const FileMetaData& f = *in.file;
  const bool horizon_unapplied = !sd.horizons.empty() && sd.horizons.back().seq > f.secondary_applied_seq;
  if (horizon_unapplied && p.delete_key_min < sd.horizon()) return true;
  for (const DeleteKeyRangeRecord& r : sd.ranges) {
    if (r.seq > f.secondary_applied_seq && f.smallest_seq < r.seq && r.lo <= p.delete_key_max &&
        p.delete_key_min <= r.hi) {
      return true;
    }
  }
  return false;
}

// The share of a page's delete-key span [min, max] the records not yet
// applied to the file cover, assuming delete keys spread evenly over it.
double CoveredShare(const PageDropInput& in, const PlannedPage& p) {
  const SecondaryDeletes& sd = *in.records;
  const FileMetaData& f = *in.file;
  const long double width = static_cast<long double>(p.delete_key_max - p.delete_key_min) + 1;
  auto share = [&](uint64_t lo, uint64_t hi) {  // of [lo, hi] within [min, max]
    lo = std::max(lo, p.delete_key_min);
    hi = std::min(hi, p.delete_key_max);
    return lo > hi ? 0.0 : static_cast<double>((static_cast<long double>(hi - lo) + 1) / width);
  };
  double best = 0;
  if (sd.horizon() > 0) best = share(0, sd.horizon() - 1);
  for (const DeleteKeyRangeRecord& r : sd.ranges) {
    if (r.seq > f.secondary_applied_seq && f.smallest_seq < r.seq) best = std::max(best, share(r.lo, r.hi));
  }
  return best;
}

// Rule 3: whether to rewrite a tile's single partly covered page now.
bool WorthRewriting(const PageDropInput& in, const PlannedPage& p) {
  if (!in.horizon_moving || CoveredShare(in, p) >= kPatchShare) return true;
  const FileMetaData& f = *in.file;
  const uint64_t since = in.records->InvalidationTime(f.secondary_applied_seq, f.smallest_seq, p.delete_key_min,
                                                      p.delete_key_max);
  return FadePatchDue(in.options, since, in.now_us);
}

void PlanTile(const PageDropInput& in, const PlannedTile& tile, PageDropPlan* plan) {
  std::vector<Cover> covers;
  bool covered = !tile.pages.empty();
  for (const PlannedPage& p : tile.pages) {
    covers.push_back(CoverOf(in, p));
    covered = covered && (covers.back().by_horizon || covers.back().by_range);
  }
  const bool tile_drop = covered && !in.older_versions(tile.smallest, tile.largest);
  std::vector<const PlannedPage*> partly;
  for (const Cover& c : covers) {
    if (c.by_horizon || (c.by_range && tile_drop)) {
      plan->drop.push_back(c.page->index);
      plan->drop_bytes += c.page->bytes;
    } else if (Touched(in, *c.page)) {
      partly.push_back(c.page);
    }
  }
  plan->partly_covered += partly.size();
  if (partly.size() == 1 && WorthRewriting(in, *partly[0])) {
    plan->rewrite.push_back(partly[0]->index);
  } else if (!partly.empty()) {
    plan->applies_all = false;
    plan->deferred = plan->deferred || partly.size() == 1;
  }
}

// Rule 4: the rewrites take every page the file itself still holds.
bool RewritesWholeFile(const PageDropInput& in, const PageDropPlan& plan) {
  if (plan.rewrite.empty() || in.file->num_range_tombstones != 0) return false;
  for (const PlannedTile& tile : in.tiles) {
    for (const PlannedPage& p : tile.pages) {
      if (p.patched || std::binary_search(plan.drop.begin(), plan.drop.end(), p.index)) continue;
      if (!std::binary_search(plan.rewrite.begin(), plan.rewrite.end(), p.index)) return false;
    }
  }
  return true;
}

}  // namespace

bool RecordsMayTouch(const SecondaryDeletes& records, const FileMetaData& f) {
  if (f.delete_key_min < records.horizon()) return true;
  for (const DeleteKeyRangeRecord& r : records.ranges) {
    if (f.smallest_seq < r.seq && r.lo <= f.delete_key_max && f.delete_key_min <= r.hi) return true;
  }
  return false;
}

PageDropPlan PlanPageDrops(const PageDropInput& in) {
  PageDropPlan plan;
  for (const PlannedTile& tile : in.tiles) PlanTile(in, tile, &plan);
  std::sort(plan.drop.begin(), plan.drop.end());
  std::sort(plan.rewrite.begin(), plan.rewrite.end());
  plan.rewrite_file = RewritesWholeFile(in, plan);
  return plan;
}

}  // namespace lethe
