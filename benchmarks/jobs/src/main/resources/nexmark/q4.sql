-- q4, average price for a category: an auction's final price is its highest bid while it was open
-- (a regular join of all auctions and all bids, then two aggregations).
SELECT closed.category, AVG(closed.final_price) AS avg_final_price
FROM (
    SELECT A.id, A.category, MAX(B.price) AS final_price
    FROM auction AS A
    JOIN bid AS B ON B.auction = A.id
    WHERE B.`dateTime` BETWEEN A.`dateTime` AND A.expires
    GROUP BY A.id, A.category
) AS closed
GROUP BY closed.category
