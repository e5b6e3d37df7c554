#include "sst/index_partition.h"

namespace lethe {

IndexPartition::Builder::Builder(uint32_t version, uint32_t first_page, uint64_t data_limit)
    : p_(new IndexPartition()), version_(version), first_page_(first_page), data_limit_(data_limit) {}

Status IndexPartition::Builder::Add(std::string_view index, std::string_view filters) {
  IndexBlockReader reader(index, version_);
  uint64_t n;
  Status s = reader.ReadTileCount(&n);
  if (!s.ok()) return s;
  IndexPartition& p = *p_;
  const uint64_t filter_base = p.filters_.size();
  for (uint64_t t = 0; t < n; t++) {
    std::string_view smallest, largest;
    uint32_t pages;
    if (!(s = reader.ReadTile(&smallest, &largest, &pages)).ok()) return s;
    if (!p.keys_.Add(smallest, largest)) return Status::Corruption("index keys over 4 GiB");
    if (pages > UINT32_MAX - first_page_ - p.pages_.size()) return Status::Corruption("too many pages");
    one_page_each_ = one_page_each_ && pages == 1;
    p.tile_starts_.push_back(static_cast<uint32_t>(p.pages_.size()));
    for (uint32_t i = 0; i < pages; i++) {
      PageMeta m;
      if (!(s = reader.ReadPage(&m)).ok()) return s;
      if (!FitsIn(m.offset, m.size, data_limit_, kBlockTrailerSize) ||
          !FitsIn(m.filter_offset, m.filter_size, filters.size(), 0)) {
        return Status::Corruption("page outside the data region");
      }
      m.index = first_page_ + static_cast<uint32_t>(p.pages_.size());
      if (m.filter_size != 0) m.filter_offset += filter_base;
      p.pages_.push_back(m);
    }
  }
  if (!(s = reader.Finish()).ok()) return s;
  p.filters_.append(filters);
  return Status::OK();
}

std::unique_ptr<IndexPartition> IndexPartition::Builder::Finish() {
  IndexPartition& p = *p_;
  if (one_page_each_) {
    p.tile_starts_ = {};  // tile t is page t
  } else {
    p.tile_starts_.push_back(static_cast<uint32_t>(p.pages_.size()));
    p.tile_starts_.shrink_to_fit();
  }
  p.keys_.Shrink();
  p.pages_.shrink_to_fit();
  p.fences_.Build(&p.keys_);
  return std::move(p_);
}

size_t IndexPartition::MemoryUsage() const {
  const size_t filters = filters_.capacity() > 15 ? filters_.capacity() + 1 : 0;
  return sizeof(*this) + keys_.MemoryUsage() + pages_.capacity() * sizeof(PageMeta) +
         tile_starts_.capacity() * sizeof(uint32_t) + fences_.MemoryUsage() + filters;
}

}  // namespace lethe
