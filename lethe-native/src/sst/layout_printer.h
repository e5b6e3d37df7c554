// Annotated dump of a table file: every region with its byte range, every
// tile with its fence pointers, every page with its delete-key range and its
// entries. Used by lethe_dump and by the golden layout test.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lethe/env.h"

namespace lethe {

// Appends the layout of table `fname` to *out. With entries = false only
// regions, tiles and pages are printed. Pages listed in `dropped` (page
// indexes in file order, from the manifest) are marked and not read, and
// so are the pages listed in `patched` (their entries live in the file's
// patch table, itself a table file). Without `dropped`, a page whose bytes
// are all zero is shown as a punched hole and the dump goes on; any other
// damage fails it.
Status PrintTableLayout(Env* env, const std::string& fname, bool entries, std::string* out,
                        const std::vector<uint32_t>* dropped = nullptr,
                        const std::vector<uint32_t>* patched = nullptr);

}  // namespace lethe
