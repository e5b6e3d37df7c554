// Helpers shared by the libFuzzer targets in this folder: a check that
// aborts (so libFuzzer keeps the input as a crash), and the seed-writing
// mode every target has.
//
// Seeds are generated, not committed: `<target> --write_seeds=DIR` writes
// small valid inputs built with the engine's own writers to DIR and exits
// (libFuzzer ignores flags that start with "--"). scripts/fuzz.sh does this
// before every run, so the seeds follow format changes.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

// A property the target checks beyond "no crash": a violation aborts.
#define FUZZ_CHECK(cond)                                                            \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                 \
    }                                                                               \
  } while (0)

// Defines the target's LLVMFuzzerInitialize: the --write_seeds mode below.
#define LETHE_FUZZ_SEEDS(make)                                          \
  extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {        \
    lethe::fuzz::MaybeWriteSeeds(*argc, *argv, make);                   \
    return 0;                                                           \
  }

namespace lethe::fuzz {

// If the command line holds --write_seeds=DIR, writes make()'s inputs to
// DIR/seed-<i> and exits the process.
inline void MaybeWriteSeeds(int argc, char** argv,
                            const std::function<std::vector<std::string>()>& make) {
  constexpr std::string_view kFlag = "--write_seeds=";
  for (int i = 1; i < argc; i++) {
    std::string_view arg(argv[i]);
    if (!arg.starts_with(kFlag)) continue;
    std::filesystem::path dir(arg.substr(kFlag.size()));
    std::filesystem::create_directories(dir);
    std::vector<std::string> seeds = make();
    for (size_t s = 0; s < seeds.size(); s++) {
      std::ofstream out(dir / ("seed-" + std::to_string(s)), std::ios::binary);
      out.write(seeds[s].data(), static_cast<std::streamsize>(seeds[s].size()));
      if (!out) {
        std::fprintf(stderr, "cannot write seeds to %s\n", dir.c_str());
        std::exit(1);
      }
    }
    std::printf("wrote %zu seeds to %s\n", seeds.size(), dir.c_str());
    std::exit(0);
  }
}

// Joins records into one input that FuzzedDataProvider's
// ConsumeRandomLengthString splits again: a backslash is doubled, and a
// backslash followed by another byte ends a record.
inline std::string JoinRecords(const std::vector<std::string>& records) {
  std::string out;
  for (size_t i = 0; i < records.size(); i++) {
    if (i > 0) out.append("\\\n");
    for (char c : records[i]) {
      out.push_back(c);
      if (c == '\\') out.push_back('\\');
    }
  }
  return out;
}

}  // namespace lethe::fuzz
