-- q9, winning bids: every auction with its highest bid while it was open, the earliest of equal bids
-- (a regular join, then ROW_NUMBER per auction).
SELECT id, itemName, description, initialBid, reserve, `dateTime`, expires, seller, category, extra,
       auction, bidder, price, bid_dateTime, bid_extra
FROM (
    SELECT A.*, B.auction, B.bidder, B.price, B.`dateTime` AS bid_dateTime, B.extra AS bid_extra,
           ROW_NUMBER() OVER (PARTITION BY A.id ORDER BY B.price DESC, B.`dateTime` ASC) AS row_num
    FROM auction AS A
    JOIN bid AS B ON B.auction = A.id
    WHERE B.`dateTime` BETWEEN A.`dateTime` AND A.expires
)
WHERE row_num <= 1
