package io.lethe.bench.jobs;

import static io.lethe.bench.jobs.NexmarkConfig.ACTIVE_PEOPLE;
import static io.lethe.bench.jobs.NexmarkConfig.AUCTION_PROPORTION;
import static io.lethe.bench.jobs.NexmarkConfig.ID_LEAD;
import static io.lethe.bench.jobs.NexmarkConfig.IN_FLIGHT_AUCTIONS;
import static io.lethe.bench.jobs.NexmarkConfig.PERSON_PROPORTION;
import static io.lethe.bench.jobs.NexmarkConfig.TOTAL_PROPORTION;

import java.util.SplittableRandom;

/**
 * The specification's id arithmetic: which kind event {@code n} is, and the newest person and auction
 * that exist at event {@code n}, all derived from the event number alone (ids here are 0-based; the
 * generator adds the first ids). Every group of 50 events holds 1 person, then 3 auctions, then 46 bids.
 */
final class NexmarkIds {
    enum Kind { PERSON, AUCTION, BID }

    private NexmarkIds() {}

    static Kind kind(long n) {
        long slot = n % TOTAL_PROPORTION;
        if (slot < PERSON_PROPORTION) {
            return Kind.PERSON;
        }
        return slot < PERSON_PROPORTION + AUCTION_PROPORTION ? Kind.AUCTION : Kind.BID;
    }

    /** The newest person at event {@code n}: the one it creates, if it is a person. */
    static long lastPerson(long n) {
        long group = n / TOTAL_PROPORTION;
        long slot = Math.min(n % TOTAL_PROPORTION, PERSON_PROPORTION - 1);
        return group * PERSON_PROPORTION + slot;
    }

    /** The newest auction at event {@code n}: the one it creates, if it is an auction; -1 before the first. */
    static long lastAuction(long n) {
        long group = n / TOTAL_PROPORTION;
        long slot = n % TOTAL_PROPORTION;
        if (slot < PERSON_PROPORTION) {
            // A person opens the group: the newest auction is the previous group's last.
            return group * AUCTION_PROPORTION - 1;
        }
        return group * AUCTION_PROPORTION + Math.min(slot - PERSON_PROPORTION, AUCTION_PROPORTION - 1);
    }

    /**
     * A random person among the {@link NexmarkConfig#ACTIVE_PEOPLE} newest, or up to {@link
     * NexmarkConfig#ID_LEAD} not created yet (as if their events were late): keeping to active people keeps
     * the number of auctions and bids per person from thinning out over a long run.
     */
    static long randomPerson(long n, SplittableRandom random) {
        long people = lastPerson(n) + 1;
        long active = Math.min(people, ACTIVE_PEOPLE);
        return people - active + random.nextLong(active + ID_LEAD);
    }

    /** A random auction among the newest {@link NexmarkConfig#IN_FLIGHT_AUCTIONS} + 1, or a few ahead. */
    static long randomAuction(long n, SplittableRandom random) {
        long newest = Math.max(lastAuction(n), 0);
        long oldest = Math.max(newest - IN_FLIGHT_AUCTIONS, 0);
        return oldest + random.nextLong(newest - oldest + 1 + ID_LEAD);
    }
}
