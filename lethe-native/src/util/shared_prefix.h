// The length of the prefix two byte strings share.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace lethe {

inline size_t SharedPrefixLength(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t shared = 0;
  while (shared < n && a[shared] == b[shared]) shared++;
  return shared;
}

}  // namespace lethe
