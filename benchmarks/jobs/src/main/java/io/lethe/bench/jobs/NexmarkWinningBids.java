package io.lethe.bench.jobs;

import java.util.HashMap;
import java.util.Map;

/**
 * q9 computed in plain Java over the generated input, far enough to say whether its result is
 * deterministic: how many auctions have a winning bid (the highest bid while the auction was open, the
 * earliest of equal ones) and how many of those winners are tied with another bid on price and time, so
 * that which one Flink keeps depends on the order the join sees its inputs in.
 *
 * @param winners auctions with at least one bid while open: the rows q9 must return
 * @param tiedWinners auctions whose winning bid has an equal (same price, same millisecond)
 */
record NexmarkWinningBids(long winners, long tiedWinners) {

    static NexmarkWinningBids of(NexmarkGenerator generator, long events) {
        // Events are made by number, so the auctions can be read first and the bids after them.
        Map<Long, long[]> open = new HashMap<>();  // auction -> {from, to}
        for (long n = 0; n < events; n++) {
            if (NexmarkIds.kind(n) == NexmarkIds.Kind.AUCTION) {
                NexmarkEvent.Auction a = (NexmarkEvent.Auction) generator.event(n);
                open.put(a.id(), new long[] {a.dateTime(), a.expires()});
            }
        }
        Map<Long, long[]> best = new HashMap<>();  // auction -> {price, time, bids equal to it}
        for (long n = 0; n < events; n++) {
            if (NexmarkIds.kind(n) == NexmarkIds.Kind.BID) {
                offer((NexmarkEvent.Bid) generator.event(n), open, best);
            }
        }
        return new NexmarkWinningBids(best.size(), best.values().stream().filter(b -> b[2] > 1).count());
    }

    private static void offer(NexmarkEvent.Bid bid, Map<Long, long[]> open, Map<Long, long[]> best) {
        long[] during = open.get(bid.auction());
        if (during == null || bid.dateTime() < during[0] || bid.dateTime() > during[1]) {
            return;
        }
        long[] b = best.get(bid.auction());
        if (b == null || bid.price() > b[0] || bid.price() == b[0] && bid.dateTime() < b[1]) {
            best.put(bid.auction(), new long[] {bid.price(), bid.dateTime(), 1});
        } else if (bid.price() == b[0] && bid.dateTime() == b[1]) {
            b[2]++;
        }
    }
}
