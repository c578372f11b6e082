#!/usr/bin/env python3
"""Time shell commands side by side: interleaved runs, medians and ratios.

usage: compare.py [--runs N] [--warmup N] [--cold FILE]... [--cold-list LIST]
                  [--warm FILE]... [--prepare CMD] NAME=COMMAND ...

Runs every command once per round (interleaved, so a noisy neighbour hurts all
of them alike), --runs rounds, after --warmup untimed rounds. Prints min, median
and max wall seconds, each command's median as a ratio to the first one, and
the median user and system CPU seconds of the command and its children (a run
that is bound by its cores shows user + sys near cores x wall; one that waits
for the disk shows less).
Commands run through `bash -c` with stdout discarded. A command that fails
stops the benchmark (a benchmark of a wrong answer is worthless).
With --cold FILE (repeatable) or --cold-list LIST (one path a line), the files
are evicted from the page cache (fsync, then posix_fadvise DONTNEED: no root
needed) before every timed run, and no warm-up run is made.
With --warm FILE (repeatable), the files are read whole (untimed) before every
timed run, so that a warm run is warm: this VM's host reclaims page cache
during long runs of other commands (a 96 s GoAccess run beside `wf report` left
wf's log partly evicted: wf took 4.19 s there, with twice the system time,
against 2.96 s in the same pass's warm section, report-2026-11-28-quiet.txt).

With --prepare CMD, CMD runs (untimed, through `bash -c`) before every run of
every command, as hyperfine's --prepare: to restore a file a command changes
(the hourly `--state` run starts from a copy of the same state each time).

Cold runs are primed (--prime, on by default): after the eviction, a child
process writes and frees memory (three times the cold files' size, at most half
of MemAvailable) so that the page cache refills from memory the host backs. Why: this
machine is a VM with free-page reporting (virtio_balloon); memory the guest
freed more than about 2 s earlier is handed back to the host, and the first
touch of it is slow. Measured 2026-11-24, 1 GiB, cold `wc -l` after a 5 s pause:
0.91-2.16 s (sys 0.61-2.07 s) unprimed, 0.46-0.61 s (sys 0.13-0.19 s) primed.
Unprimed, that "slow mode" strikes runs at random and measures the host, not the
command. --prime 0 turns it off.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time


def evict(files):
    for f in files:
        fd = os.open(f, os.O_RDONLY)
        try:
            os.fsync(fd)
        except OSError:
            pass
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)


def read_whole(path):
    """Read a file to its end (into the page cache), 1 MiB at a time."""
    with open(path, "rb", buffering=0) as f:
        while f.read(1 << 20):
            pass


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def prime(n):
    """Write n bytes of fresh memory in a child process, then free it (exit)."""
    if n > 0:
        subprocess.run([sys.executable, "-c", f"x = b'\\1' * {n}"], check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--cold", action="append", default=[])
    ap.add_argument("--cold-list", default=None)
    ap.add_argument("--warm", action="append", default=[])
    ap.add_argument(
        "--prime",
        default="auto",
        help="MiB written and freed before each cold run (auto: 3x the cold files, 0: off)",
    )
    ap.add_argument("--prepare", default=None, help="run (untimed) before every run")
    ap.add_argument("--json", default=None, help="also write results to this file")
    ap.add_argument("cmds", nargs="+")
    a = ap.parse_args()
    if a.cold_list:
        with open(a.cold_list) as f:
            a.cold += [l.rstrip("\n") for l in f if l.strip()]
    if a.prime == "auto":
        total = sum(os.path.getsize(f) for f in a.cold)
        prime_bytes = min(3 * total, mem_available() // 2)
    else:
        prime_bytes = int(a.prime) << 20
    cmds = []
    for c in a.cmds:
        name, _, cmd = c.partition("=")
        cmds.append((name, cmd))
    times = {n: [] for n, _ in cmds}
    cpu = {n: [] for n, _ in cmds}

    def once(cmd):
        if a.cold:
            evict(a.cold)
            prime(prime_bytes)
        for f in a.warm:
            read_whole(f)
        if a.prepare and subprocess.run(["bash", "-c", a.prepare]).returncode != 0:
            sys.exit(f"--prepare failed: {a.prepare}")
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        r = subprocess.run(["bash", "-c", cmd], stdout=subprocess.DEVNULL)
        dt = time.perf_counter() - t
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if r.returncode != 0:
            sys.exit(f"command failed ({r.returncode}): {cmd}")
        return dt, (r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime)

    for _ in range(a.warmup if not a.cold else 0):
        for _, cmd in cmds:
            once(cmd)
    for _ in range(a.runs):
        for name, cmd in cmds:
            dt, us = once(cmd)
            times[name].append(dt)
            cpu[name].append(us)
    base = statistics.median(times[cmds[0][0]])
    w = max(len(n) for n, _ in cmds)
    head = f"{'command':<{w}}  {'min':>8} {'median':>8} {'max':>8}  ratio to {cmds[0][0]}"
    print(f"{head}  {'user':>6} {'sys':>6}")
    out = []
    for name, cmd in cmds:
        t = times[name]
        med = statistics.median(t)
        user = statistics.median(u for u, _ in cpu[name])
        syst = statistics.median(s for _, s in cpu[name])
        print(
            f"{name:<{w}}  {min(t):8.3f} {med:8.3f} {max(t):8.3f}  {med / base:8.2f}x"
            f"{'':>{max(0, len(cmds[0][0]) - 1)}}  {user:6.3f} {syst:6.3f}"
        )
        out.append(
            {
                "name": name,
                "command": cmd,
                "runs": t,
                "median": med,
                "ratio": med / base,
                "user": user,
                "sys": syst,
            }
        )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
