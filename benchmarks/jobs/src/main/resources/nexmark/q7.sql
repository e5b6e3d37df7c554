-- q7, highest bid: the bids at the highest price of each tumbling 10 s window (a regular join of every
-- bid with the windows' maxima).
SELECT B.auction, B.bidder, B.price, B.`dateTime`, B.extra
FROM bid AS B
JOIN (
    SELECT MAX(price) AS max_price, window_end
    FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
    GROUP BY window_start, window_end
) AS W
ON B.price = W.max_price
WHERE B.`dateTime` BETWEEN W.window_end - INTERVAL '10' SECOND AND W.window_end
