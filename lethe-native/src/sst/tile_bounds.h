// Shorter tile bounds for a table's index. Interior bounds need not be keys of
// the table: any upper bound of a tile at or above its last key and below the
// next tile's first key, and any lower bound above that and at or below the
// next tile's first key, route every lookup and seek as the keys themselves
// would. A key between a tile's last key and its bound is routed to that tile
// (or found before the next one's bound) and found in neither: no key lies there.
#pragma once

#include <string>
#include <vector>

#include "sst/table_format.h"

namespace lethe {

// Shortens `*start` to a key S with start <= S < limit, as short as this finds
// (RocksDB's bytewise shortest separator). REQUIRES: *start < limit.
void ShortenSeparator(std::string* start, std::string_view limit);

// Shortens `*key` to its shortest prefix P with above < P (so P <= key).
// REQUIRES: above < *key.
void ShortenAbove(std::string* key, std::string_view above);

// Shortens the bounds between neighbouring tiles: each tile's largest but the
// last, and each tile's smallest but the first, so that the table's own first
// and last keys stay exact. Neighbours that overlap (a patch table's tiles may)
// keep their bounds.
void ShortenTileBounds(std::vector<TileMeta>* tiles);

}  // namespace lethe
