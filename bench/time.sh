#!/usr/bin/env bash
# `wf count --since` (the last hour of a log, found by binary search) against
# `wf count` of the whole log and a plain awk filter on the time field, warm
# cache. Checks that the filtered counts agree before timing, then prints
# medians and ratios (bench/compare.py) and the bytes the windowed run read.
# Usage: bench/time.sh [SIZE]   (SIZE of the generated log, default 1G; about
# 32 days of `wf gen wf2` per GiB. RUNS=7; WF_BENCH_DIR=/tmp/wf-bench;
# WF=path/to/wf to time a wf already built instead of building --release;
# SQL_ONLY=1 for the SQL part alone.)
source "$(dirname "$0")/common.sh"
SIZE=${1:-1G}
if [ -z "${SQL_ONLY:-}" ]; then  # SQL_ONLY=1: only the SQL part below
LOG="$DATA/wf2-$SIZE.log"
[ -s "$LOG" ] || "$WF" gen wf2 --size "$SIZE" --seed 1 -o "$LOG"

# The last record's time, one hour earlier, as ISO 8601 with its offset.
SINCE=$(tail -n 1 "$LOG" | python3 -c '
import sys, datetime
f = sys.stdin.read().split("[", 1)[1].split("]", 1)[0]
t = datetime.datetime.strptime(f, "%d/%b/%Y:%H:%M:%S %z") - datetime.timedelta(hours=1)
print(t.isoformat())')
# The same bound as a number yyyymmddHHMMSS in the log's own zone (-0700),
# for awk, which compares each line's time field converted alike.
KEY=$(python3 -c "import datetime,sys; print(datetime.datetime.fromisoformat('$SINCE').strftime('%Y%m%d%H%M%S'))")
AWK='BEGIN { split("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec", m, " "); for (i in m) mon[m[i]] = i }
{ if (split($4, a, /[\[\/:]/) != 7) next
  k = sprintf("%04d%02d%02d%02d%02d%02d", a[4], mon[a[3]], a[2], a[5], a[6], a[7])
  if (k >= key) n++ }
END { print n + 0 }'

cat "$LOG" > /dev/null
got=$("$WF" count --since "$SINCE" "$LOG" | cut -d' ' -f1)
want=$(mawk -v key="$KEY" "$AWK" "$LOG")
if [ "$got" != "$want" ]; then
  echo "bench: wf count --since $SINCE says $got records, awk $want" >&2
  exit 1
fi
echo "== the last hour (since $SINCE: $got records) of a $(du -h "$LOG" | cut -f1) log, warm cache, $(nproc) cores, $(date -u +%F)"
"$WF" count --since "$SINCE" --stats --no-progress "$LOG" 2>&1 >/dev/null |
  grep -E '^(bytes|bytes skipped|bytes read by)' || true
echo "of $(stat -c %s "$LOG") bytes"
printf '%s\n' "$AWK" > "$DATA/time-filter.awk"
python3 bench/compare.py --runs "$RUNS" \
  "wf count --since=$WF count --since $SINCE $LOG" \
  "wf count=$WF count $LOG" \
  "mawk filter=mawk -v key=$KEY -f $DATA/time-filter.awk $LOG"
fi

# The same question in SQL (issue 39): the last hour of a log covering 30 days
# (`wf gen wf2 --days 30`), `wf sql ... WHERE time >= TIMESTAMP '...'` with
# the time push-down (the scan seeks the byte span, as --since does), the
# same query with it off (WF_TIME_PUSHDOWN=0: the whole log parsed and
# filtered) and DuckDB (read_csv of the lines, regexp_extract and strptime of
# the time). The answers are checked to agree first; cold runs (the log
# evicted from the page cache before each) as the issue asks, then warm.
# PY=path/to/python with duckdb (default: .venv/bin/python); COLD_RUNS=3.
PY=${PY:-$ROOT/.venv/bin/python}
LOG30="$DATA/wf2-$SIZE-30d.log"
[ -s "$LOG30" ] || "$WF" gen wf2 --size "$SIZE" --days 30 --seed 1 -o "$LOG30"
SINCE30=$(tail -n 1 "$LOG30" | python3 -c '
import sys, datetime
f = sys.stdin.read().split("[", 1)[1].split("]", 1)[0]
t = datetime.datetime.strptime(f, "%d/%b/%Y:%H:%M:%S %z") - datetime.timedelta(hours=1)
print(t.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))')
Q="SELECT count(*) AS n, sum(bytes) AS b FROM logs WHERE time >= TIMESTAMP '$SINCE30'"
cat > "$DATA/time-duck.py" <<'PYEOF'
import sys, duckdb
log, since = sys.argv[1], sys.argv[2]
sep = chr(1)  # no line holds it: each line is one column
q = f"""
SELECT count(*) AS n, sum(b) AS b FROM (
  SELECT try_strptime(regexp_extract(line, '\\[([^\\]]+)\\]', 1), '%d/%b/%Y:%H:%M:%S %z') AS t,
         TRY_CAST(regexp_extract(line, '^\\S+ \\S+ \\S+ \\[[^\\]]+\\] "[^"]*" \\d+ (\\d+)', 1) AS BIGINT) AS b
  FROM read_csv('{log}', columns = {{'line': 'VARCHAR'}}, sep = '{sep}', quote = '', escape = '',
                header = false, auto_detect = false))
WHERE t >= TIMESTAMPTZ '{since}'"""
n, b = duckdb.sql(q).fetchall()[0]
print(n, b)
PYEOF
cat "$LOG30" > /dev/null
wf_ans=$("$WF" sql --csv --no-progress "$Q" "$LOG30" | tail -n 1 | tr ',' ' ')
off_ans=$(WF_TIME_PUSHDOWN=0 "$WF" sql --csv --no-progress "$Q" "$LOG30" | tail -n 1 | tr ',' ' ')
duck_ans=$("$PY" "$DATA/time-duck.py" "$LOG30" "$SINCE30")
if [ "$wf_ans" != "$off_ans" ] || [ "$wf_ans" != "$duck_ans" ]; then
  echo "bench: answers differ: wf sql '$wf_ans', without push-down '$off_ans', duckdb '$duck_ans'" >&2
  exit 1
fi
echo
echo "== SQL: the last hour (since $SINCE30: $wf_ans [count, sum of bytes]) of a 30-day $(du -h "$LOG30" | cut -f1) log, $(nproc) cores, $(date -u +%F)"
echo "query: $Q"
"$WF" sql --stats --no-progress "$Q" "$LOG30" 2>&1 >/dev/null | grep -E '^(wall time|bytes:)|time push-down' || true
WF_TIME_PUSHDOWN=0 "$WF" sql --stats --no-progress "$Q" "$LOG30" 2>&1 >/dev/null |
  grep -E '^bytes:' | sed 's/^/without push-down: /' || true
echo "of $(stat -c %s "$LOG30") bytes"
SQLS=(
  "wf sql=$WF sql --no-progress \"$Q\" $LOG30"
  "wf sql, no push-down=WF_TIME_PUSHDOWN=0 $WF sql --no-progress \"$Q\" $LOG30"
  "duckdb=$PY $DATA/time-duck.py $LOG30 $SINCE30"
)
echo "-- cold (evicted and primed before every run)"
python3 bench/compare.py --runs "${COLD_RUNS:-3}" --cold "$LOG30" "${SQLS[@]}"
echo "-- warm"
python3 bench/compare.py --runs "${COLD_RUNS:-3}" "${SQLS[@]}"
