-- q19, top 10 bids of each auction by price, with their rank (a top-N with its rank number).
SELECT *
FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number
    FROM bid
)
WHERE rank_number <= 10
