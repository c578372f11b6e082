#!/usr/bin/env python3
"""The Wide Finder 2 report as Dask users write it today: the baseline of bench/dask.sh.

`dask.bag.read_text` cuts the files into blocks of lines, a Python regex splits
each line into fields, and `frequencies`, `foldby` and `topk` make the five
top lists. The rules are those of tests/naive/wf2.py (and `wf wf2`): fields
split on runs of ASCII whitespace like Ruby's `split(/\\s+/)`; only lines whose
field 5 is exactly `"GET` count; client = f0, uri = f6, status = f8, bytes =
f9, referrer = f10; status 200 adds the leading digits of f9 to the uri's
bytes (saturating at 2**64-1), 304 adds 0, 404 counts a 404; article uris
(/ongoing/When/NNNx/YYYY/MM/DD/Slug) with status 200 or 304 also count a hit,
a client and (unless "-" or the blog's own pages) a referrer. Lists sort by
value, then key; the one thing a user might not bother with is that tie order,
which costs nothing here (`topk`'s key).

    dask_bag_wf2.py [--blocksize 64MiB] [--top N] FILE...   (prints the JSON)

Without a scheduler named, it starts a LocalCluster of 2 worker processes.
`report()` is what bench/dask_wf2.py times on its own cluster.
"""

import argparse
import json
import re
import sys

import dask
import dask.bag as db

MAX = 2**64 - 1
SPLIT = re.compile(r"[ \t\r\n\x0b\x0c]+")
ARTICLE = re.compile(r"/ongoing/When/[0-9]{3}x/[0-9]{4}/[0-9]{2}/[0-9]{2}/[^ .]+")
DIGITS = re.compile(r"[0-9]*")


def parse(line):
    """(client, uri, status, bytes, referrer) of a GET line (missing fields
    None), or None for any other line."""
    f = SPLIT.split(line)
    while f and f[-1] == "":
        f.pop()
    if len(f) < 6 or f[5] != '"GET':
        return None
    n = len(f)
    return (f[0], f[6] if n > 6 else None, f[8] if n > 8 else None,
            f[9] if n > 9 else None, f[10] if n > 10 else None)


def sent(rec):
    """(uri, bytes) of a 200 or 304 line."""
    if rec[2] == "304" or rec[3] is None:
        return rec[1], 0
    digits = DIGITS.match(rec[3]).group().lstrip("0")
    return rec[1], min(int(digits), MAX) if digits else 0


def is_article_hit(rec):
    return rec[2] in ("200", "304") and ARTICLE.fullmatch(rec[1]) is not None


def counts_referrer(rec):
    ref = rec[4]
    return ref is not None and ref != '"-"' and not ref.startswith('"http://www.tbray.org/ongoing/')


def rank(kv):
    """topk's key: the value, then the key ascending (as wf sorts ties)."""
    return kv[1], tuple(-ord(c) for c in kv[0]) + (1,)


def add(a, b):
    return min(a + b, MAX)


def report(paths, blocksize="64MiB", top=10):
    """The `wf wf2 --json` dict of the files, computed on the current scheduler."""
    lines = db.read_text(paths, blocksize=blocksize, linedelimiter="\n")
    gets = lines.map(parse).filter(None)
    served = gets.filter(lambda r: r[2] in ("200", "304"))
    hits = served.filter(is_article_hit)
    tables = {
        "uri_hits": hits.pluck(1).frequencies(),
        "uri_bytes": served.map(sent).foldby(0, lambda acc, x: add(acc, x[1]), 0, add, 0),
        "404s": gets.filter(lambda r: r[2] == "404").pluck(1).frequencies(),
        "clients": hits.pluck(0).frequencies(),
        "referrers": hits.filter(counts_referrer).map(lambda r: r[4][1:-1]).frequencies(),
    }
    tops = {name: t.topk(top, key=rank) for name, t in tables.items()}
    sizes = {name: tables[name].count() for name in ("uri_hits", "404s", "clients")}
    n_lines, tops, sizes = dask.compute(lines.count(), tops, sizes)
    return {
        "lines": n_lines,
        "resources": sizes["uri_hits"],
        "404s": sizes["404s"],
        "clients": sizes["clients"],
        "top": {name: [[k, v] for k, v in tops[name]] for name in tables},
    }


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--blocksize", default="64MiB")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args(argv)
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster):
        out = report(a.paths, a.blocksize, a.top)
    sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
