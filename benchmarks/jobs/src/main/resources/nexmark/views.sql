-- The three event kinds as views over the table nexmark (one row per event, NexmarkRows), as in the
-- Nexmark project: every view keeps the event-time attribute dateTime.
CREATE TEMPORARY VIEW person AS
SELECT person.id AS id, person.name AS name, person.emailAddress AS emailAddress,
       person.creditCard AS creditCard, person.city AS city, person.state AS state, `dateTime`,
       person.extra AS extra
FROM nexmark
WHERE event_type = 0;

CREATE TEMPORARY VIEW auction AS
SELECT auction.id AS id, auction.itemName AS itemName, auction.description AS description,
       auction.initialBid AS initialBid, auction.reserve AS reserve, `dateTime`, auction.expires AS expires,
       auction.seller AS seller, auction.category AS category, auction.extra AS extra
FROM nexmark
WHERE event_type = 1;

CREATE TEMPORARY VIEW bid AS
SELECT bid.auction AS auction, bid.bidder AS bidder, bid.price AS price, bid.channel AS channel,
       bid.url AS url, `dateTime`, bid.extra AS extra
FROM nexmark
WHERE event_type = 2;
