#!/usr/bin/env bash
# `wf count --since` (the last hour of a log, found by binary search) against
# `wf count` of the whole log and a plain awk filter on the time field, warm
# cache. Checks that the filtered counts agree before timing, then prints
# medians and ratios (bench/compare.py) and the bytes the windowed run read.
# Usage: bench/time.sh [SIZE]   (SIZE of the generated log, default 1G; about
# 32 days of `wf gen wf2` per GiB. RUNS=7; WF_BENCH_DIR=/tmp/wf-bench;
# WF=path/to/wf to time a wf already built instead of building --release.)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
SIZE=${1:-1G}
if [ -z "${WF:-}" ]; then
  cargo build --release -q
  WF="${CARGO_TARGET_DIR:-$ROOT/target}/release/wf"
fi
DATA=${WF_BENCH_DIR:-/tmp/wf-bench}
RUNS=${RUNS:-7}
mkdir -p "$DATA"
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
