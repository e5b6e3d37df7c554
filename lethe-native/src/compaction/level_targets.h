// Level targets: how many bytes each level of a column family may hold before
// it is compacted into the next, and which level receives level 0.
//
// Static (the default): level 1 holds level1_bytes and level i T^(i-1) times
// as much; level 0 is compacted into level 1. A tree whose deepest level is
// far from full then keeps much of its data in the level above it, as newer
// versions of keys the deepest level holds too: the files can take up to
// twice the live data once most keys have been rewritten.
//
// Dynamic (dynamic_level_bytes, as RocksDB's level_compaction_dynamic_level_bytes):
// the tree is anchored at the last level (kNumLevels - 1). With S the bytes of
// the largest level, the level above the last targets S / T, the next S / T^2,
// and so on up to the base level, the first whose target is at most
// level1_bytes. Level 0 is compacted into the base level, and the levels
// between 0 and the base stay empty. The last level then holds about (T-1)/T
// of the files' bytes, so they take little more than the live data, at the
// cost of more writes: every byte reaching the last level is merged with
// about T times as many of its bytes. A new tree
// has its base at the last level; the base moves up as the tree grows and down
// as it shrinks.
//
// A level above the base that holds files (the base moved down, or the tree
// was built with static targets) is drained: it has no target, so its files
// are compacted into the next level, most of them moved whole while the
// levels below are empty. Until it is empty, level 0 goes to the shallowest
// such level instead of the base, never below older data.
//
// Pure functions of the files and the options: no I/O, no locks.
#pragma once

#include <cstdint>

#include "lethe/options.h"
#include "version/version.h"

namespace lethe {

struct LevelTargets {
  int base_level = 1;      // the shallowest level with a target
  int level0_output = 1;   // where level 0 is compacted to: the base, or a shallower level still draining
  // Per level: bytes it may hold before it is compacted. 0 for level 0 (it is
  // compacted by file count), for the last level and for levels above the base.
  uint64_t max_bytes[kNumLevels] = {};

  // Whether `level` (>= 1) holds files it must hand down whatever its size.
  bool Draining(int level) const { return level >= 1 && level < base_level; }
};

LevelTargets ComputeLevelTargets(const ColumnFamilyFiles& files, const ColumnFamilyOptions& options);

}  // namespace lethe
