#!/usr/bin/env python3
"""How a cold command uses the disk: its request size, queue depth and idle share.

Usage: bench/diskstats.py [--runs N] [--device vda] FILE "name=command" ...

Before every run FILE is evicted from the page cache and the cache primed, as in
bench/compare.py --cold; during the run /proc/diskstats is sampled every 5 ms.
Per command it prints medians over the runs of: wall seconds, KiB per read
request, mean requests in flight, and the share of samples with none in flight
(the disk idle while the command still runs).

This is how the read-ahead helpers of the scan engine were shaped (2026-11-24,
1 GiB): `wc -l` 4 MiB requests and 11% idle; `wf wf2` without helpers 4 MiB and
22% idle (the disk waited for the parser); with helpers that also let the worker
read for itself, 1.9 MiB requests (two readahead streams met in each region);
with the worker reading only what its helper has read, 3.9 MiB and 7% idle.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import evict, mem_available, prime  # noqa: E402


def sample(device):
    """(reads completed, sectors read, requests in flight) of the device."""
    with open("/proc/diskstats") as f:
        for line in f:
            p = line.split()
            if p[2] == device:
                return int(p[3]), int(p[5]), int(p[11])
    sys.exit(f"diskstats: no device {device} in /proc/diskstats")


def device_of(path):
    """The whole-disk name under /sys/block that holds path (vda for vda1)."""
    dev = os.stat(path).st_dev
    name = os.path.basename(os.path.realpath(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}"))
    if not os.path.exists(f"/sys/block/{name}"):
        name = os.path.basename(os.path.dirname(os.path.realpath(f"/sys/class/block/{name}")))
    return name


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--device", default=None, help="default: the disk that holds FILE")
    ap.add_argument("file")
    ap.add_argument("cmds", nargs="+")
    a = ap.parse_args()
    device = a.device or device_of(a.file)
    prime_bytes = min(3 * os.path.getsize(a.file), mem_available() // 2)
    cmds = [c.partition("=")[::2] if "=" in c else (c, c) for c in a.cmds]
    res = {name: [] for name, _ in cmds}
    for _ in range(a.runs):
        for name, cmd in cmds:
            evict([a.file])
            prime(prime_bytes)
            r0, s0, _ = sample(device)
            t = time.perf_counter()
            p = subprocess.Popen(["bash", "-c", cmd], stdout=subprocess.DEVNULL)
            flight = []
            while p.poll() is None:
                flight.append(sample(device)[2])
                time.sleep(0.005)
            wall = time.perf_counter() - t
            if p.returncode != 0:
                sys.exit(f"command failed ({p.returncode}): {cmd}")
            r1, s1, _ = sample(device)
            kib = (s1 - s0) * 512 / max(r1 - r0, 1) / 1024
            flight = flight or [0]
            idle = sum(1 for f in flight if f == 0) / len(flight)
            res[name].append((wall, kib, statistics.mean(flight), idle))
    w = max(len(n) for n, _ in cmds)
    print(f"{'command':<{w}}  {'wall s':>7} {'KiB/req':>8} {'in flight':>9} {'idle':>5}")
    for name, _ in cmds:
        wall, kib, fl, idle = (statistics.median(c) for c in zip(*res[name]))
        print(f"{name:<{w}}  {wall:7.3f} {kib:8.0f} {fl:9.1f} {idle:5.2f}")


if __name__ == "__main__":
    main()
