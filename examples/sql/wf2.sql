-- The Wide Finder 2 report (Tim Bray, 2008) as SQL over `--format fields` (records
-- split on runs of whitespace, as the report's own `split`):
--
--   wf sql --format fields --json "$(cat examples/sql/wf2.sql)" access.log
--
-- One row per entry of the five top-10 lists: list, rank, key, value; `keys` is the
-- number of keys of the list (the report's resources, 404s and clients) and `lines`
-- the number of records. Fields: c1 client, c6 "GET, c7 uri, c9 status, c10 bytes,
-- c11 referrer (in quotes).
--
-- Shaped for one scan: DataFusion inlines a CTE at every use, so the lists come from
-- one GROUPING SETS aggregation, unpivoted by a join with the five list names, and
-- only `count(*)` (which builds no column) reads the log a second time.
WITH t AS (
  SELECT c1 AS client, c7 AS uri, c9 AS status,
         c9 IN ('200', '304') AS rec,
         -- 200 records the leading digits of the bytes field (0 if none), 304 records 0.
         CASE WHEN c9 = '200'
              THEN COALESCE(CAST(NULLIF(regexp_replace(c10, '[^0-9].*$', ''), '') AS BIGINT), 0)
              ELSE 0 END AS n,
         regexp_like(c7, '^/ongoing/When/[0-9]{3}x/[0-9]{4}/[0-9]{2}/[0-9]{2}/[^ .]+$') AS article,
         c11 AS ref
  FROM logs
  WHERE c6 = '"GET' AND c9 IN ('200', '304', '404')
),
a AS (
  SELECT uri, client, status, rec, n, article,
         CASE WHEN rec AND article AND ref IS NOT NULL AND ref <> '"-"'
                   AND NOT starts_with(ref, '"http://www.tbray.org/ongoing/')
              THEN substr(ref, 2, length(ref) - 2) END AS referrer
  FROM t
),
agg AS (
  SELECT uri, client, referrer,
         grouping(uri) AS gu, grouping(client) AS gc,
         count(*) FILTER (WHERE rec AND article) AS hits,
         sum(n) FILTER (WHERE rec) AS nbytes,
         count(*) FILTER (WHERE rec) AS recs,
         count(*) FILTER (WHERE status = '404') AS nf
  FROM a
  GROUP BY GROUPING SETS ((uri), (client), (referrer))
),
lists AS (
  SELECT l.list,
         CASE WHEN l.list = 'clients' THEN client
              WHEN l.list = 'referrers' THEN referrer
              ELSE uri END AS key,
         CASE l.list WHEN 'uri_bytes' THEN nbytes WHEN '404s' THEN nf ELSE hits END AS value
  FROM agg CROSS JOIN (VALUES ('uri_hits'), ('uri_bytes'), ('404s'), ('clients'), ('referrers')) AS l(list)
  WHERE CASE l.list
          WHEN 'uri_hits' THEN gu = 0 AND hits > 0
          WHEN 'uri_bytes' THEN gu = 0 AND recs > 0
          WHEN '404s' THEN gu = 0 AND nf > 0
          WHEN 'clients' THEN gc = 0 AND hits > 0
          ELSE gu = 1 AND gc = 1 AND referrer IS NOT NULL
        END
),
ranked AS (
  SELECT list, key, value,
         row_number() OVER (PARTITION BY list ORDER BY value DESC, key) AS rank,
         count(*) OVER (PARTITION BY list) AS keys
  FROM lists
)
SELECT list, rank, key, value, keys, (SELECT count(*) FROM logs) AS lines
FROM ranked
WHERE rank <= 10
ORDER BY list, rank
