package io.lethe.bench.jobs;

/**
 * One Nexmark event: a new person, a new auction or a bid, with the specification's fields. Times are
 * ms since the epoch in event time.
 */
sealed interface NexmarkEvent permits NexmarkEvent.Person, NexmarkEvent.Auction, NexmarkEvent.Bid {

    /** When the event happened (event time, ms). */
    long dateTime();

    record Person(long id, String name, String emailAddress, String creditCard, String city, String state,
            long dateTime, String extra) implements NexmarkEvent {}

    record Auction(long id, String itemName, String description, long initialBid, long reserve, long dateTime,
            long expires, long seller, long category, String extra) implements NexmarkEvent {}

    record Bid(long auction, long bidder, long price, String channel, String url, long dateTime, String extra)
            implements NexmarkEvent {}
}
