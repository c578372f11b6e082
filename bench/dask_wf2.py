#!/usr/bin/env python3
"""Time widefinder.dask.wf2 beside `wf wf2` and the Dask-user baseline (bench/dask.sh).

usage: dask_wf2.py [--runs N] [--blocksize B] [--bag-blocksize B] [--check SMALL] WF FILE

(block sizes in bytes or like 64MiB; default auto: 256MiB and 64MiB, or a
quarter and a sixteenth of a smaller file, so both use both workers)

Starts one LocalCluster (2 worker processes, 1 thread each) before the timed
runs and prints how long that took; then runs, interleaved, --runs rounds of:
  wf wf2 (CLI)       `WF wf2 --json FILE`, a child process (its start included);
  widefinder.dask    `widefinder.dask.wf2(FILE, blocksize=B)` on the cluster;
  dask.bag + re      bench/dask_bag_wf2.py's `report(FILE)` on the same cluster
and prints min, median and max wall seconds, each median as a ratio to the CLI's,
and the two ratios the issue asks for. Only the compute is timed for the Dask
rows: the graph is built, sent, run and the result returned to this process.
Every answer must equal `wf wf2 --json FILE` (a benchmark of a wrong answer
is worthless); --check SMALL first checks both Dask versions on a small file.
One untimed round of the two fast commands warms the page cache and the
workers' imports; the baseline, slow, gets none.
"""

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dask_bag_wf2  # noqa: E402  (beside this script)


def warm_worker():
    import widefinder.dask  # noqa: F401


def cli(wf, path):
    r = subprocess.run([wf, "wf2", "--json", path], capture_output=True, check=True)
    return json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--blocksize", default="auto",
                    help="widefinder.dask's block size (auto: 256MiB, or a quarter of a smaller file)")
    ap.add_argument("--bag-blocksize", default="auto",
                    help="dask.bag.read_text's block size (auto: 64MiB, or 1/16 of a smaller file)")
    ap.add_argument("--check", default=None, help="a small log to check both Dask versions on")
    ap.add_argument("wf")
    ap.add_argument("file")
    a = ap.parse_args()
    size = os.path.getsize(a.file)
    # Both Dask versions get at least 2 tasks per worker on a small file too.
    if a.blocksize == "auto":
        a.blocksize = min(256 << 20, -(-size // 4))
    if a.bag_blocksize == "auto":
        a.bag_blocksize = min(64 << 20, -(-size // 16))

    from dask.utils import format_bytes
    from distributed import Client, LocalCluster

    import widefinder.dask

    t = time.perf_counter()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=logging.ERROR)
    client = Client(cluster)
    client.wait_for_workers(2)
    print(f"LocalCluster start (2 worker processes, 1 thread each): "
          f"{time.perf_counter() - t:.2f} s", flush=True)
    client.run(warm_worker)

    if a.check:
        want = cli(a.wf, a.check)
        for name, got in [("widefinder.dask.wf2", widefinder.dask.wf2(a.check, blocksize="64KiB")),
                          ("dask.bag baseline", dask_bag_wf2.report([a.check], "64KiB"))]:
            if got != want:
                sys.exit(f"{name} differs from `wf wf2 --json` on {a.check}")
        print(f"checked: both Dask versions equal `wf wf2 --json` on {a.check}", flush=True)

    def label(b):
        return format_bytes(b) if isinstance(b, int) else b

    want = cli(a.wf, a.file)
    cmds = [
        ("wf wf2 (CLI)", lambda: cli(a.wf, a.file)),
        (f"widefinder.dask.wf2 (blocksize {label(a.blocksize)})",
         lambda: widefinder.dask.wf2(a.file, blocksize=a.blocksize)),
        (f"dask.bag + re (blocksize {label(a.bag_blocksize)})",
         lambda: dask_bag_wf2.report([a.file], a.bag_blocksize)),
    ]
    for _, f in cmds[:2]:
        f()
    times = {name: [] for name, _ in cmds}
    for r in range(a.runs):
        for name, f in cmds:
            t = time.perf_counter()
            got = f()
            dt = time.perf_counter() - t
            if got != want:
                sys.exit(f"{name}: the answer differs from `wf wf2 --json {a.file}`")
            times[name].append(dt)
            print(f"  round {r + 1}: {name}: {dt:.3f} s", file=sys.stderr, flush=True)

    med = {name: statistics.median(t) for name, t in times.items()}
    base = med[cmds[0][0]]
    w = max(len(n) for n, _ in cmds)
    print(f"{'command':<{w}}  {'min':>8} {'median':>8} {'max':>8}  ratio to CLI")
    for name, _ in cmds:
        t = times[name]
        print(f"{name:<{w}}  {min(t):8.3f} {med[name]:8.3f} {max(t):8.3f}  {med[name] / base:8.2f}x")
    d, b = med[cmds[1][0]], med[cmds[2][0]]
    print(f"widefinder.dask.wf2 / wf wf2: {d / base:.2f}x (issue 19: within 1.5x)")
    print(f"dask.bag baseline / widefinder.dask.wf2: {b / d:.1f}x (issue 19: at least 20x)")
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
