// PageDropJob: carries out a page-drop plan (page_drop_planner.h) on one
// table file. The file itself is never rewritten: dropped pages leave its
// record (FileMetaData::dropped_pages), and partly covered pages are read,
// filtered by the same rule as compaction (SecondaryDeletes::FateOf) and
// written, with the earlier patched pages that stay, into a new patch table
// of one page per tile (FileMetaData::patched_pages). The caller installs the
// new record in a version edit and later punches the freed extents.
//
// Call order: Tiles, then Run (once). Thread-safety: one thread; the tables
// must stay open meanwhile (FileTables holds them).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compaction/compaction_stream.h"
#include "compaction/page_drop_planner.h"
#include "format/secondary_deletes.h"
#include "lethe/options.h"
#include "lethe/env.h"
#include "sst/table_builder.h"
#include "version/version.h"

namespace lethe {

struct PageDropJobOptions {
  std::string dbname;
  Env* env = nullptr;
  TableCache* tables = nullptr;  // to count what remains through the new patch
  int bloom_bits_per_key = 10;   // of the patch table's pages
  Compression compression = Compression::kNone;  // of the patch table's pages
  uint64_t now_us = 0;
  // Returns a fresh file number (registered as a pending output).
  std::function<uint64_t()> new_file_number;
};

struct PageDropResult {
  bool changed = false;        // false: the file stays as it is
  FileMetaData after;          // the file's new record
  bool whole_file = false;     // no page and no range tombstone remains: the file goes
  // Every remaining page is patched: the new patch table takes the file's
  // place (`after` is its record) and the file goes.
  bool replaced_by_patch = false;
  uint64_t new_patch = 0;      // a patch table written (also on failure: remove it), or 0
  // Bytes of the file no longer read (offset, length): whole runs of unread
  // pages, earlier drops included, around each page this job frees.
  std::vector<std::pair<uint64_t, uint64_t>> extents;
  std::vector<uint32_t> freed_pages;  // the pages those bytes are
  uint64_t pages_rewritten = 0;
  uint64_t rewrite_bytes_read = 0;
  uint64_t rewrite_bytes_written = 0;
};

// Appends the bytes page `p` takes in its file (offset, length) to
// `extents`, joining them to the last extent if they follow it.
void AppendPageExtent(const PageMeta& p, std::vector<std::pair<uint64_t, uint64_t>>* extents);

class PageDropJob {
 public:
  PageDropJob(PageDropJobOptions options, FileTables tables);

  // The file's remaining pages, tile by tile, from its index (no page is
  // read).
  Status Tiles(std::vector<PlannedTile>* tiles);

  Status Run(const PageDropPlan& plan, const SecondaryDeletes& records,
             const std::multiset<SequenceNumber>& snapshots, PageDropResult* result);

 private:
  // A remaining page: its place in the file and where its bytes are now.
  struct PageRef {
    const PageMeta* own;        // the file's page (offset, size)
    const TableReader* reader;  // the file's table or the patch table
    const PageMeta* meta;       // the page readers read
    bool patched() const { return meta != own; }
  };

  // Reads the pages to rewrite in page order and writes each page's
  // survivors to the new patch table at once: one page's entries are in
  // memory at a time, not the file's. Earlier patches that stay are copied
  // in page order too, once the job is known to change the file: a job that
  // changes nothing writes nothing.
  Status RewriteInOrder(const PageDropPlan& plan, const SecondaryDeletes& records,
                        const std::multiset<SequenceNumber>& snapshots, PageDropResult* r);
  // Earlier patched pages neither dropped nor among `rewrite` (ascending).
  std::vector<uint32_t> KeptPatches(const std::vector<uint32_t>& rewrite) const;
  Status RewritePage(uint32_t index, const SecondaryDeletes& records,
                     const std::multiset<SequenceNumber>& snapshots, PageDropResult* r);
  // An earlier patched page stays: copied now if the file changes, else noted.
  Status Keep(uint32_t index, PageDropResult* r);
  // Copies the noted earlier patches (all before the next page written).
  Status CopyKeptPatches(PageDropResult* r);
  Status CopyKeptPatch(uint32_t index, PageDropResult* r);
  // Appends one page of the new patch table (opened on first use).
  Status AddPatchPage(uint32_t index, const std::vector<OutputEntry>& entries, PageDropResult* r);
  Status FinishPatchTable(PageDropResult* r);
  Status CountRemainingPages(FileMetaData* f, size_t* remaining, size_t* from_file);
  Status ReplaceByPatch(PageDropResult* r);
  // Whether this job stops reading page `index` from the file (dropped or
  // rewritten now, its bytes read until now).
  bool FreedNow(uint32_t index) const;
  // Whether the file's record after this job still reads the page's bytes.
  bool ReadAfter(uint32_t index) const;
  // The extents to punch: every run of file bytes the record after this job
  // no longer reads that holds a page this job frees, with the run's pages.
  void FreeUnreadRuns(PageDropResult* r);

  const PageDropJobOptions options_;
  const FileTables tables_;
  std::vector<PartitionRef> partitions_;  // the file's index: pages_ points into it
  std::map<uint32_t, PageRef> pages_;  // remaining pages by index
  std::vector<uint32_t> dropped_;      // ascending: earlier drops and this one's
  std::vector<uint32_t> rewritten_;    // ascending: rewritten pages whose survivors are patched
  std::vector<uint32_t> patched_;      // ascending: every page of the new patch table
  std::vector<uint32_t> kept_;         // earlier patches that stay, not copied yet
  bool changes_ = false;               // the job drops or rewrites a page
  std::unique_ptr<WritableFile> patch_file_;
  std::unique_ptr<TableBuilder> patch_;  // the new patch table, while it is written
  uint64_t converted_ = 0;             // entries turned into point tombstones
  bool pinned_ = false;                // a snapshot still reads an entry a record hides
};

}  // namespace lethe
