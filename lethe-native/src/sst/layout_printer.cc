#include "sst/layout_printer.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "format/internal_key.h"
#include "sst/compression.h"
#include "sst/page.h"
#include "sst/table_reader.h"

namespace lethe {
namespace {

std::string Printable(std::string_view s) {
  std::string r;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      r.push_back(static_cast<char>(c));
    } else {
      char buf[5];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      r.append(buf);
    }
  }
  return r;
}

std::string DeleteKey(uint64_t dk) { return dk == UINT64_MAX ? "max" : std::to_string(dk); }

const char* KindName(EntryKind k) {
  switch (k) {
    case EntryKind::kTombstone: return "tombstone";
    case EntryKind::kValue: return "value";
    case EntryKind::kMerge: return "merge";
    default: return "?";
  }
}

// One tile's lines: its keys, then each page (and its entries if asked).
Status AppendTile(const TableReader& table, size_t t, const TileView& tile, bool entries,
                  const std::vector<uint32_t>* dropped, const std::vector<uint32_t>* patched, std::string* out) {
  char buf[512];
  std::snprintf(buf, sizeof(buf), "tile %zu: sort keys [%s, %s], %zu pages\n", t,
                Printable(tile.smallest).c_str(), Printable(tile.largest).c_str(), tile.pages.size());
  out->append(buf);
  for (size_t i = 0; i < tile.pages.size(); i++) {
    const PageMeta& m = tile.pages[i];
    auto listed = [&](const std::vector<uint32_t>* list) {
      return list != nullptr && std::find(list->begin(), list->end(), m.index) != list->end();
    };
    const bool is_dropped = listed(dropped);
    const bool is_patched = !is_dropped && listed(patched);
    std::snprintf(buf, sizeof(buf),
                  "  page %zu%s: bytes [%" PRIu64 ", %" PRIu64 ") + crc, %u entries, delete keys [%s, %s], filter %u bytes\n",
                  i, is_dropped ? " DROPPED" : (is_patched ? " PATCHED" : ""), m.offset, m.offset + m.size,
                  m.entries, DeleteKey(m.delete_key_min).c_str(), DeleteKey(m.delete_key_max).c_str(),
                  m.filter_size);
    out->append(buf);
    if (m.compression != static_cast<uint8_t>(Compression::kNone)) {
      out->pop_back();  // the line goes on
      std::snprintf(buf, sizeof(buf), ", %s from %u bytes\n", CompressionName(static_cast<Compression>(m.compression)),
                    m.raw_size);
      out->append(buf);
    }
    if (!entries || is_dropped || is_patched) continue;
    PageRef page;
    Status s = table.ReadPage(m, false, &page);
    if (!s.ok() && dropped == nullptr && table.PageIsHole(m)) {
      // Without the manifest's list a dropped page shows as a hole; damage is
      // rarely all zero, so say what it most likely is and go on.
      out->append("    all zero: a punched hole, most likely a page the engine dropped (its manifest says)\n");
      continue;
    }
    if (!s.ok()) return s;
    PageIterator it(page);
    for (it.SeekToFirst(); it.Valid(); it.Next()) {
      uint64_t tag = ExtractTag(it.key());
      std::snprintf(buf, sizeof(buf), "    %s @%" PRIu64 " %s dk=%s value=%s\n",
                    Printable(ExtractSortKey(it.key())).c_str(), TagSequence(tag),
                    KindName(TagKind(tag)), DeleteKey(it.delete_key()).c_str(),
                    Printable(it.value().substr(0, 32)).c_str());
      out->append(buf);
    }
    if (!it.status().ok()) return it.status();
  }
  return Status::OK();
}

}  // namespace

Status PrintTableLayout(Env* env, const std::string& fname, bool entries, std::string* out,
                        const std::vector<uint32_t>* dropped, const std::vector<uint32_t>* patched) {
  uint64_t size;
  Status s = env->GetFileSize(fname, &size);
  if (!s.ok()) return s;
  std::unique_ptr<RandomAccessFile> file;
  s = env->NewRandomAccessFile(fname, &file);
  if (!s.ok()) return s;
  std::unique_ptr<TableReader> table;
  s = TableReader::Open(TableReader::Options{}, fname, 0, std::move(file), size, &table);
  if (!s.ok()) return s;
  char buf[512];
  const TableProperties& p = table->properties();
  std::snprintf(buf, sizeof(buf),
                "table: %" PRIu64 " bytes, %" PRIu64 " tiles, %" PRIu64 " pages (h=%" PRIu64 "), %" PRIu64
                " entries (%" PRIu64 " tombstones, %" PRIu64 " merges), %" PRIu64
                " range tombstones, seq [%" PRIu64 ", %" PRIu64 "], delete keys [%s, %s], %zu index partitions\n",
                size, p.tiles, p.pages, p.pages_per_tile, p.entries, p.point_tombstones, p.merges,
                p.range_tombstones, p.smallest_seq, p.largest_seq, DeleteKey(p.delete_key_min).c_str(),
                DeleteKey(p.delete_key_max).c_str(), table->partition_count());
  out->append(buf);
  std::vector<PartitionRef> partitions;
  if (!(s = table->ReadPartitions(&partitions)).ok()) return s;
  size_t t = 0;
  for (const PartitionRef& part : partitions) {
    for (size_t i = 0; i < part->tile_count(); i++, t++) {
      if (!(s = AppendTile(*table, t, part->tile(i), entries, dropped, patched, out)).ok()) return s;
    }
  }
  for (const RangeTombstone& r : table->range_tombstones()) {
    std::snprintf(buf, sizeof(buf), "range tombstone [%s, %s) @%" PRIu64 "\n", Printable(r.start).c_str(),
                  Printable(r.end).c_str(), r.seq);
    out->append(buf);
  }
  return Status::OK();
}

}  // namespace lethe
