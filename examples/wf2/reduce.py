#!/usr/bin/env python3
"""Wide Finder 2, reduce side: run by `wf feed` on every core.

    wf feed --combine 'python3 examples/wf2/combine.py' LOGS... -- python3 examples/wf2/reduce.py

Reads Apache log lines on stdin, applies the Wide Finder 2 rules and prints its
partial counts as `table<TAB>key<TAB>value` lines (tables: uri_hits, uri_bytes,
404s, clients, referrers). combine.py sums them and prints the report. Keys are
whitespace-split fields, so they never hold a tab or a newline.

Rules: fields split on runs of ASCII whitespace, a leading run giving an empty
field 0 (Ruby's line.split(/\\s+/)); only lines whose field 5 is exactly `"GET`;
client=f0 uri=f6 status=f8 bytes=f9 ref=f10; status 200 records the leading
digits of f9 (0 if none), 304 records 0, 404 counts the uri; a record adds to
uri_bytes[uri] and, for article URIs, counts uri_hits, clients and referrers
(f10 minus its first and last byte, unless it is "-" or one of the blog's own
pages).
"""
import re
import sys

MAX = 2**64 - 1
ARTICLE = re.compile(rb"/ongoing/When/[0-9]{3}x/[0-9]{4}/[0-9]{2}/[0-9]{2}/[^ .]+")
DIGITS = re.compile(rb"[0-9]*")
WHITESPACE = b" \t\r\n\x0b\x0c"
SELF = b'"http://www.tbray.org/ongoing/'


def main():
    hits, nbytes, e404, clients, refs = {}, {}, {}, {}, {}
    article = ARTICLE.fullmatch
    digits = DIGITS.match
    for line in sys.stdin.buffer:
        if b'"GET' not in line:
            continue
        f = line.split()
        if line[0] in WHITESPACE:
            f.insert(0, b"")
        n = len(f)
        if n < 9 or f[5] != b'"GET':
            continue  # (a GET line without a status records nothing)
        status = f[8]
        uri = f[6]
        if status == b"200":
            d = digits(f[9]).group().lstrip(b"0") if n > 9 else b""
            v = 0 if not d else MAX if len(d) > 20 else min(int(d), MAX)
        elif status == b"304":
            v = 0
        elif status == b"404":
            e404[uri] = e404.get(uri, 0) + 1
            continue
        else:
            continue
        nbytes[uri] = min(nbytes.get(uri, 0) + v, MAX)
        if article(uri):
            hits[uri] = hits.get(uri, 0) + 1
            clients[f[0]] = clients.get(f[0], 0) + 1
            if n > 10:
                ref = f[10]
                if ref != b'"-"' and not ref.startswith(SELF):
                    k = ref[1:-1]
                    refs[k] = refs.get(k, 0) + 1
    out = sys.stdout.buffer
    for name, table in (
        (b"uri_hits", hits),
        (b"uri_bytes", nbytes),
        (b"404s", e404),
        (b"clients", clients),
        (b"referrers", refs),
    ):
        pre = name + b"\t"
        out.write(b"".join(b"%s%s\t%d\n" % (pre, k, v) for k, v in table.items()))
    out.flush()


if __name__ == "__main__":
    main()
