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
  IndexEnds();
}

namespace {

// The 8 bytes of key after its first `skip`, big-endian, zero-padded.
uint64_t WordAfter(std::string_view key, size_t skip) {
  uint64_t w = 0;
  for (size_t i = 0; i < 8; i++) {
    w = (w << 8) | (skip + i < key.size() ? static_cast<uint8_t>(key[skip + i]) : 0);
  }
  return w;
}

}  // namespace

void FragmentedTombstones::IndexEnds() {
  if (fragments_.empty()) return;
  // The ends are sorted: the first and last share what all of them share.
  const std::string& first = fragments_.front().end;
  const std::string& last = fragments_.back().end;
  const size_t n = std::mismatch(first.begin(), first.begin() + std::min(first.size(), last.size()), last.begin())
                       .first - first.begin();
  end_prefix_ = first.substr(0, n);
  end_words_.reserve(fragments_.size());
  for (const Fragment& f : fragments_) end_words_.push_back(WordAfter(f.end, n));
}

size_t FragmentedTombstones::FindFragment(std::string_view key) const {
  // Every end starts with end_prefix_: a key that does not sorts before all
  // of them or after all of them.
  if (!key.starts_with(end_prefix_)) return key < std::string_view(end_prefix_) ? 0 : fragments_.size();
  // A larger word means a larger end (and a smaller one a smaller end):
  // whole keys are compared only among the ends whose word ties with key's.
  const uint64_t w = WordAfter(key, end_prefix_.size());
  const auto lo = std::lower_bound(end_words_.begin(), end_words_.end(), w);
  const auto hi = std::upper_bound(lo, end_words_.end(), w);
  const size_t from = static_cast<size_t>(lo - end_words_.begin()), to = static_cast<size_t>(hi - end_words_.begin());
  auto it = std::upper_bound(fragments_.begin() + from, fragments_.begin() + to, key,
                             [](std::string_view k, const Fragment& f) { return k < f.end; });
  return static_cast<size_t>(it - fragments_.begin());
}

SequenceNumber FragmentedTombstones::MaxCoveringSeq(std::string_view key, SequenceNumber read_seq,
                                                    std::string_view* end, std::string_view* start) const {
  size_t i = FindFragment(key);
  if (i == fragments_.size() || key < fragments_[i].start) return 0;
  for (SequenceNumber s : fragments_[i].seqs) {
    if (s <= read_seq) {
      if (end != nullptr) *end = fragments_[i].end;
      if (start != nullptr) *start = fragments_[i].start;
      return s;
    }
  }
  return 0;
}

void TombstoneSource::Add(std::shared_ptr<const FragmentedTombstones> set, std::string_view smallest,
                          std::string_view largest) {
  if (set == nullptr || set->empty()) return;
  parts_.push_back(Part{std::move(set), std::string(smallest), std::string(largest)});
}

size_t TombstoneSource::FindPart(std::string_view key) const {
  if (parts_.size() == 1) return 0;
  // A level's files: the first whose range ends at or after key.
  auto it = std::lower_bound(parts_.begin(), parts_.end(), key,
                             [](const Part& p, std::string_view k) { return std::string_view(p.largest) < k; });
  return static_cast<size_t>(it - parts_.begin());
}

SequenceNumber TombstoneSource::MaxCoveringSeq(std::string_view key, SequenceNumber read_seq,
                                               std::string_view* end, std::string_view* start) const {
  const size_t p = FindPart(key);
  return p == parts_.size() ? 0 : parts_[p].set->MaxCoveringSeq(key, read_seq, end, start);
}

namespace {

// The newest seq <= read_seq of fragment f if it covers key, else 0.
SequenceNumber Covering(const FragmentedTombstones::Fragment& f, std::string_view key, SequenceNumber read_seq,
                        std::string_view* end) {
  if (key < std::string_view(f.start)) return 0;
  for (SequenceNumber s : f.seqs) {
    if (s <= read_seq) {
      if (end != nullptr) *end = f.end;
      return s;
    }
  }
  return 0;
}

// Steps taken forwards before a binary search is cheaper.
constexpr size_t kWalkSteps = 8;

}  // namespace

SequenceNumber TombstoneCursor::Locate(std::string_view key, SequenceNumber read_seq, std::string_view* end) {
  const auto& parts = source_->parts_;
  if (parts.empty()) return 0;
  const bool past_part = positioned_ && part_ < parts.size() && parts.size() > 1 &&
                         std::string_view(parts[part_].largest) < key;
  if (!positioned_ || past_part) {
    part_ = source_->FindPart(key);
    fragment_ = part_ == parts.size() ? 0 : parts[part_].set->FindFragment(key);
    positioned_ = true;
  }
  before_next_ = false;
  if (part_ == parts.size()) {
    to_end_ = true;  // key is past every file's range: so is every later key
    return 0;
  }
  const auto& frags = parts[part_].set->fragments();
  size_t steps = 0;
  while (fragment_ < frags.size() && std::string_view(frags[fragment_].end) <= key) {
    if (++steps > kWalkSteps) {
      fragment_ = parts[part_].set->FindFragment(key);
      break;
    }
    fragment_++;
  }
  if (fragment_ == frags.size()) {
    // Past the part's fragments: nothing covers a later key of the part (up
    // to its largest), or any later key at all after the last part.
    if (part_ + 1 == parts.size()) {
      to_end_ = true;
    } else {
      next_start_ = parts[part_].largest;
      before_next_ = true;
    }
    return 0;
  }
  next_start_ = frags[fragment_].start;
  before_next_ = true;
  return Covering(frags[fragment_], key, read_seq, end);
}

}  // namespace lethe
