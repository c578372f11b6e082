#!/usr/bin/env bash
# wf pangram beside wc -l, a naive single-threaded implementation, and the same
# naive implementation through xargs -P 2, on a >= 500 MB corpus of real book text
# (the project's gutenberg sample copied many times under different names).
# Then cold: wf pangram vs cat through xargs -P 1, 2, 4, 8.
# Usage: bench/pangram.sh CORPUS_SOURCE_DIR   (RUNS=5, SLOW_RUNS=3)
source "$(dirname "$0")/common.sh"
SRC=${1:?usage: bench/pangram.sh DIR-of-.txt-books}
SLOW_RUNS=${SLOW_RUNS:-3}
CORPUS="$DATA/corpus"
if [ ! -d "$CORPUS" ]; then
  mkdir -p "$CORPUS"
  i=0
  while [ "$(du -sm "$CORPUS" | cut -f1)" -lt 520 ]; do
    for f in "$SRC"/*.txt; do cp "$f" "$CORPUS/copy$(printf %03d $i)-$(basename "$f")"; done
    i=$((i + 1))
  done
fi
find "$CORPUS" -type f | sort > "$DATA/corpus.list"
warm "$CORPUS"/*
echo "== wf pangram, warm cache, $(du -sh "$CORPUS" | cut -f1) in $(wc -l < "$DATA/corpus.list") files, $(nproc) cores, $(date -u +%F)"
python3 bench/compare.py --runs "$RUNS" \
  "wc -l=xargs -a $DATA/corpus.list wc -l" \
  "wf pangram=$WF pangram $CORPUS" \
  "wf pangram -j 1=$WF pangram -j 1 $CORPUS"
# The naive peers read about 1 MB/s: time them on every 10th file (about 52 MB),
# so that SLOW_RUNS runs fit in minutes; the ratios are per byte all the same.
awk 'NR % 10 == 1' "$DATA/corpus.list" > "$DATA/corpus-tenth.list"
echo "== naive peers on every 10th file ($(xargs -a "$DATA/corpus-tenth.list" du -cb | tail -1 | cut -f1) bytes, SLOW_RUNS=$SLOW_RUNS), ratios to wc -l"
python3 bench/compare.py --runs "$SLOW_RUNS" --warmup 1 \
  "wc -l=xargs -a $DATA/corpus-tenth.list wc -l" \
  "wf pangram=xargs -a $DATA/corpus-tenth.list $WF pangram" \
  "naive=xargs -a $DATA/corpus-tenth.list python3 bench/naive_pangram.py" \
  "naive xargs -P 2=xargs -a $DATA/corpus-tenth.list -n 4 -P 2 python3 bench/naive_pangram.py | sort -n | head"
echo "== cold cache (evicted before every run): wf pangram vs cat with xargs -P"
python3 bench/compare.py --runs "$RUNS" --cold-list "$DATA/corpus.list" \
  "cat -P 1=xargs -a $DATA/corpus.list -n 64 -P 1 cat" \
  "cat -P 2=xargs -a $DATA/corpus.list -n 64 -P 2 cat" \
  "cat -P 4=xargs -a $DATA/corpus.list -n 64 -P 4 cat" \
  "cat -P 8=xargs -a $DATA/corpus.list -n 64 -P 8 cat" \
  "wf pangram=$WF pangram $CORPUS"
