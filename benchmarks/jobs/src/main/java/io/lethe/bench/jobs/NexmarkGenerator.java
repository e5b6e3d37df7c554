package io.lethe.bench.jobs;

import static io.lethe.bench.jobs.NexmarkConfig.AUCTION_PROPORTION;
import static io.lethe.bench.jobs.NexmarkConfig.AVG_AUCTION_BYTES;
import static io.lethe.bench.jobs.NexmarkConfig.AVG_BID_BYTES;
import static io.lethe.bench.jobs.NexmarkConfig.AVG_PERSON_BYTES;
import static io.lethe.bench.jobs.NexmarkConfig.CATEGORIES;
import static io.lethe.bench.jobs.NexmarkConfig.FIRST_AUCTION_ID;
import static io.lethe.bench.jobs.NexmarkConfig.FIRST_CATEGORY_ID;
import static io.lethe.bench.jobs.NexmarkConfig.FIRST_PERSON_ID;
import static io.lethe.bench.jobs.NexmarkConfig.HOT_AUCTION_RATIO;
import static io.lethe.bench.jobs.NexmarkConfig.HOT_BIDDER_RATIO;
import static io.lethe.bench.jobs.NexmarkConfig.HOT_GROUP;
import static io.lethe.bench.jobs.NexmarkConfig.HOT_SELLER_RATIO;
import static io.lethe.bench.jobs.NexmarkConfig.IN_FLIGHT_AUCTIONS;
import static io.lethe.bench.jobs.NexmarkConfig.TOTAL_PROPORTION;

import java.io.Serializable;
import java.util.SplittableRandom;

/**
 * Makes Nexmark event number {@code n} from {@code n} alone: its kind and ids follow from the number
 * ({@link NexmarkIds}), its time from the number and the rate ({@link NexmarkConfig#timeOf}), and its
 * random choices from a generator seeded with the number. Any event can be made again, in any order, on
 * any machine: the same number gives the same event.
 *
 * <p>The choices follow the specification: a bid goes to the hot auction (the first of the newest group
 * of 100 auctions) with probability 1/2 and is made by the hot bidder (the second person of the newest
 * group of 100) with probability 3/4, else to a random recent auction and by a random active person; an
 * auction's seller is the hot seller (the first person of that group) with probability 3/4. Auctions run
 * for a random time averaging how long 100 more auctions take to appear. Prices are log-uniform from
 * $1 to $1,000,000 (in cents).
 *
 * <p>Unlike the Nexmark project's Flink generator, every random choice is seeded (there, an unseeded
 * generator makes other events on every run), and a bidder is a person id (there, the first person id is
 * added to it twice).
 */
final class NexmarkGenerator implements Serializable {
    private final NexmarkConfig config;

    NexmarkGenerator(NexmarkConfig config) {
        this.config = config;
    }

    NexmarkConfig config() {
        return config;
    }

    NexmarkEvent event(long n) {
        SplittableRandom random = new SplittableRandom(mix(config.seed() ^ mix(n)));
        long time = config.timeOf(n);
        return switch (NexmarkIds.kind(n)) {
            case PERSON -> person(n, time, random);
            case AUCTION -> auction(n, time, random);
            case BID -> bid(n, time, random);
        };
    }

    private static NexmarkEvent.Person person(long n, long time, SplittableRandom r) {
        String name = NexmarkText.personName(r);
        String email = NexmarkText.email(r);
        String card = NexmarkText.creditCard(r);
        String city = NexmarkText.city(r);
        String state = NexmarkText.state(r);
        int used = 8 + name.length() + email.length() + card.length() + city.length() + state.length();
        return new NexmarkEvent.Person(NexmarkIds.lastPerson(n) + FIRST_PERSON_ID, name, email, card, city, state,
                time, NexmarkText.extra(r, used, AVG_PERSON_BYTES));
    }

    private NexmarkEvent.Auction auction(long n, long time, SplittableRandom r) {
        long seller = r.nextInt(HOT_SELLER_RATIO) > 0
                ? NexmarkIds.lastPerson(n) / HOT_GROUP * HOT_GROUP
                : NexmarkIds.randomPerson(n, r);
        long category = FIRST_CATEGORY_ID + r.nextInt(CATEGORIES);
        long initialBid = price(r);
        long expires = time + auctionLength(n, time, r);
        String itemName = NexmarkText.word(r, 20, ' ');
        String description = NexmarkText.word(r, 100, ' ');
        long reserve = initialBid + price(r);
        int used = 8 + itemName.length() + description.length() + 5 * 8;
        return new NexmarkEvent.Auction(NexmarkIds.lastAuction(n) + FIRST_AUCTION_ID, itemName, description,
                initialBid, reserve, time, expires, seller + FIRST_PERSON_ID, category,
                NexmarkText.extra(r, used, AVG_AUCTION_BYTES));
    }

    private static NexmarkEvent.Bid bid(long n, long time, SplittableRandom r) {
        long auction = r.nextInt(HOT_AUCTION_RATIO) > 0
                ? NexmarkIds.lastAuction(n) / HOT_GROUP * HOT_GROUP
                : NexmarkIds.randomAuction(n, r);
        // The second person of the group, so that hot bidders are not also hot sellers.
        long bidder = r.nextInt(HOT_BIDDER_RATIO) > 0
                ? NexmarkIds.lastPerson(n) / HOT_GROUP * HOT_GROUP + 1
                : NexmarkIds.randomPerson(n, r);
        long price = price(r);
        String[] channel = NexmarkText.channelAndUrl(r);
        return new NexmarkEvent.Bid(auction + FIRST_AUCTION_ID, bidder + FIRST_PERSON_ID, price, channel[0],
                channel[1], time, NexmarkText.extra(r, 4 * 8, AVG_BID_BYTES));
    }

    /**
     * 1 ms up to twice the time until {@link NexmarkConfig#IN_FLIGHT_AUCTIONS} more auctions exist, so
     * that about that many auctions are open at any time.
     */
    private long auctionLength(long n, long time, SplittableRandom r) {
        long eventsAhead = (long) IN_FLIGHT_AUCTIONS * TOTAL_PROPORTION / AUCTION_PROPORTION;
        long horizon = config.timeOf(n + eventsAhead) - time;
        return 1 + r.nextLong(Math.max(2 * horizon, 1));
    }

    /** Cents, log-uniform over [100, 100,000,000]. */
    static long price(SplittableRandom r) {
        return Math.round(Math.pow(10.0, r.nextDouble() * 6.0) * 100.0);
    }

    /** A 64-bit finalizer (SplitMix's): neighbouring numbers give unrelated seeds. */
    static long mix(long x) {
        x = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
        x = (x ^ (x >>> 27)) * 0x94D049BB133111EBL;
        return x ^ (x >>> 31);
    }
}
