-- SQL around streamwin's grouped windows, as Spark SQL is written around window(). Each sw_* query
-- that has a window() counterpart is followed by it; the outputs match except for `kind`.
-- Views: readings(k, ts, v) and events(k, seq, ts, v), created by tests/test_sql_golden.py.

-- The grouped window is named `window`: its fields in SELECT
SELECT k, window.start, window.end, count(*) AS n FROM readings GROUP BY k, sw_tumbling(ts, '10 seconds');
SELECT k, window.start, window.end, count(*) AS n FROM readings GROUP BY k, window(ts, '10 seconds');
SELECT k, window.start, window.kind, sum(v) AS s FROM readings GROUP BY k, sw_hopping(ts, '10 seconds', '5 seconds');
SELECT k, WINDOW.Start, count(*) AS n FROM readings GROUP BY k, sw_session(ts, '4 seconds');
SELECT k, window.*, count(*) AS n FROM readings GROUP BY k, sw_tumbling(ts, '10 seconds');
SELECT k, window.start, window.end, window.kind, sum(v) AS s FROM events GROUP BY k, sw_count(2, 'order_by', seq);
SELECT k, sw_tumbling(ts, '10 seconds').start AS start, count(*) AS n FROM readings GROUP BY k, sw_tumbling(ts, '10 seconds');

-- Without an alias the window column is named `window`, as Spark names its grouped window
SELECT k, sw_tumbling(ts, '10 seconds'), count(*) AS n FROM readings GROUP BY k, sw_tumbling(ts, '10 seconds');
SELECT k, window(ts, '10 seconds'), count(*) AS n FROM readings GROUP BY k, window(ts, '10 seconds');

-- HAVING with aggregates, select-list aliases and window fields
SELECT sw_tumbling(ts, '10 seconds') AS window, count(*) AS cnt FROM readings GROUP BY sw_tumbling(ts, '10 seconds') HAVING count(*) > 2;
SELECT window(ts, '10 seconds') AS window, count(*) AS cnt FROM readings GROUP BY window(ts, '10 seconds') HAVING count(*) > 2;
SELECT k, sw_tumbling(ts, '10 seconds') AS window, count(*) AS cnt FROM readings GROUP BY k, sw_tumbling(ts, '10 seconds') HAVING cnt > 1;
SELECT k, count(*) AS cnt FROM readings GROUP BY k, sw_tumbling(ts, '10 seconds') HAVING window.start >= TIMESTAMP'2024-01-01 00:00:10' AND sum(v) > 5;
SELECT k, count(*) AS cnt FROM readings GROUP BY k, window(ts, '10 seconds') HAVING window.start >= TIMESTAMP'2024-01-01 00:00:10' AND sum(v) > 5;

-- ORDER BY window fields, selected or not
SELECT k, window.start, count(*) AS n FROM readings GROUP BY k, sw_tumbling(ts, '10 seconds') ORDER BY window.start DESC, k;
SELECT k, count(*) AS n FROM readings GROUP BY k, sw_tumbling(ts, '10 seconds') ORDER BY window.end, k;
SELECT k, count(*) AS n FROM readings GROUP BY k, window(ts, '10 seconds') ORDER BY window.end, k;

-- GROUP BY ordinals, ALL and select-list aliases
SELECT k, sw_tumbling(ts, '10 seconds') AS w, count(*) AS n FROM readings GROUP BY 1, 2;
SELECT k, sw_tumbling(ts, '10 seconds') AS w, count(*) AS n FROM readings GROUP BY ALL;
SELECT k, sw_tumbling(ts, '10 seconds') AS w, count(*) AS n FROM readings GROUP BY k, w;
SELECT k, window(ts, '10 seconds') AS w, count(*) AS n FROM readings GROUP BY k, w;

-- ROLLUP, CUBE and GROUPING SETS
SELECT k, window.start, count(*) AS n FROM readings GROUP BY ROLLUP(k, sw_tumbling(ts, '10 seconds'));
SELECT k, window.start, count(*) AS n FROM readings GROUP BY ROLLUP(k, window(ts, '10 seconds'));
SELECT k, window.start, count(*) AS n FROM readings GROUP BY CUBE(k, sw_tumbling(ts, '10 seconds'));
SELECT k, window.start, count(*) AS n FROM readings GROUP BY CUBE(k, window(ts, '10 seconds'));
SELECT k, window.end, sum(v) AS s FROM readings GROUP BY GROUPING SETS ((k), (k, sw_tumbling(ts, '10 seconds')));
SELECT k, window.end, sum(v) AS s FROM readings GROUP BY GROUPING SETS ((k), (k, window(ts, '10 seconds')));

-- Durations as window() takes them: strings, intervals, or whole microseconds
SELECT k, window.start, count(*) AS n FROM readings GROUP BY k, sw_tumbling(ts, 10000000);
SELECT k, window.start, count(*) AS n FROM readings GROUP BY k, window(ts, 10000000);
SELECT k, window.start, window.end, count(*) AS n FROM readings GROUP BY k, sw_hopping(ts, 10000000, 5000000, 'offset', 1000000);
SELECT k, window.start, window.end, count(*) AS n FROM readings GROUP BY k, window(ts, 10000000, 5000000, 1000000);
SELECT k, window.start, count(*) AS n FROM readings GROUP BY k, sw_hopping(ts, INTERVAL 10 SECONDS, INTERVAL '5' SECOND);

-- Clear errors
SELECT k, window.start FROM readings GROUP BY k;
SELECT k, sw_tumbling(ts, '10 seconds') AS w, count(*) AS n FROM readings GROUP BY k;
SELECT k, window.start, count(*) AS n FROM readings GROUP BY k, sw_tumbling(ts, 1.5);
SELECT k, window.start, count(*) AS n FROM readings GROUP BY k, sw_tumbling(ts, '10 seconds', 'lateness', 5);
