#!/usr/bin/env bash
# wf sql beside its peers, warm cache, this machine's cores, in one run:
#   1. status counts over the 1 GiB wf2 log: wc -l, wf sql, DuckDB with regexp_extract
#   2. the Wide Finder 2 report: wf wf2, and examples/sql/wf2.sql over --format fields
#   3. 1BRC on 1 GiB from `wf gen 1brc`: wf sql and DuckDB read_csv, same query, with t
#      a DOUBLE and then a DECIMAL(3,1) on both sides
#   4. memory: GROUP BY client over 20 million distinct clients with --memory 256M (peak RSS)
# Usage: bench/sql.sh   (RUNS=7; DuckDB from $WF_PYTHON, default .venv/bin/python)
source "$(dirname "$0")/common.sh"
PY=${WF_PYTHON:-$ROOT/.venv/bin/python}
"$PY" -c 'import duckdb' 2>/dev/null || { echo "bench: duckdb not importable by $PY (scripts/test makes .venv)" >&2; exit 2; }
gen_log
BRC="$DATA/1brc-56m.txt"
[ -s "$BRC" ] || "$WF" gen 1brc --rows 56000000 --seed 1 -o "$BRC"
warm "$LOG" "$BRC"
duck() { echo "$PY -c \"import duckdb; duckdb.sql('''$1''').fetchall()\""; }
STATUS="SELECT status, count(*) FROM logs GROUP BY status ORDER BY status"
DSTATUS="SELECT regexp_extract(line, '\\\" ([0-9]{3}) ', 1) AS status, count(*) FROM read_csv('$LOG', columns={'line':'VARCHAR'}, delim=E'\\\\x01', quote='', escape='', header=false) GROUP BY 1 ORDER BY 1"
echo "== status counts, warm, $(du -h "$LOG" | cut -f1) log, $(nproc) cores, $(date -u +%F)"
python3 bench/compare.py --runs "$RUNS" \
  "wc -l=wc -l $LOG" \
  "wf sql=$WF sql '$STATUS' $LOG" \
  "duckdb regexp=$(duck "$DSTATUS")"
echo "== the Wide Finder 2 report"
python3 bench/compare.py --runs "$RUNS" \
  "wf wf2=$WF wf2 $LOG" \
  "wf sql wf2.sql=$WF sql --format fields \"\$(cat examples/sql/wf2.sql)\" $LOG"
BQ="SELECT station, min(t), avg(t), max(t) FROM logs GROUP BY station ORDER BY station"
DQ="SELECT station, min(t), avg(t), max(t) FROM read_csv('$BRC', delim=';', header=false, columns={'station':'VARCHAR','t':'DOUBLE'}) GROUP BY station ORDER BY station"
echo "== 1BRC, $(du -h "$BRC" | cut -f1)"
python3 bench/compare.py --runs "$RUNS" \
  "duckdb read_csv=$(duck "$DQ")" \
  "wf sql=$WF sql --format csv --delimiter ';' --no-header --schema 'station:string,t:float' '$BQ' $BRC"
echo "== 1BRC with t DECIMAL(3,1) on both sides (exact averages, the same at every -j)"
python3 bench/compare.py --runs "$RUNS" \
  "duckdb read_csv=$(duck "${DQ/\'DOUBLE\'/\'DECIMAL(3,1)\'}")" \
  "wf sql=$WF sql --format csv --delimiter ';' --no-header --schema 'station:string,t:decimal(3,1)' '$BQ' $BRC"
MANY="$DATA/clients-20m.log"
[ -s "$MANY" ] || "$PY" - "$MANY" <<'PYEOF'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(20_000_000):
        f.write('10.%d.%d.%d - - [25/Nov/2026:10:00:00 +0000] "GET /x HTTP/1.1" 200 %d "-" "b"\n'
                % (i >> 16, (i >> 8) & 255, i & 255, i % 1000))
PYEOF
echo "== 20 million distinct clients, --memory 256M: time, peak RSS"
/usr/bin/time -f "wall %e s, peak RSS %M KiB" "$WF" sql --memory 256M \
  'SELECT client, count(*) AS n FROM logs GROUP BY client ORDER BY n DESC, client LIMIT 10' "$MANY"
