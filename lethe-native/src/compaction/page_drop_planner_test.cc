// Data-driven golden tests of the page-drop planner
// (testdata/page_drop_planner.txt; the file format: test/datadriven.h).
//
// Commands:
//   reset                                  no file, no records, no snapshot, FADE off
//   options dth=µs                         D_th (0: FADE off)
//   file smallest_seq=S largest_seq=L applied=A   the file (drops its tiles)
//   tile keys=<lo>-<hi> [older]            a tile; "older": older files hold its keys
//   page n=<index> dk=<min>-<max> [bytes=B]   a remaining page of the last tile
//   horizon h=<h> seq=<seq> t=µs           a horizon record (appended)
//   range dk=<lo>-<hi> seq=<seq> t=µs      a delete-key range record (appended)
//   snapshot seq=S                         a live snapshot
//   plan now=µs [moving]                   PlanPageDrops; "moving": the horizon keeps moving
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "compaction/page_drop_planner.h"
#include "datadriven.h"

namespace lethe {
namespace {

std::pair<uint64_t, uint64_t> Span(const std::string& s) {
  const auto dash = s.find('-');
  return {std::stoull(s.substr(0, dash)), std::stoull(s.substr(dash + 1))};
}

std::string List(const std::vector<uint32_t>& pages) {
  std::string s;
  for (uint32_t p : pages) s += (s.empty() ? "" : ",") + std::to_string(p);
  return "[" + s + "]";
}

class Replay {
 public:
  std::string Run(const std::string& line) {
    std::istringstream in(line);
    std::string cmd;
    in >> cmd;
    auto a = DataDrivenArgs(in);
    if (cmd == "reset") {
      *this = Replay();
    } else if (cmd == "options") {
      options_.delete_persistence_threshold_us = DataDrivenNum(a, "dth");
    } else if (cmd == "file") {
      file_ = FileMetaData();
      file_.smallest_seq = DataDrivenNum(a, "smallest_seq");
      file_.largest_seq = DataDrivenNum(a, "largest_seq");
      file_.secondary_applied_seq = DataDrivenNum(a, "applied");
      tiles_.clear();
      tile_keys_.clear();
      older_.clear();
    } else if (cmd == "tile") {
      const std::string keys = a["keys"];
      tile_keys_.push_back({keys.substr(0, keys.find('-')), keys.substr(keys.find('-') + 1)});
      tiles_.push_back(PlannedTile{});
      if (a.count("older")) older_.insert(tile_keys_.back().first);
    } else if (cmd == "page") {
      const auto [lo, hi] = Span(a["dk"]);
      tiles_.back().pages.push_back(
          PlannedPage{static_cast<uint32_t>(DataDrivenNum(a, "n")), lo, hi, DataDrivenNum(a, "bytes", 100)});
    } else if (cmd == "horizon") {
      records_.horizons.push_back(HorizonRecord{DataDrivenNum(a, "seq"), DataDrivenNum(a, "h"), DataDrivenNum(a, "t")});
    } else if (cmd == "range") {
      const auto [lo, hi] = Span(a["dk"]);
      records_.ranges.push_back(DeleteKeyRangeRecord{DataDrivenNum(a, "seq"), lo, hi, DataDrivenNum(a, "t")});
    } else if (cmd == "snapshot") {
      snapshots_.insert(DataDrivenNum(a, "seq"));
    } else if (cmd == "plan") {
      return Plan(DataDrivenNum(a, "now"), a.count("moving") > 0);
    } else {
      ADD_FAILURE() << "unknown command: " << line;
    }
    return "";
  }

 private:
  std::string Plan(uint64_t now, bool moving) {
    PageDropInput in;
    in.file = &file_;
    in.tiles = tiles_;
    for (size_t i = 0; i < in.tiles.size(); i++) {
      in.tiles[i].smallest = tile_keys_[i].first;
      in.tiles[i].largest = tile_keys_[i].second;
    }
    in.records = &records_;
    in.snapshots = &snapshots_;
    in.options = options_;
    in.now_us = now;
    in.horizon_moving = moving;
    in.older_versions = [this](std::string_view lo, std::string_view) { return older_.count(std::string(lo)) > 0; };
    const PageDropPlan plan = PlanPageDrops(in);
    std::ostringstream out;
    out << "drop " << List(plan.drop) << " (" << plan.drop_bytes << " bytes), rewrite " << List(plan.rewrite)
        << "\npartly covered " << plan.partly_covered << ", applies all " << (plan.applies_all ? "yes" : "no")
        << ", deferred " << (plan.deferred ? "yes" : "no");
    return out.str();
  }

  ColumnFamilyOptions options_ = [] {
    ColumnFamilyOptions o;
    o.delete_persistence_threshold_us = 0;
    return o;
  }();
  FileMetaData file_;
  std::vector<PlannedTile> tiles_;
  std::vector<std::pair<std::string, std::string>> tile_keys_;  // kept apart: tiles_ hold views into it
  std::set<std::string> older_;  // smallest keys of tiles whose keys older files hold
  SecondaryDeletes records_;
  std::multiset<SequenceNumber> snapshots_;
};

TEST(PageDropPlannerGolden, Replay) {
  Replay replay;
  RunDataDriven("page_drop_planner.txt", [&](const std::string& line) { return replay.Run(line); });
}

}  // namespace
}  // namespace lethe
