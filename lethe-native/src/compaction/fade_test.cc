// Data-driven golden tests of FADE's picker (testdata/fade_picker.txt; the
// file format: test/datadriven.h).
//
// Commands:
//   options size_ratio=T dth=µs pick=SO|SD|DD dynamic=0|1   (also clears the files;
//                                    dynamic level targets only with dynamic=1)
//   file L<level> n=<number> keys=<lo>-<hi> bytes=B entries=E pt=P rt=R b=B t=µs seq=S
//   budgets                          level budgets of the current tree
//   pick now=µs [snapshot=seq]       the compaction PickCompaction chooses
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "compaction/fade.h"
#include "datadriven.h"
#include "format/internal_key.h"

namespace lethe {
namespace {

std::string Numbers(const std::vector<FileRef>& files) {
  std::string s;
  for (const FileRef& f : files) s += (s.empty() ? "" : ",") + std::to_string(f->number);
  return "[" + s + "]";
}

const char* ReasonName(CompactionReason r) {
  switch (r) {
    case CompactionReason::kLevel0: return "level0";
    case CompactionReason::kSaturation: return "saturation";
    case CompactionReason::kManual: return "manual";
    case CompactionReason::kTrivialMove: return "move";
    case CompactionReason::kDeleteDriven: return "delete-driven";
    case CompactionReason::kPageRewrite: return "page-rewrite";
    default: return "?";
  }
}

class Replay {
 public:
  // Runs one command; returns its output ("" for commands without output).
  std::string Run(const std::string& line) {
    std::istringstream in(line);
    std::string cmd;
    in >> cmd;
    if (cmd == "options") {
      auto a = DataDrivenArgs(in);
      options_ = ColumnFamilyOptions();
      options_.size_ratio = static_cast<int>(DataDrivenNum(a, "size_ratio", 10));
      options_.level1_bytes = DataDrivenNum(a, "level1_bytes", 1000);
      options_.level0_compaction_trigger = static_cast<int>(DataDrivenNum(a, "l0_trigger", 4));
      options_.delete_persistence_threshold_us = DataDrivenNum(a, "dth");
      options_.dynamic_level_bytes = DataDrivenNum(a, "dynamic", 0) == 1;
      std::string pick = a.count("pick") ? a["pick"] : "SD";
      options_.fade_file_pick = pick == "SO"   ? FadeFilePick::kMinOverlap
                                : pick == "DD" ? FadeFilePick::kOldestDelete
                                               : FadeFilePick::kMostDeletes;
      files_ = ColumnFamilyFiles();
      return "";
    }
    if (cmd == "file") {
      std::string level;
      in >> level;
      auto a = DataDrivenArgs(in);
      auto f = std::make_shared<FileMetaData>();
      f->number = DataDrivenNum(a, "n");
      std::string keys = a["keys"];
      f->smallest = keys.substr(0, keys.find('-'));
      f->largest = keys.substr(keys.find('-') + 1);
      f->file_size = DataDrivenNum(a, "bytes", 100);
      f->num_entries = DataDrivenNum(a, "entries", 10);
      f->num_point_tombstones = DataDrivenNum(a, "pt");
      f->num_range_tombstones = DataDrivenNum(a, "rt");
      f->estimated_invalidated = DataDrivenNum(a, "b", f->num_point_tombstones);
      f->oldest_tombstone_time_us = DataDrivenNum(a, "t");
      f->largest_seq = DataDrivenNum(a, "seq", 1);
      int l = std::atoi(level.c_str() + 1);
      auto& files = files_.levels[l];
      files.push_back(f);
      if (l == 0) {
        std::sort(files.begin(), files.end(), [](const FileRef& x, const FileRef& y) { return x->largest_seq > y->largest_seq; });
      } else {
        std::sort(files.begin(), files.end(), [](const FileRef& x, const FileRef& y) { return x->smallest < y->smallest; });
      }
      return "";
    }
    if (cmd == "budgets") {
      const int last = FadeLastLevel(files_);
      const LevelTargets targets = ComputeLevelTargets(files_, options_);
      const int last_rank = FadeRank(targets, last);
      std::ostringstream out;
      out << "last level " << last << ": memtable " << FadeMemtableDeadlineUs(options_, last_rank) << "us";
      for (int l = 0; l <= last; l++) {
        if (l > 0 && l < targets.base_level && files_.levels[l].empty()) continue;
        out << ", L" << l << " " << FadeDeadlineUs(options_, FadeRank(targets, l), last_rank) << "us";
      }
      return out.str();
    }
    if (cmd == "pick") {
      auto a = DataDrivenArgs(in);
      auto plan = PickCompaction(files_, options_, CompactionPointers(), DataDrivenNum(a, "now"),
                                 DataDrivenNum(a, "snapshot", kMaxSequenceNumber));
      if (!plan) return "none";
      std::ostringstream out;
      out << ReasonName(plan->reason) << " L" << plan->level << "->L" << plan->output_level << " inputs "
          << Numbers(plan->inputs[0]) << " + " << Numbers(plan->inputs[1])
          << (plan->IsTrivialMove() ? " (trivial move)" : "");
      return out.str();
    }
    ADD_FAILURE() << "unknown command: " << line;
    return "";
  }

 private:
  ColumnFamilyOptions options_;
  ColumnFamilyFiles files_;
};

TEST(FadePickerGolden, Replay) {
  Replay replay;
  RunDataDriven("fade_picker.txt", [&](const std::string& line) { return replay.Run(line); });
}

}  // namespace
}  // namespace lethe
