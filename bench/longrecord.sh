#!/usr/bin/env bash
# One record as long as a file: a single line of 64 MiB (and of 200 MB with
# BIG=1) through wf count, wf wf2 and wf sql, from the file and from stdin,
# timed against `wc -l` on the same file. Time linear in the record's length
# keeps every ratio small and the same at both sizes (issue 35 asks for within
# 3x of `wc -l`); before the fix, one 50 MB line took wf count 2.6 s and one
# of 200 MB 111 s.
# Usage: bench/longrecord.sh   (RUNS=5 by default; WF_BENCH_DIR=/tmp/wf-bench;
#   WF=path/to/wf times that binary instead of building --release; BIG=1;
#   OLD=path/to/an/older/wf adds its wf sql runs, interleaved with the others)
# On a shared machine read the user and sys columns beside the wall times: a
# run of wf sql here is serial (the sample, then one worker holding the record)
# and its wall time beyond user + sys was time spent waiting for a core
# (`perf sched latency`: 73 switches of the main thread, 3.1 ms average delay,
# at a load average of 9 on 2 cores; bench/results/sqlc-longrecord-2026-11-27.txt).
RUNS=${RUNS:-5}  # before common.sh, whose default is 7
source "$(dirname "$0")/common.sh"

# A file of one line of `bytes` bytes (letters, then a newline).
one_line() {
  local f="$DATA/one-line-$1.txt"
  if [ ! -s "$f" ]; then
    { head -c "$1" /dev/zero | tr '\0' 'x'; echo; } > "$f.tmp" && mv "$f.tmp" "$f"
  fi
  echo "$f"
}

sizes=(67108864)
[ -n "${BIG:-}" ] && sizes+=(200000000)
for n in "${sizes[@]}"; do
  f=$(one_line "$n")
  cat "$f" > /dev/null
  echo "== one line of $n bytes, warm cache, $WF, $(nproc) cores, $(date -u +%F)"
  python3 bench/compare.py --runs "$RUNS" \
    "wc -l=wc -l $f" \
    "wf count=$WF count $f" \
    "wf count <=$WF count < $f" \
    "wf wf2=$WF wf2 $f" \
    "wf wf2 <=$WF wf2 < $f" \
    "wf sql=$WF sql --format fields 'SELECT count(*) FROM logs' $f" \
    "wf sql <=$WF sql --format fields 'SELECT count(*) FROM logs' < $f" \
    ${OLD:+"old wf sql=$OLD sql --format fields 'SELECT count(*) FROM logs' $f"} \
    ${OLD:+"old wf sql <=$OLD sql --format fields 'SELECT count(*) FROM logs' < $f"}
done
