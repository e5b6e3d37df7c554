#include "format/range_tombstone.h"

#include <algorithm>
#include <set>

namespace lethe {

FragmentedTombstones::FragmentedTombstones(const std::vector<RangeTombstone>& tombstones) {
  // Sweep over the distinct boundaries; between two consecutive boundaries
  // the set of covering tombstones is constant.
  std::vector<std::string_view> bounds;
  bounds.reserve(tombstones.size() * 2);
  for (const auto& t : tombstones) {
    if (t.start >= t.end) continue;
    bounds.push_back(t.start);
    bounds.push_back(t.end);
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  if (bounds.size() < 2) return;

  std::vector<const RangeTombstone*> by_start;
  for (const auto& t : tombstones) {
    if (t.start < t.end) by_start.push_back(&t);
  }
  std::sort(by_start.begin(), by_start.end(),
            [](const RangeTombstone* a, const RangeTombstone* b) { return a->start < b->start; });
  // Active tombstones, keyed by end so expired ones leave from the front.
  std::multiset<std::pair<std::string_view, SequenceNumber>> active;
  size_t next = 0;
  for (size_t i = 0; i + 1 < bounds.size(); i++) {
    std::string_view lo = bounds[i], hi = bounds[i + 1];
    while (!active.empty() && active.begin()->first <= lo) active.erase(active.begin());
    while (next < by_start.size() && by_start[next]->start <= lo) {
      active.emplace(by_start[next]->end, by_start[next]->seq);
      next++;
    }
    if (active.empty()) continue;
    Fragment f{std::string(lo), std::string(hi), {}};
    for (const auto& [end, seq] : active) f.seqs.push_back(seq);
    std::sort(f.seqs.begin(), f.seqs.end(), std::greater<>());
    f.seqs.erase(std::unique(f.seqs.begin(), f.seqs.end()), f.seqs.end());
    fragments_.push_back(std::move(f));
  }
}

size_t FragmentedTombstones::FindFragment(std::string_view key) const {
  auto it = std::upper_bound(fragments_.begin(), fragments_.end(), key,
                             [](std::string_view k, const Fragment& f) { return k < f.end; });
  return static_cast<size_t>(it - fragments_.begin());
}

SequenceNumber FragmentedTombstones::MaxCoveringSeq(std::string_view key,
                                                    SequenceNumber read_seq) const {
  size_t i = FindFragment(key);
  if (i == fragments_.size() || key < fragments_[i].start) return 0;
  for (SequenceNumber s : fragments_[i].seqs) {
    if (s <= read_seq) return s;
  }
  return 0;
}

}  // namespace lethe
