// The in-memory model of a database that the randomized tests check the
// engine against: one std::map per column family, with the semantics of
// every kind of delete (point, sort-key range, delete-key range, horizon).
//
// Thread-compatible: a plain value.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lethe/options.h"

namespace lethe::model {

// A key's state: its value and delete key as reads must return them, and
// the entries that make it up (a base value, then merge operands), each
// with its delete key, so that secondary deletes can remove single entries.
struct Entry {
  std::string first;   // the value
  uint64_t second = 0; // the newest entry's delete key
  std::vector<std::pair<std::string, uint64_t>> parts;

  void Recompute() {
    first.clear();
    for (size_t i = 0; i < parts.size(); i++) {
      if (i > 0) first += ",";
      first += parts[i].first;
    }
    second = parts.empty() ? 0 : parts.back().second;
  }
};
using Family = std::map<std::string, Entry>;

// The model: what every column family must contain.
//
// Secondary deletes: an entry under one acts as a point delete at its own
// position, so the key keeps only the entries after the newest removed one
// (none: the key is gone). A horizon also removes later writes below it.
struct Model {
  std::map<std::string, Family> families;
  std::map<std::string, uint64_t> horizons;

  void Put(const std::string& cf, const std::string& k, const std::string& v, uint64_t dk) {
    if (dk < horizons[cf]) return Delete(cf, k);
    Entry& e = families[cf][k];
    e.parts = {{v, dk}};
    e.Recompute();
  }
  void Delete(const std::string& cf, const std::string& k) { families[cf].erase(k); }
  void DeleteRange(const std::string& cf, const std::string& b, const std::string& e) {
    Family& f = families[cf];
    f.erase(f.lower_bound(b), f.lower_bound(e));
  }
  void Merge(const std::string& cf, const std::string& k, const std::string& op, uint64_t dk) {
    if (dk < horizons[cf]) return Delete(cf, k);
    Entry& e = families[cf][k];
    e.parts.emplace_back(op, dk);
    e.Recompute();
  }
  template <typename Pred>
  void RemoveEntries(const std::string& cf, Pred removed) {
    Family& f = families[cf];
    for (auto it = f.begin(); it != f.end();) {
      auto& parts = it->second.parts;
      size_t keep_from = 0;
      for (size_t i = 0; i < parts.size(); i++) {
        if (parts[i].second != kMaxDeleteKey && removed(parts[i].second)) keep_from = i + 1;
      }
      parts.erase(parts.begin(), parts.begin() + static_cast<long>(keep_from));
      if (parts.empty()) {
        it = f.erase(it);
      } else {
        it->second.Recompute();
        ++it;
      }
    }
  }
  void AdvanceHorizon(const std::string& cf, uint64_t h) {
    if (h <= horizons[cf]) return;
    horizons[cf] = h;
    RemoveEntries(cf, [h](uint64_t dk) { return dk < h; });
  }
  void DeleteByDeleteKey(const std::string& cf, uint64_t lo, uint64_t hi) {
    RemoveEntries(cf, [lo, hi](uint64_t dk) { return lo <= dk && dk <= hi; });
  }
};

}  // namespace lethe::model
