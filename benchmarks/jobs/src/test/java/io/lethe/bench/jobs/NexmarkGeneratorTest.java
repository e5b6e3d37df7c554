package io.lethe.bench.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

/** The Nexmark generator keeps the specification's rules and makes the same event from the same number. */
class NexmarkGeneratorTest {
    private static final NexmarkConfig CONFIG = NexmarkConfig.withRate(10_000);
    private static final int EVENTS = 100_000;

    @Test
    void theSameNumberGivesTheSameEventInAnyOrder() {
        NexmarkGenerator forward = new NexmarkGenerator(CONFIG);
        List<NexmarkEvent> first = new ArrayList<>();
        for (long n = 0; n < 1000; n++) {
            first.add(forward.event(n));
        }
        NexmarkGenerator backward = new NexmarkGenerator(CONFIG);
        for (long n = 999; n >= 0; n--) {
            assertEquals(first.get((int) n), backward.event(n), "event " + n);
        }
        assertEquals(forward.event(123_456_789L), new NexmarkGenerator(CONFIG).event(123_456_789L));
    }

    @Test
    void theSeedChangesTheRandomChoicesButNotTheIds() {
        NexmarkEvent.Bid a = (NexmarkEvent.Bid) new NexmarkGenerator(CONFIG).event(10);
        NexmarkEvent.Bid b = (NexmarkEvent.Bid) new NexmarkGenerator(
                new NexmarkConfig(CONFIG.eventsPerSecond(), CONFIG.baseTimeMillis(), 42)).event(10);
        assertNotEquals(a, b);
        assertEquals(a.dateTime(), b.dateTime());
    }

    @Test
    void everyFiftyEventsHoldOnePersonThreeAuctionsAndFortySixBids() {
        NexmarkGenerator g = new NexmarkGenerator(CONFIG);
        for (long group = 0; group < 200; group++) {
            int persons = 0;
            int auctions = 0;
            int bids = 0;
            for (long n = group * 50; n < group * 50 + 50; n++) {
                NexmarkEvent e = g.event(n);
                persons += e instanceof NexmarkEvent.Person ? 1 : 0;
                auctions += e instanceof NexmarkEvent.Auction ? 1 : 0;
                bids += e instanceof NexmarkEvent.Bid ? 1 : 0;
            }
            assertEquals(List.of(1, 3, 46), List.of(persons, auctions, bids), "group " + group);
        }
        assertTrue(g.event(0) instanceof NexmarkEvent.Person, "a group starts with its person");
        assertTrue(g.event(1) instanceof NexmarkEvent.Auction && g.event(3) instanceof NexmarkEvent.Auction);
        assertTrue(g.event(4) instanceof NexmarkEvent.Bid && g.event(49) instanceof NexmarkEvent.Bid);
    }

    @Test
    void personAndAuctionIdsCountUpFromTheFirstIds() {
        NexmarkGenerator g = new NexmarkGenerator(CONFIG);
        long nextPerson = NexmarkConfig.FIRST_PERSON_ID;
        long nextAuction = NexmarkConfig.FIRST_AUCTION_ID;
        for (long n = 0; n < EVENTS; n++) {
            NexmarkEvent e = g.event(n);
            if (e instanceof NexmarkEvent.Person p) {
                assertEquals(nextPerson++, p.id(), "event " + n);
            } else if (e instanceof NexmarkEvent.Auction a) {
                assertEquals(nextAuction++, a.id(), "event " + n);
            }
        }
    }

    /**
     * A bid names an auction created before it or, as the specification allows (events that seem late),
     * one of the next 10; half of them the hot auction, which exists.
     */
    @Test
    void bidsReferToAuctionsThatExistOrAreAboutTo() {
        NexmarkGenerator g = new NexmarkGenerator(CONFIG);
        long newestAuction = -1;
        long bids = 0;
        long existing = 0;
        long hot = 0;
        for (long n = 0; n < EVENTS; n++) {
            NexmarkEvent e = g.event(n);
            if (e instanceof NexmarkEvent.Auction a) {
                newestAuction = a.id();
            } else if (e instanceof NexmarkEvent.Bid b) {
                bids++;
                assertTrue(b.auction() >= NexmarkConfig.FIRST_AUCTION_ID, "event " + n);
                assertTrue(b.auction() <= newestAuction + NexmarkConfig.ID_LEAD, "event " + n + ": " + b.auction()
                        + " is beyond the newest auction " + newestAuction);
                assertTrue(b.auction() >= newestAuction - NexmarkConfig.IN_FLIGHT_AUCTIONS
                        || b.auction() == hotAuction(newestAuction), "event " + n + ": an auction long closed");
                existing += b.auction() <= newestAuction ? 1 : 0;
                hot += b.auction() == hotAuction(newestAuction) ? 1 : 0;
            }
        }
        assertEquals(EVENTS / 50 * 46, bids);
        assertTrue(existing > bids * 0.9, existing + " of " + bids + " bids name an existing auction");
        // 1/2 hot, plus the cold choices that happen to hit it.
        assertTrue(hot > bids * 0.49 && hot < bids * 0.55, hot + " of " + bids + " bids on the hot auction");
    }

    @Test
    void hotSellersAndBiddersAreTheFirstAndSecondPersonOfTheNewestHundred() {
        NexmarkGenerator g = new NexmarkGenerator(CONFIG);
        long newestPerson = -1;
        long hotSellers = 0;
        long auctions = 0;
        long hotBidders = 0;
        long bids = 0;
        for (long n = 0; n < EVENTS; n++) {
            NexmarkEvent e = g.event(n);
            long hotGroup = (newestPerson - NexmarkConfig.FIRST_PERSON_ID) / 100 * 100 + NexmarkConfig.FIRST_PERSON_ID;
            if (e instanceof NexmarkEvent.Person p) {
                newestPerson = p.id();
            } else if (e instanceof NexmarkEvent.Auction a) {
                auctions++;
                hotSellers += a.seller() == hotGroup ? 1 : 0;
                assertTrue(a.seller() <= newestPerson + NexmarkConfig.ID_LEAD, "event " + n);
            } else if (e instanceof NexmarkEvent.Bid b) {
                bids++;
                hotBidders += b.bidder() == hotGroup + 1 ? 1 : 0;
                assertTrue(b.bidder() <= newestPerson + NexmarkConfig.ID_LEAD, "event " + n);
            }
        }
        assertTrue(hotSellers > auctions * 0.72 && hotSellers < auctions * 0.78, hotSellers + " of " + auctions);
        assertTrue(hotBidders > bids * 0.74 && hotBidders < bids * 0.78, hotBidders + " of " + bids);
    }

    @Test
    void eventTimesFollowTheEventNumberInOrder() {
        NexmarkGenerator g = new NexmarkGenerator(CONFIG);
        assertEquals(NexmarkConfig.DEFAULT_BASE_TIME, g.event(0).dateTime());
        long previous = Long.MIN_VALUE;
        for (long n = 0; n < EVENTS; n++) {
            NexmarkEvent e = g.event(n);
            assertTrue(e.dateTime() >= previous, "event " + n + " goes back in time");
            assertEquals(CONFIG.baseTimeMillis() + n / 10, e.dateTime(), "10,000 events per second");
            if (e instanceof NexmarkEvent.Auction a) {
                assertTrue(a.expires() > a.dateTime(), "event " + n + " expires before it starts");
            }
            previous = e.dateTime();
        }
    }

    @Test
    void fieldsStayInTheirRanges() {
        NexmarkGenerator g = new NexmarkGenerator(CONFIG);
        for (long n = 0; n < EVENTS; n++) {
            NexmarkEvent e = g.event(n);
            if (e instanceof NexmarkEvent.Auction a) {
                assertTrue(a.category() >= 10 && a.category() < 15, "category " + a.category());
                assertTrue(a.reserve() > a.initialBid());
            } else if (e instanceof NexmarkEvent.Bid b) {
                assertTrue(b.price() >= 100 && b.price() <= 100_000_000, "price " + b.price());
                assertTrue(b.url().startsWith("https://www.nexmark.com/"), b.url());
                assertTrue(b.extra().length() >= 50 && b.extra().length() <= 86, "bid padding " + b.extra().length());
            }
        }
    }

    private static long hotAuction(long newestAuction) {
        long base0 = newestAuction - NexmarkConfig.FIRST_AUCTION_ID;
        return base0 / 100 * 100 + NexmarkConfig.FIRST_AUCTION_ID;
    }
}
