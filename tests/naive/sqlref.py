#!/usr/bin/env python3
"""Naive reference for `wf sql`: reads inputs in one of wf's formats with its own
plain parser and answers a fixed set of questions, printed as one JSON object.

Deliberately simple and independent of the Rust code (crates/wf-formats/src/):
whole files in memory, one regular expression per log format, Python's own json
module, a character loop for logfmt and CSV, datetime for timestamps, dicts and
full sorts. Python 3 standard library only. Used by crates/wf/tests/sql.rs, which
asks `wf sql` the same questions in SQL and compares the exact numbers.

    sqlref.py --format FMT [--delimiter C] [--no-header] FILE...

FMT is combined, common, vcombined, jsonl, logfmt, csv, tsv, fields or regex:RE. The rules
are those of the formats' documentation (`wf sql --help` and the `//!` comments
of crates/wf-formats/src/*.rs), restated here:

Records: every file is cut at LF; a final line without LF is a record; one CR
before the LF is dropped; an empty record is a blank line (neither a row nor
malformed). CSV files in which some LF lies inside quotes (quote state toggled by
every `"` from the file's start) are cut only at LF outside quotes; the first
record of every CSV file is its header (unless --no-header).

Web logs (combined = `%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-agent}i"`,
common without the last two, vcombined with `%v:%p ` first): a field runs to the
first occurrence of the text that follows it in the format; a field between
quotes skips backslash-escaped bytes; `%t` is `[...]` up to the first `]`; the
last field before the closing literal (combined's user agent) runs to the last
`"` of the record (a last field without closing text ends before the record's
trailing blanks), or, in a record that does not end so, to its first unescaped
`"` followed by a blank, the rest not read (fields past the format's, as GoAccess
reads them). A record that does not fit is malformed. Numbers and times: `-` or empty is NULL; a value that does not
convert is NULL and counted as a bad value. The request is split at its first
and last space into method, path, protocol (all NULL without two spaces).

jsonl: an object per line (else malformed); columns are the top-level keys of
the sampled records in first-seen order; int if every non-null sampled value is
a 64-bit integer, float if every one is a number, bool if every one is a bool,
else text (non-strings as compact JSON). A value not of its column's type is
NULL.

logfmt: `key=value`, `key="quoted \\"value\\""`, bare `key` (= "true"); no `=` at
all, or an unclosed quote: malformed. The last of a repeated key wins. Types are
inferred from the sampled values as CSV's; an empty value is NULL except in text.

csv/tsv (RFC 4180): a field starting with `"` runs to the closing quote (`""` is
a quote) and must be followed by the delimiter or the end; other fields run to
the next delimiter; unquoted empty is NULL, quoted empty is "". A record with
another number of fields than the columns, or bad quotes, is malformed. Types are
inferred from the sampled records (int, float, ISO timestamp, bool, text).

fields: split on runs of space, tab, CR, VT, FF; columns c1..cN with N the most
fields of a sampled record; missing fields are NULL; every record is a row.

regex:RE: a record is a row when RE is found in it (re.search); its named groups
are text columns, NULL when the group took no part.

A UTF-8 byte order mark at the start of an input is dropped.

Sampling (for inferred columns): the first 256 KiB of the first input with data,
read on in 256 KiB steps until a LF follows the first 256 KiB (a long first
record is sampled whole; at most 64 MiB), cut into lines at LF (CSV: records),
the last piece dropped when it is not the only one, at most 1000 records (CSV:
the first 1001 with the header, malformed ones counted but not used).

Output: {"columns": [[name, type]...], "rows", "malformed", "blank",
"invalid_utf8": {column: n}, "bad_values": {column: n}, "answers": {...}} where
the answers are, for the web logs: by_status [[status, n]], by_method
[[method, sum(bytes), count(bytes), n]], by_hour [[iso hour, n]], top_clients
[[client, n]] (10, ties by client), distinct_paths, and for combined
distinct_referrers and ua_chars (characters of all user agents); and for the
other formats one entry per column: count of non-NULL values, and by type
sum/min/max (numbers, times as microseconds), distinct/min/max/chars (text),
true (bools), and how many LF, tab, CR, `"`, backslash and U+FFFD characters
the values hold (text); and for every format by_file [[_file, rows, sum of
_offset]] (the byte offsets where the rows' records start) and by_line [[_file,
sum of _line]] (the line numbers, from 1, of the records' first lines). NULL keys sort first;
text sorts by code point.
"""

import calendar
import datetime
import json
import math
import re
import sys

SAMPLE_BYTES = 256 * 1024
MAX_SAMPLE = 64 << 20
BOM = b"\xef\xbb\xbf"
SAMPLE_RECORDS = 1000
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
EPOCH = datetime.date(1970, 1, 1).toordinal()


# ---------------------------------------------------------------- values


def text(b):
    """Bytes as a column's text (invalid UTF-8 replaced) and whether it was invalid."""
    try:
        return b.decode("utf-8"), False
    except UnicodeDecodeError:
        return b.decode("utf-8", "replace"), True


INT = re.compile(rb"[+-]?[0-9]+")


def as_int(b):
    if INT.fullmatch(b):
        v = int(b)
        if I64_MIN <= v <= I64_MAX:
            return v
    return None


# Numbers as the inference and CSV float columns read them: no inf/nan.
DECIMAL = re.compile(rb"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
# Rust's f64 grammar (logfmt float columns also accept inf and nan, trimmed).
RUST_FLOAT = re.compile(rb"[+-]?(inf|infinity|nan|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)", re.I)


def as_decimal(b):
    return float(b) if DECIMAL.fullmatch(b) else None


def as_rust_float(b):
    b = b.strip(b" \t\n\r\x0b\x0c")
    return float(b) if RUST_FLOAT.fullmatch(b) else None


BOOLS = {
    b"true": True, b"TRUE": True, b"True": True, b"t": True, b"1": True,
    b"false": False, b"FALSE": False, b"False": False, b"f": False, b"0": False,
}
INFER_BOOLS = {b"true", b"false", b"TRUE", b"FALSE", b"True", b"False"}

MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
CLF_TIME = re.compile(rb"([0-9]{2})/([A-Za-z]{3})/([0-9]{4}):([0-9]{2}):([0-9]{2}):([0-9]{2}) ([+-])([0-9]{2})([0-9]{2})")
ISO_TIME = re.compile(
    rb"([0-9]{4})-([0-9]{2})-([0-9]{2})"
    rb"(?:[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[.,]([0-9]+))?(Z|z|([+-])([0-9]{2}):?([0-9]{2}))?)?"
)


def micros(y, mo, d, h, mi, s, frac_us, offset_s):
    """Microseconds since the epoch; None for a day the month does not have
    (31 Feb), as DuckDB's try_strptime gives."""
    if not 1 <= mo <= 12 or not (1 <= d <= calendar.monthrange(y, mo)[1]):
        return None
    if h > 23 or mi > 59 or s > 60:
        return None
    s = min(s, 59)  # a leap second is the second before it, on its day
    days = datetime.date(y, mo, 1).toordinal() - EPOCH + d - 1
    return (days * 86400 + h * 3600 + mi * 60 + s - offset_s) * 1_000_000 + frac_us


def clf_time(b):
    m = CLF_TIME.fullmatch(b)
    if not m:
        return None
    mon = m.group(2).decode().lower()
    if mon not in MONTHS:
        return None
    off = (int(m.group(8)) * 60 + int(m.group(9))) * 60
    if m.group(7) == b"-":
        off = -off
    g = [int(m.group(i)) for i in (3, 1, 4, 5, 6)]
    return micros(g[0], MONTHS.index(mon) + 1, g[1], g[2], g[3], g[4], 0, off)


def iso_time(b):
    m = ISO_TIME.fullmatch(b)
    if not m:
        return None
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if not 1 <= mo <= 12:
        return None
    if m.group(4) is None:
        return micros(y, mo, d, 0, 0, 0, 0, 0)
    frac = m.group(7) or b""
    frac_us = int((frac[:6] + b"000000")[:6]) if frac else 0
    off = 0
    if m.group(9):
        off = (int(m.group(10)) * 60 + int(m.group(11))) * 60
        if m.group(9) == b"-":
            off = -off
    return micros(y, mo, d, int(m.group(4)), int(m.group(5)), int(m.group(6)), frac_us, off)


def any_time(b):
    t = iso_time(b)
    return t if t is not None else clf_time(b)


def infer_kind(values):
    """The type of a column from its sampled values (empty ones ignored)."""
    vals = [v for v in values if v]
    if not vals:
        return "string"
    for kind, ok in (
        ("int", lambda v: as_int(v) is not None),
        ("float", lambda v: as_decimal(v) is not None),
        ("timestamp", lambda v: iso_time(v) is not None),
        ("bool", lambda v: v in INFER_BOOLS),
    ):
        if all(ok(v) for v in vals):
            return kind
    return "string"


class Table:
    """Rows as dicts of column -> Python value (None for NULL), plus counts."""

    def __init__(self, columns):
        self.columns = columns  # [(name, kind)]
        self.rows = []
        self.malformed = 0
        self.blank = 0
        self.invalid_utf8 = {}
        self.bad_values = {}

    def invalid(self, col):
        self.invalid_utf8[col] = self.invalid_utf8.get(col, 0) + 1

    def bad(self, col):
        self.bad_values[col] = self.bad_values.get(col, 0) + 1

    def string(self, col, b):
        s, bad = text(b)
        if bad:
            self.invalid(col)
        return s

    def typed(self, col, kind, b):
        """Text converted to `kind`; None (and counted) when it does not convert."""
        if kind == "string":
            return self.string(col, b)
        if kind == "int":
            v = as_int(b)
        elif kind == "float":
            v = as_rust_float(b)
        elif kind == "timestamp":
            v = any_time(b)
        else:
            v = BOOLS.get(b)
        if v is None:
            self.bad(col)
        return v


# ---------------------------------------------------------------- records


def lines_of(data):
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def strip_cr(r):
    return r[:-1] if r.endswith(b"\r") else r


def sample(files):
    """The start of the first input with data: 256 KiB, read on in 256 KiB steps
    until a LF follows the first 256 KiB (at most 64 MiB), without a BOM."""
    for data in files:
        end = SAMPLE_BYTES
        while end < len(data) and end < MAX_SAMPLE and b"\n" not in data[SAMPLE_BYTES:end]:
            end += SAMPLE_BYTES
        out = data[:end]
        out = out[len(BOM) :] if out.startswith(BOM) else out
        if out:
            return out
    return b""


def sample_lines(files):
    lines = sample(files).split(b"\n")[: SAMPLE_RECORDS + 1]
    if len(lines) > 1:
        lines.pop()
    return [strip_cr(l) for l in lines if strip_cr(l)][:SAMPLE_RECORDS]


class Input(bytes):
    """The bytes of one input, with the name it was given by (`_file`)."""

    name = ""


def each_record(table, files, parse, header=False, multiline=False, delim=44):
    """Parse every record; a row also gets `_file`, `_offset` (the byte offset
    of the record's start in its input) and `_line` (the line number of its
    first line)."""
    for data in files:
        records = csv_records(data, delim) if multiline else lines_of(data)
        offset, line = 0, 1
        for k, r in enumerate(records):
            start, offset = offset, offset + len(r) + 1
            first, line = line, line + r.count(b"\n") + 1
            if header and k == 0:
                continue
            r = strip_cr(r)
            if k == 0 and r.startswith(BOM):
                r = r[len(BOM) :]
            if not r:
                table.blank += 1
            elif parse(r):
                table.rows[-1]["_file"] = data.name
                table.rows[-1]["_offset"] = start
                table.rows[-1]["_line"] = first
            else:
                table.malformed += 1


# ---------------------------------------------------------------- web logs

SP = rb"([^ ]*) "
Q_REQ = rb'"((?:[^"\\]|\\.|"(?! ))*)" '
T = rb"\[([^\]]*)\] "
COMMON = rb"([^ ]*) ([^ ]*) ([^ ]*) " + T + Q_REQ + SP + rb"(.*?)[ \t]*"
COMBINED = (
    rb"([^ ]*) ([^ ]*) ([^ ]*) " + T + Q_REQ + SP
    + rb'((?:(?! ").)*) "((?:[^"\\]|\\.|"(?! "))*)" "(.*)"[ \t]*'
)
# A line that does not end with the agent's quote may carry fields past the
# format's after a blank (nginx's $request_time): the agent then ends at its
# first unescaped quote, and the rest is not read.
MORE = rb'"((?:[^"\\]|\\.)*)"[ \t].*'
COMBINED = COMBINED[: -len(rb'"(.*)"[ \t]*')] + rb'(?:"(.*)"[ \t]*|' + MORE + rb")"
LOGS = {
    "common": (COMMON, ["client", "ident", "user", "time", "request", "status", "bytes"]),
    "combined": (COMBINED, ["client", "ident", "user", "time", "request", "status", "bytes", "referrer", "user_agent"]),
    "vcombined": (
        rb"([^:]*):([^ ]*) " + COMBINED,
        ["vhost", "port", "client", "ident", "user", "time", "request", "status", "bytes", "referrer", "user_agent"],
    ),
}
LOG_KINDS = {"port": "int", "time": "timestamp", "status": "int", "bytes": "int"}


def log_number(table, col, v):
    if v in (b"", b"-"):
        return None
    n = as_int(v)
    if n is None:
        table.bad(col)
    return n


def read_log(fmt, files):
    pattern, names = LOGS[fmt]
    line_re = re.compile(pattern, re.S)
    cols = []
    for n in names:
        if n == "request":
            cols += [("method", "string"), ("path", "string"), ("protocol", "string")]
        cols.append((n, LOG_KINDS.get(n, "string")))
    table = Table(cols)

    def parse(r):
        m = line_re.fullmatch(r)
        if not m:
            return False
        groups = list(m.groups())
        if len(groups) > len(names):
            # The agent of one of the two endings (COMBINED).
            last = groups.pop()
            groups[-1] = last if groups[-1] is None else groups[-1]
        row = {}
        for name, v in zip(names, groups):
            if name in ("port", "status", "bytes"):
                row[name] = log_number(table, name, v)
            elif name == "time":
                t = None if v in (b"", b"-") else clf_time(v)
                if t is None and v not in (b"", b"-"):
                    table.bad("time")
                row[name] = t
            elif name == "request":
                a, b = v.find(b" "), v.rfind(b" ")
                parts = (v[:a], v[a + 1 : b], v[b + 1 :]) if 0 <= a < b else (None, None, None)
                for pn, p in zip(("method", "path", "protocol"), parts):
                    row[pn] = None if p is None else table.string(pn, p)
                row[name] = table.string(name, v)
            else:
                row[name] = table.string(name, v)
        table.rows.append(row)
        return True

    each_record(table, files, parse)
    return table


def hour_iso(t):
    h = t // 3_600_000_000 * 3600
    return (datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=h)).strftime("%Y-%m-%dT%H:00:00Z")


def null_first(k):
    return (k is not None, k if k is not None else "")


def log_answers(table, fmt):
    rows = table.rows
    by = {}
    for r in rows:
        by[r["status"]] = by.get(r["status"], 0) + 1
    by_status = [[k, by[k]] for k in sorted(by, key=lambda k: (k is not None, k or 0))]
    meth = {}
    for r in rows:
        m = meth.setdefault(r["method"], [None, 0, 0])
        if r["bytes"] is not None:
            m[0] = (m[0] or 0) + r["bytes"]
            m[1] += 1
        m[2] += 1
    by_method = [[k] + meth[k] for k in sorted(meth, key=null_first)]
    hours = {}
    for r in rows:
        h = None if r["time"] is None else hour_iso(r["time"])
        hours[h] = hours.get(h, 0) + 1
    by_hour = [[k, hours[k]] for k in sorted(hours, key=null_first)]
    clients = {}
    for r in rows:
        clients[r["client"]] = clients.get(r["client"], 0) + 1
    top = sorted(clients.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    out = {
        "by_status": by_status,
        "by_method": by_method,
        "by_hour": by_hour,
        "top_clients": [list(kv) for kv in top],
        "distinct_paths": len({r["path"] for r in rows if r["path"] is not None}),
    }
    if fmt != "common":
        out["distinct_referrers"] = len({r["referrer"] for r in rows})
        out["ua_chars"] = sum(len(r["user_agent"]) for r in rows)
    return out


# ---------------------------------------------------------------- jsonl


def no_constants(name):
    raise ValueError("not JSON: " + name)


def json_object(r):
    try:
        v = json.loads(r.decode("utf-8"), parse_constant=no_constants)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return v if isinstance(v, dict) else None


def json_kind(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int) and I64_MIN <= v <= I64_MAX:
        return "int"
    if isinstance(v, (int, float)):
        return "float"
    return "string"


def read_jsonl(files):
    kinds = {}
    for line in sample_lines(files):
        obj = json_object(line)
        for k, v in (obj or {}).items():
            now, this = kinds.get(k), json_kind(v)
            if this is None:
                kinds.setdefault(k, None)
            elif now is None or now == this:
                kinds[k] = this
            elif {now, this} == {"int", "float"}:
                kinds[k] = "float"
            else:
                kinds[k] = "string"
    cols = [(k, kind or "string") for k, kind in kinds.items()]
    table = Table(cols)

    def value(kind, v):
        jk = json_kind(v)
        if jk is None:
            return None
        if kind == "string":
            return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"), ensure_ascii=False)
        if kind == "int":
            return v if jk == "int" else None
        if kind == "float":
            return float(v) if jk in ("int", "float") else None
        return v if jk == "bool" else None

    def parse(r):
        obj = json_object(r)
        if obj is None:
            return False
        row = {}
        for k, kind in cols:
            row[k] = value(kind, obj.get(k))
            if row[k] is None and json_kind(obj.get(k)) is not None:
                table.bad(k)
        table.rows.append(row)
        return True

    each_record(table, files, parse)
    return table


# ---------------------------------------------------------------- logfmt


def logfmt_pairs(r):
    """[(key, value)] of one record, or None when malformed."""
    out, i, n, any_eq = [], 0, len(r), False
    while i < n:
        if r[i] in b" \t":
            i += 1
            continue
        j = i
        while j < n and r[j] not in b"= \t":
            j += 1
        key = r[i:j]
        if j >= n or r[j] != ord("="):
            out.append((key, b"true"))
            i = j
            continue
        any_eq = True
        j += 1
        if j < n and r[j] == ord('"'):
            val, j = bytearray(), j + 1
            while True:
                if j >= n:
                    return None
                c = r[j]
                if c == ord('"'):
                    j += 1
                    break
                if c == ord("\\"):
                    if j + 1 >= n:
                        return None
                    e = r[j + 1]
                    val.append({ord("n"): 10, ord("t"): 9}.get(e, e))
                    j += 2
                else:
                    val.append(c)
                    j += 1
            out.append((key, bytes(val)))
            i = j
        else:
            k = j
            while k < n and r[k] not in b" \t":
                k += 1
            out.append((key, r[j:k]))
            i = k
    return out if any_eq else None


def read_logfmt(files):
    seen = {}
    for line in sample_lines(files):
        for k, v in logfmt_pairs(line) or []:
            seen.setdefault(k, []).append(v)
    cols = [(k.decode("utf-8", "replace"), infer_kind(vs)) for k, vs in seen.items()]
    table = Table(cols)

    def parse(r):
        pairs = logfmt_pairs(r)
        if pairs is None:
            return False
        last = dict(pairs)
        row = {}
        for name, kind in cols:
            v = last.get(name.encode())
            if v is None or (v == b"" and kind != "string"):
                row[name] = None
            else:
                row[name] = table.typed(name, kind, v)
        table.rows.append(row)
        return True

    each_record(table, files, parse)
    return table


# ---------------------------------------------------------------- csv


def csv_cut_one(data, start, delim):
    """(end, spans lines) of the record that starts at `start`: a quote opens a
    quoted field only at a field's start; one that never closes, or whose
    closing quote is followed by something other than the delimiter or the
    line's end after spanning lines, opened no field, and the record ends with
    the line of that quote."""
    i, n, multi = start, len(data), False
    while i < n:
        c = data[i]
        if c == 10:
            return i, multi
        if c != 34 or (i != start and data[i - 1] != delim):
            i += 1
            continue
        j, close = i + 1, None
        while j < n:
            if data[j] == 34:
                if j + 1 < n and data[j + 1] == 34:
                    j += 2
                    continue
                close = j
                break
            j += 1
        spans = close is None or 10 in data[i:close]
        ends_well = close is not None and (close + 1 == n or data[close + 1] in (10, 13, delim))
        if close is not None and (ends_well or not spans):
            multi = multi or spans
            i = close + 1
            continue
        e = data.find(b"\n", i)
        return (n if e < 0 else e), multi
    return n, multi


def quoted_lf(data, delim):
    """Some record of `data` spans lines."""
    pos = 0
    while pos < len(data):
        end, multi = csv_cut_one(data, pos, delim)
        if multi:
            return True
        pos = end + 1
    return False


def csv_cut(data, delim):
    """Records cut at LF outside quotes, and the rest after the last such LF
    (None when nothing follows it)."""
    out, pos = [], 0
    while pos < len(data):
        end, _ = csv_cut_one(data, pos, delim)
        if end == len(data):
            return out, data[pos:]
        out.append(data[pos:end])
        pos = end + 1
    return out, None


def csv_records(data, delim):
    """Records of a file with line breaks inside quotes; the rest is the last one."""
    out, rest = csv_cut(data, delim)
    return out + ([rest] if rest is not None else [])


def csv_fields(r, delim):
    """[bytes or None] of one record, or None when its quotes are bad."""
    out, i, n = [], 0, len(r)
    while True:
        if i < n and r[i] == ord('"'):
            val, i = bytearray(), i + 1
            while True:
                if i >= n:
                    return None
                if r[i] == ord('"'):
                    if i + 1 < n and r[i + 1] == ord('"'):
                        val.append(34)
                        i += 2
                        continue
                    i += 1
                    break
                val.append(r[i])
                i += 1
            out.append(bytes(val))
            if i == n:
                return out
            if r[i] != delim:
                return None
            i += 1
        else:
            j = r.find(bytes([delim]), i)
            j = n if j < 0 else j
            out.append(r[i:j] if j > i else None)
            if j == n:
                return out
            i = j + 1


def read_csv(files, delim, header):
    # Sampled records: the first 1001 cut quote-aware, bad ones left out; the
    # piece after the last cut only when no record came before it.
    complete, rest = csv_cut(sample(files), delim)
    recs = []
    for p in complete[: SAMPLE_RECORDS + 1]:
        f = csv_fields(strip_cr(p), delim)
        if f is not None:
            recs.append(f)
    if not recs and rest is not None:
        f = csv_fields(strip_cr(rest), delim)
        if f is not None:
            recs.append(f)
    if header and recs:
        names = [v.decode("utf-8", "replace") if v else "c%d" % (i + 1) for i, v in enumerate(recs[0])]
        body = recs[1:]
    else:
        names = ["c%d" % (i + 1) for i in range(max((len(r) for r in recs), default=0))]
        body = recs
    cols = [(n, infer_kind([r[i] for r in body if i < len(r) and r[i] is not None])) for i, n in enumerate(names)]
    table = Table(cols)

    def parse(r):
        f = csv_fields(r, delim)
        if f is None or len(f) != len(cols):
            return False
        row = {}
        for (name, kind), v in zip(cols, f):
            if v is None or (v == b"" and kind != "string"):
                row[name] = None
            elif kind == "float":
                row[name] = as_decimal(v)
                if row[name] is None:
                    table.bad(name)
            else:
                row[name] = table.typed(name, kind, v)
        table.rows.append(row)
        return True

    for data in files:
        each_record(table, [data], parse, header=header, multiline=quoted_lf(data, delim), delim=delim)
    return table


# ---------------------------------------------------------------- fields

SPACES = re.compile(rb"[ \t\r\x0b\x0c]+")


def read_fields(files):
    n = max((len([f for f in SPACES.split(l) if f]) for l in sample_lines(files)), default=1)
    cols = [("c%d" % (i + 1), "string") for i in range(max(n, 1))]
    table = Table(cols)

    def parse(r):
        f = [x for x in SPACES.split(r) if x]
        table.rows.append({c: (table.string(c, f[i]) if i < len(f) else None) for i, (c, _) in enumerate(cols)})
        return True

    each_record(table, files, parse)
    return table


# ---------------------------------------------------------------- regex


def read_regex(pattern, files):
    """Named groups are text columns; a record the pattern does not find is malformed.
    (Python's syntax: the tests give patterns that mean the same in both engines.)"""
    rx = re.compile(pattern.encode())
    names = sorted(rx.groupindex, key=rx.groupindex.get)
    table = Table([(n, "string") for n in names])

    def parse(r):
        m = rx.search(r)
        if not m:
            return False
        table.rows.append({n: (None if m.group(n) is None else table.string(n, m.group(n))) for n in names})
        return True

    each_record(table, files, parse)
    return table


# ---------------------------------------------------------------- answers


# Characters counted over all values of a text column (escapes and quoting go wrong there).
SPECIALS = [("lf", "\n"), ("tab", "\t"), ("cr", "\r"), ("quote", '"'), ("backslash", "\\"), ("replacement", "\ufffd")]


def column_answers(table):
    out = {}
    for name, kind in table.columns:
        vals = [r[name] for r in table.rows if r[name] is not None]
        a = {"count": len(vals)}
        if kind in ("int", "float", "timestamp"):
            a["sum"] = sum(vals) if vals and kind != "timestamp" else None
            a["min"] = min(vals) if vals else None
            a["max"] = max(vals) if vals else None
            if kind == "float" and any(math.isnan(v) for v in vals):
                a["sum"] = a["min"] = a["max"] = "nan"
        elif kind == "bool":
            a["true"] = sum(1 for v in vals if v)
        else:
            a["distinct"] = len(set(vals))
            a["min"] = min(vals) if vals else None
            a["max"] = max(vals) if vals else None
            a["chars"] = sum(len(v) for v in vals)
            for key, ch in SPECIALS:
                a[key] = sum(v.count(ch) for v in vals)
        out[name] = a
    return out


def main(argv):
    fmt, delim, header, paths = None, None, True, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--format":
            i += 1
            fmt = argv[i]
        elif a == "--delimiter":
            i += 1
            delim = argv[i].encode()[0]
        elif a == "--no-header":
            header = False
        else:
            paths.append(a)
        i += 1
    files = []
    for p in paths:
        with open(p, "rb") as fh:
            files.append(Input(fh.read()))
            files[-1].name = p
    if fmt in LOGS:
        table = read_log(fmt, files)
        answers = log_answers(table, fmt)
    else:
        if fmt == "jsonl":
            table = read_jsonl(files)
        elif fmt == "logfmt":
            table = read_logfmt(files)
        elif fmt in ("csv", "tsv"):
            table = read_csv(files, delim or (ord(",") if fmt == "csv" else 9), header)
        elif fmt == "fields":
            table = read_fields(files)
        elif fmt.startswith("regex:"):
            table = read_regex(fmt[len("regex:"):], files)
        else:
            sys.exit("sqlref.py: unknown format %r" % fmt)
        answers = column_answers(table)
    by_file = {}
    for r in table.rows:
        f = by_file.setdefault(r["_file"], [0, 0])
        f[0] += 1
        f[1] += r["_offset"]
    answers["by_file"] = [[name] + by_file[name] for name in sorted(by_file)]
    by_line = {}
    for r in table.rows:
        by_line[r["_file"]] = by_line.get(r["_file"], 0) + r["_line"]
    answers["by_line"] = [[name, by_line[name]] for name in sorted(by_line)]
    out = {
        "columns": [list(c) for c in table.columns],
        "rows": len(table.rows),
        "malformed": table.malformed,
        "blank": table.blank,
        "invalid_utf8": table.invalid_utf8,
        "bad_values": table.bad_values,
        "answers": answers,
    }
    sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
