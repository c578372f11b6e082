#!/usr/bin/env bash
# wf report beside wf wf2 and GoAccess (same log format, --no-ip-validation so
# that host-name clients are read as GoAccess users' logs are), on one warm
# generated log: interleaved runs, medians (bench/compare.py).
#   1. wf wf2, wc -l, wf report (and OLD's, to measure a change): ratios to wf wf2,
#      the log read before every run (wf leaves a file found cached as it is, but a
#      cold read of a log over a quarter of the memory is not kept: --page-cache).
#   2. GoAccess first, then wf report: ratios to GoAccess, warm (the log is
#      read before every run: GoAccess's long runs let the host reclaim it).
#   3. With COLD=1, the same cold: the log evicted from the page cache before
#      every run (bench/compare.py --cold).
# Sections 2 and 3 also give each command's peak RSS (the largest of its runs,
# /usr/bin/time) and the load average before and after.
# Usage: bench/report.sh [SIZE]   (SIZE of the log, default 256M; RUNS=5 fast,
#        RUNS=0 skips section 1; SLOW_RUNS=3 for GoAccess; COLD=1 COLD_RUNS=1;
#        WF=path/to/wf skips the release build;
#        OLD=path/to/another/wf adds its wf report beside this one's;
#        PAIRED=3 runs wf report -o html 3 times beside each GoAccess run)
# A 10 GiB log: RUNS=0 SLOW_RUNS=1 COLD=1 bench/report.sh 10G (GoAccess takes
# tens of minutes a run there).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
SIZE=${1:-256M}
RUNS=${RUNS:-5}
SLOW_RUNS=${SLOW_RUNS:-3}
if [ -z "${WF:-}" ]; then
  cargo build --release -q
  WF="${CARGO_TARGET_DIR:-$ROOT/target}/release/wf"
fi
command -v goaccess >/dev/null || { echo "bench: 'goaccess' not found (apt-get install goaccess)" >&2; exit 2; }
DATA=${WF_BENCH_DIR:-/tmp/wf-bench}
mkdir -p "$DATA"
LOG="$DATA/wf2-$SIZE.log"
[ -s "$LOG" ] || "$WF" gen wf2 --size "$SIZE" --seed 1 -o "$LOG"
cat "$LOG" > /dev/null
RSS="$DATA/report-rss"
rm -rf "$RSS" && mkdir -p "$RSS"
# timed NAME CMD...: CMD with its peak RSS appended to $RSS/NAME
timed() { local n=$1; shift; echo "/usr/bin/time -f %M -a -o $RSS/$n $*"; }
peaks() {
  for f in "$RSS"/*; do
    [ -e "$f" ] && echo "peak RSS $(basename "$f"): $(sort -n "$f" | tail -1) KiB"
  done
  rm -f "$RSS"/*
}
GA="goaccess $LOG --log-format=COMBINED --no-global-config --no-ip-validation --no-progress"
old=()
if [ -n "${OLD:-}" ]; then
  old=("old wf report=$OLD report $LOG" "old wf report -o html=$OLD report -o $DATA/report-old.html $LOG")
fi
echo "== wf report, warm cache, $(du -h "$LOG" | cut -f1) log ($(wc -l < "$LOG") lines), $(nproc) cores, $(date -u +%F)"
if [ "$RUNS" -gt 0 ]; then
  echo "== ratios to wf wf2 (RUNS=$RUNS)"
  python3 bench/compare.py --runs "$RUNS" --warm "$LOG" \
    "wf wf2=$WF wf2 $LOG" \
    "wc -l=wc -l $LOG" \
    "${old[@]}" \
    "wf report=$WF report $LOG" \
    "wf report -o html=$WF report -o $DATA/report.html $LOG"
fi
# PAIRED=K: wf report -o html K times beside each GoAccess run (rows "#2"..),
# so that the ratio to GoAccess is not that of one run of wf.
more=()
for k in $(seq 2 "${PAIRED:-1}"); do
  more+=("wf report -o html #$k=$(timed wf-report "$WF" report -o "$DATA/report.html" "$LOG")")
done
slow() {
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  python3 bench/compare.py --runs "$1" --warmup 0 "${@:2}" \
    "goaccess -o html=$(timed goaccess "$GA" -o "$DATA/goaccess.html")" \
    "${old[@]:1}" \
    "wf report -o html=$(timed wf-report "$WF" report -o "$DATA/report.html" "$LOG")" \
    "${more[@]}" \
    "wf wf2=$(timed wf-wf2 "$WF" wf2 "$LOG")"
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  peaks
}
echo "== ratios to GoAccess, warm: the log read before every run (SLOW_RUNS=$SLOW_RUNS)"
slow "$SLOW_RUNS" --warm "$LOG"
if [ "${COLD:-0}" = 1 ]; then
  echo "== ratios to GoAccess, cold: evicted before every run (COLD_RUNS=${COLD_RUNS:-1})"
  slow "${COLD_RUNS:-1}" --cold "$LOG"
fi
