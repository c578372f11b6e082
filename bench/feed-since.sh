#!/usr/bin/env bash
# `wf feed --since <the last hour> -- wc -l` on a 30-day log: the search reads
# the hour's bytes (and the --disorder slack), not the file. Compares two wf
# binaries (OLD, NEW: paths) warm and cold with compare.py, and prints the
# bytes each read: NEW's --stats, and for both the rchar of a shell that
# waited for wf and its workers (/proc/PID/io adds reaped children's reads;
# the workers' pipe reads, about the window's size, are in it too).
# usage: bench/feed-since.sh OLD NEW [LOG [HOURS...]]   (LOG: wf gen wf2 --days 30 --size 1G;
# HOURS: the windows, in hours before the last record, default 1 and 72)
set -euo pipefail
old=$1 new=$2
log=${3:-${WF_BENCH_DIR:-/tmp/wf-bench}/wf2-1G-30d.log}
here=$(dirname "$0")
# The last record's time, less an hour (the log's zone is -0700).
last=$(tail -n 1 "$log" | grep -o '\[[^]]*\]' | head -1 | tr -d '[]')
stamp=$(echo "$last" | sed -E 's#^([0-9]+)/([A-Za-z]+)/([0-9]+):([0-9:]+) (.*)#\1 \2 \3 \4 \5#')
hours=("${@:4}")
[ ${#hours[@]} -gt 0 ] || hours=(1 72)
echo "log: $log ($(stat -c %s "$log") bytes), last record [$last]"
for h in "${hours[@]}"; do
  since=$(date -u -d "$stamp - $h hour" +%Y-%m-%dT%H:%M:%SZ)
  cmd="feed --since $since $log -- wc -l"
  echo
  echo "== the last $h hour(s): wf $cmd"
  echo "lines: old $("$old" $cmd | paste -sd+ | bc) new $("$new" $cmd | paste -sd+ | bc)"
  for b in old new; do
    bin=${!b}
    rchar=$(sh -c "'$bin' $cmd >/dev/null; grep rchar /proc/\$\$/io")
    echo "$b: $rchar"
  done
  "$new" feed --stats --since "$since" "$log" -- wc -l 2>&1 >/dev/null |
    grep -E '^(bytes|records|blocks|bytes skipped|bytes read|time search)'
  echo "warm:"
  python3 "$here/compare.py" --runs 5 --warmup 1 "old=$old $cmd" "new=$new $cmd"
  echo "cold:"
  python3 "$here/compare.py" --runs 3 --cold "$log" "old=$old $cmd" "new=$new $cmd"
done
