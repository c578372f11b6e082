# Shared by the bench scripts: build wf (or time the one WF names), make the
# test data once, warm it.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
if [ -z "${WF:-}" ]; then
  cargo build --release -q
  WF="${CARGO_TARGET_DIR:-$ROOT/target}/release/wf"
fi
DATA=${WF_BENCH_DIR:-/tmp/wf-bench}
RUNS=${RUNS:-7}
mkdir -p "$DATA"
# The name time.sh, report.sh and incremental.sh give the same log (--size 1G --seed 1).
LOG="$DATA/wf2-1G.log"
gen_log() {
  [ -s "$LOG" ] || "$WF" gen wf2 --size 1G --seed 1 -o "$LOG"
}
warm() { cat "$@" > /dev/null; }
need() { command -v "$1" >/dev/null || { echo "bench: '$1' not found (apt-get install $2)" >&2; exit 2; }; }
