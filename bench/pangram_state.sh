#!/usr/bin/env bash
# `wf pangram --state` on a corpus of book text that grew by 1% since the last
# run, against `wf pangram` of the whole corpus, warm cache. The corpus is the
# project's gutenberg sample copied under different names up to SIZE_MB; a
# state is made over it, then 1% of its bytes (more book text) is appended to
# one of its files; the incremental run starts from a copy of that state each
# time (the copy is timed apart). Checks that both outputs are equal before
# timing, then prints medians and ratios (bench/compare.py).
# Usage: bench/pangram_state.sh DIR-of-.txt-books   (SIZE_MB=256, RUNS=7;
# WF=path/to/wf to time a wf already built instead of building --release.)
source "$(dirname "$0")/common.sh"
SRC=${1:?usage: bench/pangram_state.sh DIR-of-.txt-books}
SIZE_MB=${SIZE_MB:-256}
CORPUS="$DATA/pstate-corpus-$SIZE_MB"
BASE="$DATA/pstate-$SIZE_MB.state"
RUN="$DATA/pstate-$SIZE_MB.run.state"
rm -rf "$CORPUS" "$BASE"
mkdir -p "$CORPUS"
i=0
while [ "$(du -sm "$CORPUS" | cut -f1)" -lt "$SIZE_MB" ]; do
  for f in "$SRC"/*.txt; do cp "$f" "$CORPUS/copy$(printf %03d $i)-$(basename "$f")"; done
  i=$((i + 1))
done
"$WF" pangram --state "$BASE" --no-progress "$CORPUS" > /dev/null
total=$(du -cb "$CORPUS"/* | tail -1 | cut -f1)
grow=$((total / 100))
files=("$CORPUS"/*.txt)
GROWN=${files[0]}
head -c "$grow" <(cat "$SRC"/*.txt "$SRC"/*.txt) >> "$GROWN"
warm "$CORPUS"/*
sync
cp "$BASE" "$RUN"
if ! cmp -s <("$WF" pangram --state "$RUN" --no-progress "$CORPUS") <("$WF" pangram --no-progress "$CORPUS"); then
  echo "bench: wf pangram --state and wf pangram disagree on $CORPUS" >&2
  exit 1
fi
echo "== wf pangram on $(du -sh "$CORPUS" | cut -f1) of books in $(ls "$CORPUS" | wc -l) files grown by $grow bytes (1%, appended to one file), state $(stat -c %s "$BASE") bytes, warm cache, $(nproc) cores, $(date -u +%F)"
cp "$BASE" "$RUN"
"$WF" pangram --state "$RUN" --stats --no-progress "$CORPUS" 2>&1 >/dev/null | grep -E '^(bytes|inputs)' || true
python3 bench/compare.py --runs "$RUNS" \
  "wf pangram (full)=$WF pangram --no-progress $CORPUS" \
  "wf pangram --state (1% more)=sh -c 'cp $BASE $RUN && $WF pangram --state $RUN --no-progress $CORPUS'" \
  "cp of the state=cp $BASE $RUN"
rm -rf "$RUN" "$CORPUS" "$BASE"
