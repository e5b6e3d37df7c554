// DbStatistics by ticker (include/lethe/statistics.h).
#include "lethe/statistics.h"

namespace lethe {

uint64_t DbStatistics::Get(Ticker t) const {
  switch (t) {
#define LETHE_TICKER_GET(id, field, doc) \
  case Ticker::id:                       \
    return field;
    LETHE_TICKERS(LETHE_TICKER_GET)
#undef LETHE_TICKER_GET
    default:
      return 0;
  }
}

void DbStatistics::Set(Ticker t, uint64_t value) {
  switch (t) {
#define LETHE_TICKER_SET(id, field, doc) \
  case Ticker::id:                       \
    field = value;                       \
    break;
    LETHE_TICKERS(LETHE_TICKER_SET)
#undef LETHE_TICKER_SET
    default:
      break;
  }
}

// Indexed by CompactionReason.
static constexpr Ticker kCompactionTickers[] = {Ticker::kCompactionsLevel0, Ticker::kCompactionsSaturation,
                                                Ticker::kCompactionsManual, Ticker::kTrivialMoves,
                                                Ticker::kCompactionsDeleteDriven, Ticker::kCompactionsPageRewrite};
static constexpr Ticker kCompactionBytesTickers[] = {
    Ticker::kCompactionBytesLevel0, Ticker::kCompactionBytesSaturation, Ticker::kCompactionBytesManual,
    Ticker::kCompactionBytesTrivialMove, Ticker::kCompactionBytesDeleteDriven, Ticker::kCompactionBytesPageRewrite};
static_assert(std::size(kCompactionTickers) == static_cast<size_t>(CompactionReason::kCount));
static_assert(std::size(kCompactionBytesTickers) == static_cast<size_t>(CompactionReason::kCount));

Ticker CompactionTicker(CompactionReason reason) { return kCompactionTickers[static_cast<int>(reason)]; }
Ticker CompactionBytesTicker(CompactionReason reason) { return kCompactionBytesTickers[static_cast<int>(reason)]; }

}  // namespace lethe
