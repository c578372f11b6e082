#!/usr/bin/env python3
"""Naive reference implementation of `wf wf2` (the Wide Finder 2 report).

Deliberately simple and independent of the Rust code: whole files in memory, a
regex split per line, a regex for articles, dicts, full sorts. Used by the tests
to check `wf wf2 --json` (and the text golden file). Python 3 standard library only.

    wf2.py [--json | --text] [--top N] [--stats] [FILE ...]   (no FILE, or `-`: stdin)

--stats prints to stderr how many lines were not GET lines (field 5 missing or
not `"GET`) and, among those, how many had fewer than 6 fields.

Rules (see the issue): a record is a line, a final unterminated line counts; fields
split on runs of ASCII whitespace like Ruby's line.split(/\\s+/) (leading
whitespace gives an empty field 0); only lines whose field 5 is exactly `"GET`
count; client=f0 uri=f6 status=f8 bytes=f9 ref=f10; 200 records the leading digits
of f9 (saturating at 2**64-1, 0 if none), 304 records 0, 404 counts the uri;
record(n) adds n to uri_bytes[uri] (sum saturating at 2**64-1) and, for article
uris, counts uri_hits, clients and (unless "-" or the blog's own pages) referrers
keyed by f10 without its first and last byte. Lists: value descending, then key
ascending by bytes.
"""

import json
import re
import sys

MAX = 2**64 - 1
SPLIT = re.compile(rb"[ \t\r\n\x0b\x0c]+")
ARTICLE = re.compile(rb"/ongoing/When/[0-9]{3}x/[0-9]{4}/[0-9]{2}/[0-9]{2}/[^ .]+")
DIGITS = re.compile(rb"[0-9]*")


def records(data):
    """Lines of one input; the newline is dropped (it is whitespace anyway)."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def ruby_split(line):
    """Ruby's line.split(/\\s+/): a leading separator gives an empty first field,
    trailing empty fields are dropped."""
    fields = SPLIT.split(line)
    while fields and fields[-1] == b"":
        fields.pop()
    return fields


def leading_number(field):
    digits = DIGITS.match(field).group().lstrip(b"0")
    if digits == b"":
        return 0
    if len(digits) > 20:  # avoids int() on huge strings; surely above 2**64-1
        return MAX
    return min(int(digits), MAX)


def add(table, key, n=1):
    table[key] = table.get(key, 0) + n


def analyse(inputs):
    st = {
        "lines": 0,
        "not_get": 0,
        "too_few_fields": 0,
        "uri_hits": {},
        "uri_bytes": {},
        "404s": {},
        "clients": {},
        "referrers": {},
    }
    for data in inputs:
        for line in records(data):
            st["lines"] += 1
            f = ruby_split(line)
            if len(f) < 6:
                st["too_few_fields"] += 1
                st["not_get"] += 1
                continue
            if f[5] != b'"GET':
                st["not_get"] += 1
                continue

            def field(i):
                return f[i] if i < len(f) else None

            client, uri, status, nbytes, ref = field(0), field(6), field(8), field(9), field(10)
            if status == b"200":
                n = leading_number(nbytes) if nbytes is not None else 0
            elif status == b"304":
                n = 0
            elif status == b"404":
                add(st["404s"], uri)
                continue
            else:
                continue
            st["uri_bytes"][uri] = min(st["uri_bytes"].get(uri, 0) + n, MAX)
            if ARTICLE.fullmatch(uri):
                add(st["uri_hits"], uri)
                add(st["clients"], client)
                if (
                    ref is not None
                    and ref != b'"-"'
                    and not ref.startswith(b'"http://www.tbray.org/ongoing/')
                ):
                    add(st["referrers"], ref[1:-1])
    return st


def top(table, n):
    return sorted(table.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def show(key):
    return key.decode("utf-8", "replace")


def as_json(st, n):
    out = {
        "lines": st["lines"],
        "resources": len(st["uri_hits"]),
        "404s": len(st["404s"]),
        "clients": len(st["clients"]),
        "top": {
            name: [[show(k), v] for k, v in top(st[name], n)]
            for name in ("uri_hits", "uri_bytes", "404s", "clients", "referrers")
        },
    }
    return json.dumps(out, ensure_ascii=False) + "\n"


def as_text(st, n):
    """The reference's text report, as bytes: keys are printed raw."""
    out = b"%d resources, %d 404s, %d clients\n\n" % (
        len(st["uri_hits"]),
        len(st["404s"]),
        len(st["clients"]),
    )
    sections = [
        ("Top URIs by hit:", "uri_hits"),
        ("Top URIs by bytes:", "uri_bytes"),
        ("Top 404s:", "404s"),
        ("Top client addresses:", "clients"),
        ("Top referrers:", "referrers"),
    ]
    for title, name in sections:
        out += title.encode() + b"\n"
        for k, v in top(st[name], n):
            label = k[:60] + b"..." if len(k) > 60 else k
            if name == "uri_bytes":
                out += b" %9.1fM: %s\n" % (v / 1048576, label)
            else:
                out += b" %10d: %s\n" % (v, label)
        out += b"\n"
    return out


def main(argv):
    mode, n, paths, stats = "json", 10, [], False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--json":
            mode = "json"
        elif a == "--text":
            mode = "text"
        elif a == "--stats":
            stats = True
        elif a == "--top":
            i += 1
            n = int(argv[i])
        else:
            paths.append(a)
        i += 1
    inputs = []
    for p in paths or ["-"]:
        if p == "-":
            inputs.append(sys.stdin.buffer.read())
        else:
            with open(p, "rb") as fh:
                inputs.append(fh.read())
    st = analyse(inputs)
    out = as_json(st, n).encode("utf-8") if mode == "json" else as_text(st, n)
    sys.stdout.buffer.write(out)
    if stats:
        sys.stderr.write("not_get %d too_few_fields %d\n" % (st["not_get"], st["too_few_fields"]))


if __name__ == "__main__":
    main(sys.argv[1:])
