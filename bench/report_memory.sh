#!/usr/bin/env bash
# wf report's peak RSS on a log of 20 million distinct clients and 5 million
# distinct URLs (issue 38: "under 1 GiB of RSS"), and GoAccess's on the same
# file if GOACCESS=1 (it may take many minutes and many GB).
# The log (made once, with awk, in $WF_BENCH_DIR, default /tmp/wf-bench):
# LINES lines (default 25,000,000) over 7 days in time order; line i's client
# is i mod CLIENTS (CLIENTS=20,000,000: the first CLIENTS lines are all new
# clients; one in four an IPv6 address), its URL (i * 7919) mod URLS
# (URLS=5,000,000; a bijection on each block of URLS lines, so every URL
# comes), one in four a .png; 12 user agents, 1,000 referrers, 404s, 304s, 500s.
# Usage: WF=path/to/wf bench/report_memory.sh [-- extra wf report args]
#        (e.g. -- --memory 512M; -j is 2 unless given)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WF=${WF:?set WF=path/to/wf}
LINES=${LINES:-25000000}
CLIENTS=${CLIENTS:-20000000}
URLS=${URLS:-5000000}
DATA=${WF_BENCH_DIR:-/tmp/wf-bench}
LOG="$DATA/report-${CLIENTS}c-${URLS}u-${LINES}l.log"
mkdir -p "$DATA"
if [ ! -s "$LOG" ]; then
  echo "== making $LOG"
  awk -v n="$LINES" -v nc="$CLIENTS" -v nu="$URLS" 'BEGIN {
    split("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36|Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0|Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15|Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1|Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)|Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)|Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)|Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)|curl/8.5.0|Wget/1.21.4|python-requests/2.31.0|Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36", ag, "|")
    t0 = 0; span = 7 * 86400
    for (i = 0; i < n; i++) {
      c = i % nc
      if (c % 4 == 3) client = sprintf("2001:db8:%x:%x::%x", int(c / 16777216), int(c / 65536) % 256, c % 65536)
      else client = sprintf("%d.%d.%d.%d", 11 + int(c / 16777216), int(c / 65536) % 256, int(c / 256) % 256, c % 256)
      u = (i * 7919) % nu
      url = (u % 4 == 0) ? sprintf("/img/%d.png", u) : sprintf("/page/%d?id=%d", u, u % 97)
      t = t0 + int(i * span / n)
      d = 1 + int(t / 86400); h = int(t / 3600) % 24; m = int(t / 60) % 60; s = t % 60
      st = (i % 20 == 0) ? 404 : (i % 50 == 1) ? 500 : (i % 10 == 2) ? 304 : 200
      printf "%s - - [%02d/Nov/2026:%02d:%02d:%02d +0000] \"GET %s HTTP/1.1\" %d %d \"https://ref%d.example/p\" \"%s\"\n", client, d, h, m, s, url, st, (i * 37) % 20000, i % 1000, ag[1 + i % 12]
    }
  }' > "$LOG.tmp"
  mv "$LOG.tmp" "$LOG"
fi
if [ "${1:-}" = "--" ]; then shift; fi
[ "${GEN_ONLY:-0}" = 1 ] && exit 0
echo "== $(date -u '+%F %T') UTC, $(du -h "$LOG" | cut -f1) log, $LINES lines, $CLIENTS clients, $URLS URLs, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== wf report --json -j 2 $*"
/usr/bin/time -v "$WF" report --json -j 2 --stats "$@" "$LOG" > "$DATA/report-memory.json" 2> "$DATA/report-memory.err" || { tail -5 "$DATA/report-memory.err"; exit 1; }
grep -E "Maximum resident|Elapsed \(wall|User time|System time|spilled" "$DATA/report-memory.err"
python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["general"]; print("unique_visitors", g["unique_visitors"], "unique_files", g["unique_files"], "valid", g["valid_requests"])' "$DATA/report-memory.json"
if [ "${GOACCESS:-0}" = 1 ]; then
  echo "== goaccess -o json (COMBINED, --no-ip-validation), timeout 600 s"
  /usr/bin/time -v timeout 600 goaccess "$LOG" --log-format=COMBINED --no-global-config --no-ip-validation --no-progress -o "$DATA/goaccess-memory.json" 2> "$DATA/goaccess-memory.err" || echo "goaccess: exit $?"
  grep -E "Maximum resident|Elapsed \(wall|User time|System time" "$DATA/goaccess-memory.err"
fi
