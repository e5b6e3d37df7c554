-- q5, hot items: in every sliding window of 10 s (every 2 s), the auctions with the most bids.
SELECT per_auction.auction, per_auction.num
FROM (
    SELECT auction, COUNT(*) AS num, window_start, window_end
    FROM TABLE(HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
    GROUP BY auction, window_start, window_end
) AS per_auction
JOIN (
    SELECT MAX(counted.num) AS max_num, counted.window_start, counted.window_end
    FROM (
        SELECT COUNT(*) AS num, window_start, window_end
        FROM TABLE(HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
        GROUP BY auction, window_start, window_end
    ) AS counted
    GROUP BY counted.window_start, counted.window_end
) AS most
ON per_auction.window_start = most.window_start
   AND per_auction.window_end = most.window_end
   AND per_auction.num >= most.max_num
