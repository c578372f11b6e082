#!/usr/bin/env python3
"""A deliberately naive, single-threaded pangram finder for benchmarks: the same
O(N) last-position algorithm, a plain loop over bytes. Prints the 10 shortest
minimal windows as `letters<TAB>path<TAB>offset`."""
import heapq
import sys

best = []
for path in sys.argv[1:]:
    data = open(path, "rb").read().lower()
    last = {}
    for i, b in enumerate(data):
        if 97 <= b <= 122:
            prev = last.get(b)
            last[b] = i
            if len(last) == 26:
                start = min(last.values())
                if prev is None or prev < start:
                    n = sum(1 for c in data[start : i + 1] if 97 <= c <= 122)
                    heapq.heappush(best, (-n, path, start))
                    if len(best) > 10:
                        heapq.heappop(best)
for n, path, start in sorted(best, key=lambda t: (-t[0], t[1], t[2])):
    print(f"{-n}\t{path}\t{start}")
