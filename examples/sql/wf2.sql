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
-- Two aggregations, one per key space, each over the table: by uri (every record
-- goes in, so `lines` is a window sum over the groups; a uri that no list counts is
-- dropped by the lists' conditions), and by client and by referrer over the article
-- hits only (GROUPING SETS: the regex runs once per record). DataFusion plans the
-- table once per reference, but `wf sql` gives readers that meet at a UNION ALL one
-- shared scan (see crates/wf-sql/src/share.rs): the log is read and split once. The
-- uri lists are unpivoted by a join with their three names. The bytes field is cast
-- once, on the 200 records whose field has no sign (it sorts at or after '0'); a
-- COALESCE of the cast and the regex became a CASE that cast twice (6% of the
-- instructions). The cast is of the field made NULL elsewhere (a CASE whose result
-- is a column is a null mask in DataFusion; a CASE around the cast filtered the
-- batch and scattered the result, 1% more). The regex takes the leading digits only
-- where the cast found no number and the field starts with a digit. Two forms cost
-- more than they look: a uri made NULL unless the record is counted (a CASE that
-- copies every uri, 10% of the instructions), and `starts_with(uri,
-- '/ongoing/When/')` ahead of the anchored regex (evaluated on every record all the
-- same: DataFusion runs the right side of an AND on the selected rows only when at
-- most 20% of them are; 4%, and 5% as a CASE around the regex).
--
-- Referrers are grouped on the field as it is, tested and cut (its first and last
-- byte, the quotes; a field of one byte is the empty key, as in the report) once per
-- group, not once per hit; two fields that differ only in those bytes are one
-- referrer, so the cut keys are summed again (a few hundred thousand groups against
-- a million hits: 4% less time than cutting every hit's field). The top 10 of a
-- list are among its rows ranked 10 or better by value alone (ties share a rank),
-- so only those are sorted by value and key (2% less than sorting every key of the
-- lists; medians of 7 to 11, 1 GiB log).
WITH f AS (
  SELECT c1 AS client, c7 AS uri, c11 AS ref, c10,
         c6 = '"GET' AND c9 IN ('200', '304') AS rec,
         c6 = '"GET' AND c9 = '404' AS nf,
         c6 = '"GET' AND c9 = '200' AND c10 >= '0' AS b
  FROM logs
),
-- 200 records the leading digits of the bytes field (0 if none), 304 records 0:
-- n is the field as a number; m (in u) is n, or the leading digits where n is NULL.
t AS (SELECT *, try_cast(CASE WHEN b THEN c10 END AS BIGINT) AS n FROM f),
hits AS (
  SELECT client, ref FROM t
  WHERE rec
    AND regexp_like(uri, '^/ongoing/When/[0-9]{3}x/[0-9]{4}/[0-9]{2}/[0-9]{2}/[^ .]+$')
),
u AS (
  SELECT uri, count(*) AS records, coalesce(sum(m), 0) AS nbytes,
         count(*) FILTER (WHERE rec) AS recs, count(*) FILTER (WHERE nf) AS nfs
  FROM (SELECT uri, rec, nf,
               CASE WHEN n IS NULL AND b AND c10 < ':'
                    THEN CAST(regexp_replace(c10, '[^0-9].*$', '') AS BIGINT) ELSE n END AS m
        FROM t)
  GROUP BY uri
),
uc AS (SELECT *, sum(records) OVER () AS lines FROM u),
lists AS (
  SELECT l.list, uri AS key,
         CASE l.list WHEN 'uri_bytes' THEN nbytes WHEN '404s' THEN nfs ELSE recs END AS value,
         lines
  FROM uc CROSS JOIN (VALUES ('uri_hits'), ('uri_bytes'), ('404s')) AS l(list)
  WHERE CASE l.list
          WHEN 'uri_hits' THEN recs > 0
               AND regexp_like(uri, '^/ongoing/When/[0-9]{3}x/[0-9]{4}/[0-9]{2}/[0-9]{2}/[^ .]+$')
          WHEN 'uri_bytes' THEN recs > 0
          ELSE nfs > 0
        END
  UNION ALL
  SELECT list, key, sum(n), NULL
  FROM (SELECT CASE WHEN grouping(client) = 0 THEN 'clients' ELSE 'referrers' END AS list,
               CASE WHEN grouping(client) = 0 THEN client
                    ELSE substr(ref, 2, greatest(length(ref) - 2, 0)) END AS key,
               count(*) AS n
        FROM hits
        GROUP BY GROUPING SETS ((client), (ref))
        HAVING grouping(client) = 0
            OR (ref <> '"-"' AND NOT starts_with(ref, '"http://www.tbray.org/ongoing/')))
  GROUP BY list, key
),
candidates AS (
  SELECT list, key, value, lines,
         rank() OVER (PARTITION BY list ORDER BY value DESC) AS r,
         count(*) OVER (PARTITION BY list) AS keys
  FROM lists
),
ranked AS (
  SELECT list, key, value, lines, keys,
         row_number() OVER (PARTITION BY list ORDER BY value DESC, key) AS rank
  FROM candidates WHERE r <= 10
)
SELECT list, rank, key, value, keys, max(lines) OVER () AS lines
FROM ranked
WHERE rank <= 10
ORDER BY list, rank
