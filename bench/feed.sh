#!/usr/bin/env bash
# wf feed vs GNU parallel on a warm 1 GiB generated log, and the awk Wide Finder 2
# reduce under wf feed vs awk alone. Medians of RUNS (default 5) interleaved runs.
# Usage: bench/feed.sh   (RUNS=5; WF_BENCH_DIR=/tmp/wf-bench; SKIP_AWK=1 skips the
# slow awk part; SPLICE=1 adds wf feed with splice instead of pread+write, the
# zero-copy way wf fed files before it had to survive a file truncated under it)
RUNS=${RUNS:-5}
source "$(dirname "$0")/common.sh"
need parallel parallel
need mawk mawk
if ! gen_log 2>/dev/null; then
  # No generator: repeat the sample logs up to 1 GiB.
  LOG="$DATA/feed-fallback-1g.log"
  if [ ! -s "$LOG" ]; then
    logs=("$ROOT"/../shared/data/logs/*.log)
    : > "$LOG"
    while [ "$(stat -c %s "$LOG")" -lt $((1 << 30)) ]; do cat "${logs[@]}" >> "$LOG"; done
  fi
fi
warm "$LOG"
SIZE=$(du -hL "$LOG" | cut -f1)
echo "== wf feed, warm cache, $SIZE log, $(nproc) cores, $(date -u +%F)"
echo "-- line count with 2 workers (ratios: time / wf feed's)"
extra=()
[ "${SPLICE:-0}" = 1 ] && extra+=("wf feed -j 2 (splice)=WF_FEED_SPLICE=1 $WF feed -j 2 $LOG -- wc -l")
python3 bench/compare.py --runs "$RUNS" \
  "wf feed -j 2 -- wc -l=$WF feed -j 2 $LOG -- wc -l" \
  "${extra[@]}" \
  "parallel --pipepart -j 2 wc -l=parallel --pipepart --block -1 -j 2 -a $LOG wc -l" \
  "parallel --pipe -j 2 wc -l=parallel --pipe -j 2 wc -l < $LOG" \
  "wc -l (one process)=wc -l $LOG"
echo "-- one record of 50 and 200 MiB: wf feed -- wc -c beside wc -l (linear: the ratio stays put)"
for mb in 50 200; do
  ONE="$DATA/one-record-${mb}m.txt"
  [ -s "$ONE" ] || { head -c $((mb << 20)) /dev/zero | tr '\0' a; echo; } > "$ONE"
  warm "$ONE"
done
python3 bench/compare.py --runs "$RUNS" \
  "wc -l, 50 MiB=wc -l $DATA/one-record-50m.txt" \
  "wf feed -- wc -c, 50 MiB=$WF feed -j 2 $DATA/one-record-50m.txt -- wc -c" \
  "wc -l, 200 MiB=wc -l $DATA/one-record-200m.txt" \
  "wf feed -- wc -c, 200 MiB=$WF feed -j 2 $DATA/one-record-200m.txt -- wc -c"
[ "${SKIP_AWK:-0}" = 1 ] && exit 0
echo "-- Wide Finder 2 report in awk (examples/wf2): mawk alone vs under wf feed"
A="env LC_ALL=C mawk -f examples/wf2"
python3 bench/compare.py --runs "$RUNS" --warmup 0 \
  "mawk alone=$A/reduce.awk $LOG | $A/combine.awk" \
  "wf feed -j 1=$WF feed -j 1 --combine '$A/combine.awk' $LOG -- $A/reduce.awk" \
  "wf feed -j 2=$WF feed -j 2 --combine '$A/combine.awk' $LOG -- $A/reduce.awk"
