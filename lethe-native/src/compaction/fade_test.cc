// Data-driven golden tests of FADE's picker (testdata/fade_picker.txt), in the
// style of Pebble's datadriven tests: a file of commands, each command's
// expected output under "----", ended by a blank line. The test replays the
// commands and compares the whole file; LETHE_UPDATE_GOLDEN=1 rewrites it.
//
// Commands:
//   options size_ratio=T dth=µs pick=SO|SD|DD   (also clears the files)
//   file L<level> n=<number> keys=<lo>-<hi> bytes=B entries=E pt=P rt=R b=B t=µs seq=S
//   budgets                          level budgets of the current tree
//   pick now=µs [snapshot=seq]       the compaction PickCompaction chooses
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "compaction/fade.h"
#include "db/dbformat.h"

namespace lethe {
namespace {

std::map<std::string, std::string> Args(std::istringstream& in) {
  std::map<std::string, std::string> args;
  std::string word;
  while (in >> word) {
    auto eq = word.find('=');
    args[word.substr(0, eq)] = eq == std::string::npos ? "" : word.substr(eq + 1);
  }
  return args;
}

uint64_t Num(const std::map<std::string, std::string>& args, const std::string& key, uint64_t dflt = 0) {
  auto it = args.find(key);
  return it == args.end() ? dflt : std::strtoull(it->second.c_str(), nullptr, 10);
}

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
      auto a = Args(in);
      options_ = ColumnFamilyOptions();
      options_.size_ratio = static_cast<int>(Num(a, "size_ratio", 10));
      options_.level1_bytes = Num(a, "level1_bytes", 1000);
      options_.level0_compaction_trigger = static_cast<int>(Num(a, "l0_trigger", 4));
      options_.delete_persistence_threshold_us = Num(a, "dth");
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
      auto a = Args(in);
      auto f = std::make_shared<FileMetaData>();
      f->number = Num(a, "n");
      std::string keys = a["keys"];
      f->smallest = keys.substr(0, keys.find('-'));
      f->largest = keys.substr(keys.find('-') + 1);
      f->file_size = Num(a, "bytes", 100);
      f->num_entries = Num(a, "entries", 10);
      f->num_point_tombstones = Num(a, "pt");
      f->num_range_tombstones = Num(a, "rt");
      f->estimated_invalidated = Num(a, "b", f->num_point_tombstones);
      f->oldest_tombstone_time_us = Num(a, "t");
      f->largest_seq = Num(a, "seq", 1);
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
      int last = FadeLastLevel(files_);
      std::ostringstream out;
      out << "last level " << last << ": memtable " << FadeMemtableDeadlineUs(options_, last) << "us";
      for (int l = 0; l <= last; l++) out << ", L" << l << " " << FadeDeadlineUs(options_, l, last) << "us";
      return out.str();
    }
    if (cmd == "pick") {
      auto a = Args(in);
      auto plan = PickCompaction(files_, options_, CompactionPointers(), Num(a, "now"),
                                 Num(a, "snapshot", kMaxSequenceNumber));
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
  std::string path = std::string(LETHE_TESTDATA_DIR) + "/fade_picker.txt";
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing " << path;
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);

  std::string expected, actual;
  Replay replay;
  for (size_t i = 0; i < lines.size(); i++) {
    const std::string& line = lines[i];
    expected += line + "\n";
    actual += line + "\n";
    if (line.empty() || line[0] == '#' || line == "----") continue;
    std::string out = replay.Run(line);
    if (i + 1 < lines.size() && lines[i + 1] == "----") {
      // The expected block: "----", output lines, then a blank line or the end.
      expected += "----\n";
      size_t j = i + 2;
      for (; j < lines.size() && !lines[j].empty(); j++) expected += lines[j] + "\n";
      actual += "----\n" + out + "\n";
      i = j - 1;
    } else if (!out.empty()) {
      actual += "----\n" + out + "\n\n";
    }
  }
  if (std::getenv("LETHE_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << actual;
    return;
  }
  EXPECT_EQ(expected, actual) << "regenerate with LETHE_UPDATE_GOLDEN=1 and review the diff";
}

}  // namespace
}  // namespace lethe
