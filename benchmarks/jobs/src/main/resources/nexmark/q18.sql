-- q18, last bid: each bidder's latest bid on each auction (a deduplication keeping the last row by
-- event time).
SELECT auction, bidder, price, channel, url, `dateTime`, extra
FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY `dateTime` DESC) AS row_num
    FROM bid
)
WHERE row_num <= 1
