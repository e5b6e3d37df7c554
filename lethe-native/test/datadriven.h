// Data-driven golden tests in the style of Pebble's: a file of commands, each
// command's expected output under "----", ended by a blank line; '#' starts
// a comment. The test replays the commands and compares the whole file;
// LETHE_UPDATE_GOLDEN=1 rewrites it (review the diff before committing).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace lethe {

// The key=value words of a command line (a bare word maps to "").
inline std::map<std::string, std::string> DataDrivenArgs(std::istringstream& in) {
  std::map<std::string, std::string> args;
  std::string word;
  while (in >> word) {
    auto eq = word.find('=');
    args[word.substr(0, eq)] = eq == std::string::npos ? "" : word.substr(eq + 1);
  }
  return args;
}

inline uint64_t DataDrivenNum(const std::map<std::string, std::string>& args, const std::string& key,
                              uint64_t dflt = 0) {
  auto it = args.find(key);
  return it == args.end() ? dflt : std::strtoull(it->second.c_str(), nullptr, 10);
}

// Replays testdata/<name> through `run` (one command line in, its output
// out; "" for commands without output) and compares or rewrites the file.
inline void RunDataDriven(const std::string& name, const std::function<std::string(const std::string&)>& run) {
  const std::string path = std::string(LETHE_TESTDATA_DIR) + "/" + name;
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing " << path;
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);

  std::string expected, actual;
  for (size_t i = 0; i < lines.size(); i++) {
    const std::string& line = lines[i];
    expected += line + "\n";
    actual += line + "\n";
    if (line.empty() || line[0] == '#' || line == "----") continue;
    std::string out = run(line);
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

}  // namespace lethe
