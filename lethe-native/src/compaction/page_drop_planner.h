// The page-drop planner: KiWi's page drops as a pure function.
// Given one table file's remaining pages, its family's secondary-delete
// records, the live snapshots and a time, it decides which pages leave whole
// (a manifest edit; no page is read) and which partly covered pages are
// rewritten alone into the file's patch table (page_rewrite.h). No I/O, no
// locks, no clock.
//
// Rules (every reader must see the same state after the drop as before):
//  1. A page leaves whole under a horizon when its largest delete key lies
//     below the horizon and no snapshot reads between the file's oldest
//     entry and the horizon record that hides that key. Older versions of
//     its keys, wherever they are, lie under the horizon too (monotone
//     delete keys), so nothing resurfaces.
//  2. Under a delete-key range, a page leaves only with every other remaining
//     page of its delete tile (an older version of one of its keys may sit
//     in a sibling page with a delete key outside the range), only when the
//     whole file predates the record, no snapshot reads between the file's
//     oldest entry and the record, and no older file may hold the tile's keys.
//  3. A page that a record not yet applied to the file touches but does not
//     cover is partly covered. At most one per tile is rewritten (more, which
//     only ranges make, are left to FADE's compaction of the file). While
//     the horizon keeps moving, the page waits until kPatchShare of its
//     delete-key span is covered or FADE says it has waited long enough
//     (FadePatchDue), so a page is not rewritten at every step.
//  4. When the rewrites take every page still read from the file itself (the
//     others dropped or patched earlier), the file is better compacted alone:
//     that reads and writes what the rewrites would, and writes full pages
//     instead of a patch of half-empty ones next to a file that keeps its
//     index and filters for nothing (rewrite_file). Not with range
//     tombstones in the file, which a patch cannot carry either.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string_view>
#include <vector>

#include "format/secondary_deletes.h"
#include "lethe/options.h"
#include "version/file_metadata.h"

namespace lethe {

// A partly covered page is rewritten once records cover this share of its
// delete-key span (with delete keys assumed spread evenly over it): half the
// page then leaves for the price of reading and writing it once.
constexpr double kPatchShare = 0.5;

// One remaining page of a file, as readers see it now (a patched page: its
// patch table's page).
struct PlannedPage {
  uint32_t index = 0;  // in the file, ascending within a tile
  uint64_t delete_key_min = 0, delete_key_max = 0;
  uint64_t bytes = 0;  // released when it is dropped (page and trailer)
  bool patched = false;  // read from the patch table, not the file
};

struct PlannedTile {
  std::string_view smallest, largest;  // sort keys of the tile (views into its table reader)
  std::vector<PlannedPage> pages;      // the tile's remaining pages
};

struct PageDropInput {
  const FileMetaData* file = nullptr;
  std::vector<PlannedTile> tiles;
  const SecondaryDeletes* records = nullptr;
  const std::multiset<SequenceNumber>* snapshots = nullptr;  // live ones
  ColumnFamilyOptions options;  // D_th
  uint64_t now_us = 0;
  bool horizon_moving = false;  // FadeHorizonMoving
  // Whether a file older than this one may hold versions of keys in [lo, hi]
  // (ColumnFamilyFiles::OlderOverlap); asked only for fully covered tiles.
  std::function<bool(std::string_view lo, std::string_view hi)> older_versions;
};

struct PageDropPlan {
  std::vector<uint32_t> drop;     // pages gone for every reader, ascending
  std::vector<uint32_t> rewrite;  // partly covered pages to rewrite, ascending
  uint64_t drop_bytes = 0;
  uint64_t partly_covered = 0;    // rewritten or left for later
  // Every record will have been applied to the file once the rewrites are
  // done (unless a rewrite finds an entry a snapshot still reads).
  bool applies_all = true;
  // A partly covered page waits for more coverage: look again later.
  bool deferred = false;
  // Rule 4: compact the file alone instead of dropping and rewriting pages.
  bool rewrite_file = false;
};

// Whether the records may touch any page of `f`: the file's delete-key bounds
// reach below the horizon or into a range newer than its oldest entry.
bool RecordsMayTouch(const SecondaryDeletes& records, const FileMetaData& f);

PageDropPlan PlanPageDrops(const PageDropInput& in);

}  // namespace lethe
