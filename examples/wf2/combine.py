#!/usr/bin/env python3
"""Wide Finder 2, combine side: sums the partial counts that reduce.py workers
print (`table<TAB>key<TAB>value` lines, on stdin) and prints the report exactly
as `wf wf2` does.

    wf feed --combine 'python3 examples/wf2/combine.py' LOGS... -- python3 examples/wf2/reduce.py

Optional argument: the length of each list (default 10).
"""
import heapq
import sys

MAX = 2**64 - 1
TABLES = ("uri_hits", "uri_bytes", "404s", "clients", "referrers")
SECTIONS = (
    ("Top URIs by hit:", "uri_hits"),
    ("Top URIs by bytes:", "uri_bytes"),
    ("Top 404s:", "404s"),
    ("Top client addresses:", "clients"),
    ("Top referrers:", "referrers"),
)


def main(argv):
    top = int(argv[0]) if argv else 10
    tables = {name.encode(): {} for name in TABLES}
    for line in sys.stdin.buffer:
        name, key, value = line.rstrip(b"\n").split(b"\t")
        t = tables[name]
        t[key] = min(t.get(key, 0) + int(value), MAX)
    t = {name.decode(): table for name, table in tables.items()}
    # Bytes throughout: keys are printed raw, as `wf wf2` prints them.
    out = [b"%d resources, %d 404s, %d clients\n\n" % (len(t["uri_hits"]), len(t["404s"]), len(t["clients"]))]
    for title, name in SECTIONS:
        out.append(title.encode() + b"\n")
        # Value descending, then key ascending by bytes.
        for k, v in heapq.nsmallest(top, t[name].items(), key=lambda kv: (-kv[1], kv[0])):
            label = k[:60] + (b"..." if len(k) > 60 else b"")
            if name == "uri_bytes":
                out.append(b" %9.1fM: %s\n" % (v / 1048576, label))
            else:
                out.append(b" %10d: %s\n" % (v, label))
        out.append(b"\n")
    sys.stdout.buffer.write(b"".join(out))

if __name__ == "__main__":
    main(sys.argv[1:])
