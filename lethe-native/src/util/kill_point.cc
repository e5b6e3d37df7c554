#include "util/kill_point.h"

namespace lethe {

namespace internal {
std::atomic<KillPointHandler> kill_point_handler{nullptr};
}  // namespace internal

void SetKillPointHandler(KillPointHandler handler) {
  internal::kill_point_handler.store(handler, std::memory_order_relaxed);
}

}  // namespace lethe
