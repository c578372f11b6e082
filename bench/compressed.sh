#!/usr/bin/env bash
# Compressed inputs beside the usual tools, warm cache, this machine's cores, in one run:
#   1. 16 rotated gzip logs of 64 MiB each: wf count DIR and wf wf2 DIR against zcat | wc -l
#   2. one multi-frame zstd log of 1 GiB (pzstd): wf count against zstd -dc | wc -l
#   3. one single-member gzip log of 1 GiB: wf wf2 against gzip -dc, pigz -dc and
#      rapidgzip -P N -d (the parse hidden behind the decoding?)
#   4. one BGZF log of 1 GiB (bgzip): wf count and wf wf2 against bgzip -@N -dc
# Usage: bench/compressed.sh   (RUNS=7; rapidgzip from $WF_PYTHON's bin, default .venv)
source "$(dirname "$0")/common.sh"
need pigz pigz
need pzstd zstd
need bgzip tabix
PY=${WF_PYTHON:-$ROOT/.venv/bin/python}
RAPID="$(dirname "$PY")/rapidgzip"
N=$(nproc)
gen_log
ROT="$DATA/rotated-gz"
if [ ! -s "$ROT/access.log.16.gz" ]; then
  mkdir -p "$ROT"
  for k in $(seq 1 16); do
    "$WF" gen wf2 --size 64M --seed "$k" | gzip -c > "$ROT/access.log.$k.gz"
  done
fi
[ -s "$LOG.pzst" ] || pzstd -q -p "$N" -c "$LOG" > "$LOG.pzst"
[ -s "$LOG.gz" ] || gzip -c "$LOG" > "$LOG.gz"
[ -s "$LOG.bgz" ] || bgzip -@ "$N" -c "$LOG" > "$LOG.bgz"
warm "$ROT"/*.gz "$LOG.pzst" "$LOG.gz" "$LOG.bgz"
echo "== 16 rotated gzip logs of 64 MiB ($(du -sh "$ROT" | cut -f1) compressed), warm, $N cores, $(date -u +%F)"
python3 bench/compare.py --runs "$RUNS" \
  "zcat | wc -l=sh -c 'zcat $ROT/*.gz | wc -l'" \
  "wf count=$WF count $ROT" \
  "wf wf2=$WF wf2 $ROT"
echo "== one multi-frame zstd log of 1 GiB (pzstd -p $N, $(du -h "$LOG.pzst" | cut -f1))"
python3 bench/compare.py --runs "$RUNS" \
  "zstd -dc | wc -l=sh -c 'zstd -dc $LOG.pzst | wc -l'" \
  "wf count=$WF count $LOG.pzst" \
  "wf wf2=$WF wf2 $LOG.pzst"
echo "== one single-member gzip log of 1 GiB (gzip -6, $(du -h "$LOG.gz" | cut -f1))"
RAPIDCMD=()
[ -x "$RAPID" ] && RAPIDCMD=("rapidgzip -P $N=sh -c '$RAPID -P $N -d -c $LOG.gz > /dev/null'")
python3 bench/compare.py --runs "$RUNS" \
  "gzip -dc=sh -c 'gzip -dc $LOG.gz > /dev/null'" \
  "pigz -dc=sh -c 'pigz -dc $LOG.gz > /dev/null'" \
  "${RAPIDCMD[@]}" \
  "wf count=$WF count $LOG.gz" \
  "wf wf2=$WF wf2 $LOG.gz"
echo "== one BGZF log of 1 GiB (bgzip, $(du -h "$LOG.bgz" | cut -f1))"
python3 bench/compare.py --runs "$RUNS" \
  "bgzip -dc=sh -c 'bgzip -@ $N -dc $LOG.bgz > /dev/null'" \
  "wf count=$WF count $LOG.bgz" \
  "wf wf2=$WF wf2 $LOG.bgz"
