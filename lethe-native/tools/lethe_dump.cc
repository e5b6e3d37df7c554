// lethe_dump: prints the annotated layout of Lethe table files.
//   lethe_dump [--no-entries] FILE.sst...
#include <cstdio>
#include <cstring>
#include <string>

#include "lethe/env.h"
#include "sst/layout_printer.h"

int main(int argc, char** argv) {
  bool entries = true;
  int files = 0;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "--no-entries") == 0) {
      entries = false;
      continue;
    }
    std::string out;
    lethe::Status s = lethe::PrintTableLayout(lethe::Env::Default(), argv[i], entries, &out);
    std::printf("== %s\n%s", argv[i], out.c_str());
    if (!s.ok()) {
      std::fprintf(stderr, "lethe_dump: %s: %s\n", argv[i], s.ToString().c_str());
      return 1;
    }
    files++;
  }
  if (files == 0) {
    std::fprintf(stderr, "usage: lethe_dump [--no-entries] FILE.sst...\n");
    return 2;
  }
  return 0;
}
