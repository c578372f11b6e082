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
-- one GROUPING SETS aggregation, unpivoted by a join with the five list names. Every
-- record goes into it (a record that is not a counted GET has a NULL uri), so the
-- `lines` total is a window sum over the uri groups, not a second scan. The client
-- and referrer of a record that is not an article hit are NULL before grouping, so
-- those sets hash one NULL group instead of 4 million strings; the bytes field is
-- cast directly when it is all digits, the regex only decides the rest. Together
-- 2.26 s to 1.5-1.6 s on the 1 GiB log (same output, md5 compared).
WITH t AS (
  SELECT c1 AS client, c7 AS uri, c11 AS ref,
         c6 = '"GET' AND c9 IN ('200', '304') AS rec,
         c6 = '"GET' AND c9 = '404' AS nf,
         -- 200 records the leading digits of the bytes field (0 if none), 304 records 0.
         CASE WHEN c9 <> '200' OR c6 <> '"GET' THEN 0
              WHEN c10 >= '0' AND c10 < ':' AND try_cast(c10 AS BIGINT) IS NOT NULL
              THEN COALESCE(try_cast(c10 AS BIGINT), 0)
              ELSE COALESCE(CAST(NULLIF(regexp_replace(c10, '[^0-9].*$', ''), '') AS BIGINT), 0)
         END AS n
  FROM logs
),
a AS (
  SELECT client, uri, ref, rec, nf, n,
         CASE WHEN rec
              THEN regexp_like(uri, '^/ongoing/When/[0-9]{3}x/[0-9]{4}/[0-9]{2}/[0-9]{2}/[^ .]+$')
              ELSE false END AS hit
  FROM t
),
agg AS (
  SELECT uri, client, referrer,
         grouping(uri) AS gu, grouping(client) AS gc,
         count(*) AS records,
         count(*) FILTER (WHERE hit) AS hits,
         sum(n) AS nbytes,
         count(*) FILTER (WHERE rec) AS recs,
         count(*) FILTER (WHERE nf) AS nfs
  FROM (
    SELECT CASE WHEN rec OR nf THEN uri END AS uri,
           CASE WHEN hit THEN client END AS client,
           CASE WHEN hit AND ref IS NOT NULL AND ref <> '"-"'
                     AND NOT starts_with(ref, '"http://www.tbray.org/ongoing/')
                THEN substr(ref, 2, length(ref) - 2) END AS referrer,
           rec, nf, n, hit
    FROM a
  )
  GROUP BY GROUPING SETS ((uri), (client), (referrer))
),
counted AS (
  SELECT *, sum(CASE WHEN gu = 0 THEN records ELSE 0 END) OVER () AS lines FROM agg
),
lists AS (
  SELECT l.list,
         CASE WHEN l.list = 'clients' THEN client
              WHEN l.list = 'referrers' THEN referrer
              ELSE uri END AS key,
         CASE l.list WHEN 'uri_bytes' THEN nbytes WHEN '404s' THEN nfs ELSE hits END AS value,
         lines
  FROM counted CROSS JOIN (VALUES ('uri_hits'), ('uri_bytes'), ('404s'), ('clients'), ('referrers')) AS l(list)
  WHERE CASE l.list
          WHEN 'uri_hits' THEN gu = 0 AND hits > 0
          WHEN 'uri_bytes' THEN gu = 0 AND recs > 0
          WHEN '404s' THEN gu = 0 AND nfs > 0
          WHEN 'clients' THEN gc = 0 AND hits > 0
          ELSE gu = 1 AND gc = 1 AND referrer IS NOT NULL
        END
),
ranked AS (
  SELECT list, key, value, lines,
         row_number() OVER (PARTITION BY list ORDER BY value DESC, key) AS rank,
         count(*) OVER (PARTITION BY list) AS keys
  FROM lists
)
SELECT list, rank, key, value, keys, lines
FROM ranked
WHERE rank <= 10
ORDER BY list, rank
