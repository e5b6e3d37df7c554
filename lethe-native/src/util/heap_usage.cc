#include "lethe/heap_usage.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace lethe {

HeapUsage GetHeapUsage() {
  HeapUsage u;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 m = mallinfo2();
  u.mapped = m.arena + m.hblkhd;
  u.in_use = m.uordblks + m.hblkhd;
  u.free = m.fordblks;
#endif
  return u;
}

}  // namespace lethe
