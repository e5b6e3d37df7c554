#include "version/pinned_reader.h"

namespace lethe {

const TableReader* PinnedReader::Pin(std::shared_ptr<const TableReader> r) const {
  std::lock_guard<std::mutex> l(mu_);
  if (owner_ == nullptr) {
    owner_ = std::move(r);
    raw_.store(owner_.get(), std::memory_order_release);
  }
  return owner_.get();
}

std::shared_ptr<const TableReader> PinnedReader::shared() const {
  std::lock_guard<std::mutex> l(mu_);
  return owner_;
}

void PinnedReader::CopyFrom(const PinnedReader& o) {
  std::shared_ptr<const TableReader> owner;
  {
    std::lock_guard<std::mutex> l(o.mu_);
    owner = o.owner_;
  }
  std::lock_guard<std::mutex> l(mu_);
  owner_ = std::move(owner);
  raw_.store(owner_.get(), std::memory_order_release);
}

}  // namespace lethe
