package io.lethe.bench.jobs;

import java.io.Serializable;
import java.time.Instant;

/**
 * What the Nexmark generator produces: the specification's proportions, hot ratios and sizes (the
 * defaults of the Nexmark project's generator), an event rate and a fixed first event time.
 *
 * <p>Event {@code n} (0, 1, 2, ...) happens at {@code baseTimeMillis + n * 1000 / eventsPerSecond}: event time
 * follows the event number, never the wall clock, so every run sees the same stream with the same times
 * however fast it goes. Events are in order (the specification's out-of-order group size of 1).
 *
 * @param eventsPerSecond the rate in event time (the Nexmark project's generator defaults to 10,000)
 * @param baseTimeMillis event time of the first event, ms since the epoch
 * @param seed seeds every event's random choices together with its number
 */
record NexmarkConfig(long eventsPerSecond, long baseTimeMillis, long seed) implements Serializable {

    /** Of every 50 events: 1 person, 3 auctions, 46 bids, in this order. */
    static final int PERSON_PROPORTION = 1;
    static final int AUCTION_PROPORTION = 3;
    static final int BID_PROPORTION = 46;
    static final int TOTAL_PROPORTION = PERSON_PROPORTION + AUCTION_PROPORTION + BID_PROPORTION;

    /** Ids start above 0 so that queries find matches even on small inputs. */
    static final long FIRST_PERSON_ID = 1000;
    static final long FIRST_AUCTION_ID = 1000;
    static final long FIRST_CATEGORY_ID = 10;
    static final int CATEGORIES = 5;

    /**
     * A bid goes to a hot auction with probability 1 - 1/2, an auction to a hot seller and a bid to a
     * hot bidder with probability 1 - 1/4; "hot" is the first auction or person of the newest group of
     * {@link #HOT_GROUP}.
     */
    static final int HOT_AUCTION_RATIO = 2;
    static final int HOT_SELLER_RATIO = 4;
    static final int HOT_BIDDER_RATIO = 4;
    static final int HOT_GROUP = 100;

    /** Cold choices pick among the newest 100 auctions or 1,000 people, plus up to 10 not yet created. */
    static final int IN_FLIGHT_AUCTIONS = 100;
    static final int ACTIVE_PEOPLE = 1000;
    static final int ID_LEAD = 10;

    /** Average sizes in bytes the padding field {@code extra} fills each event up to. */
    static final int AVG_PERSON_BYTES = 200;
    static final int AVG_AUCTION_BYTES = 500;
    static final int AVG_BID_BYTES = 100;

    /** 2025-01-01T00:00:00Z: a day and a 10 s window start together. */
    static final long DEFAULT_BASE_TIME = Instant.parse("2025-01-01T00:00:00Z").toEpochMilli();
    static final long DEFAULT_RATE = 10_000;
    static final long DEFAULT_SEED = 0x4E65786D61726BL;  // "Nexmark"

    NexmarkConfig {
        if (eventsPerSecond <= 0) {
            throw new IllegalArgumentException("events per second must be positive: " + eventsPerSecond);
        }
    }

    static NexmarkConfig withRate(long eventsPerSecond) {
        return new NexmarkConfig(eventsPerSecond, DEFAULT_BASE_TIME, DEFAULT_SEED);
    }

    /** Event time of event {@code n}, in ms since the epoch. */
    long timeOf(long n) {
        return baseTimeMillis + n * 1000 / eventsPerSecond;
    }
}
