-- q8, monitor new users: people who opened an auction in the tumbling 10 s window they joined in.
SELECT P.id, P.name, P.window_start
FROM (
    SELECT id, name, window_start, window_end
    FROM TABLE(TUMBLE(TABLE person, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
    GROUP BY id, name, window_start, window_end
) AS P
JOIN (
    SELECT seller, window_start, window_end
    FROM TABLE(TUMBLE(TABLE auction, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
    GROUP BY seller, window_start, window_end
) AS A
ON P.id = A.seller AND P.window_start = A.window_start AND P.window_end = A.window_end
