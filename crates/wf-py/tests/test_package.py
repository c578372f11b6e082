"""The `widefinder` package against the `wf` command line, its oracle.

Every answer is compared with the real binary's `--json` (or `wf sql -o
FILE.parquet`) on the same files: the shared sample logs and books when they
are beside the clone, and generated logs (with malformed lines) always. The
partition API (`read_range`, `partial`/`merge`/`finish`) is checked over
random tilings of the files and random merge trees: whatever the cuts and the
grouping, the answer must be the CLI's, exactly.
"""

import csv
import gzip
import json
import os
import random
import re
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import widefinder

COMBINED = ["client", "ident", "user", "time", "method", "path", "protocol", "request",
            "status", "bytes", "referrer", "user_agent"]


def strs(paths):
    return [str(p) for p in paths]


# ------------------------------------------------------------- jobs vs CLI --


SCANS = [dict(), dict(threads=1, chunk_size=4096), dict(threads=2, chunk_size=1000)]


def check_count_wf2(wf, paths):
    paths = strs(paths)
    want_count = wf.json("count", "--json", *paths)
    want_wf2 = wf.json("wf2", "--json", *paths)
    want_top3 = wf.json("wf2", "--json", "--top", "3", *paths)
    for scan in SCANS:
        assert widefinder.count(paths, **scan) == want_count, scan
        assert widefinder.wf2(paths, **scan) == want_wf2, scan
        assert widefinder.wf2(paths, top=3, **scan) == want_top3, scan


def test_generated_logs_equal_cli(wf, gen_dir, gen_logs):
    for paths in ([gen_logs[0]], [gen_logs[1]], gen_logs, [gen_dir]):
        check_count_wf2(wf, paths)
    # One path may be given bare, as a str or an os.PathLike.
    assert widefinder.wf2(gen_logs[1]) == wf.json("wf2", "--json", gen_logs[1])
    assert widefinder.count(str(gen_dir)) == wf.json("count", "--json", gen_dir)


def test_scan_settings_are_read_as_the_cli_reads_them(wf, gen_logs):
    """threads=0 is every core, as ``-j 0`` (it was 1 thread here); a chunk
    size of 0 is refused, as ``--chunk-size 0`` is (it was 1 byte here)."""
    path = strs([gen_logs[0]])
    assert widefinder.count(path, threads=0) == wf.json("count", "--json", "-j", "0", *path)
    assert widefinder.wf2(path, threads=0) == widefinder.wf2(path)
    with pytest.raises(ValueError, match="at least 1 byte"):
        widefinder.count(path, chunk_size=0)
    with pytest.raises(ValueError, match="at most 1024 threads"):
        widefinder.report(path, threads=1025)


def test_shared_logs_equal_cli(wf, shared_logs):
    for p in shared_logs.values():
        check_count_wf2(wf, [p])
    check_count_wf2(wf, list(shared_logs.values()))


def test_compressed_equal_cli(wf, compressed_dir, gen_dir):
    plain = wf.json("wf2", "--json", gen_dir / "b.log")
    for f in sorted(compressed_dir.iterdir()):
        assert widefinder.wf2(f) == plain, f.name
        assert widefinder.count(f) == wf.json("count", "--json", f), f.name
    assert widefinder.count(compressed_dir) == wf.json("count", "--json", compressed_dir)


def pangram_args(top=None, all=False, max_letters=None):
    args = ["pangram", "--json"]
    if top is not None:
        args += ["--top", top]
    if all:
        args.append("--all")
    if max_letters is not None:
        args += ["--max-letters", max_letters]
    return args


PANGRAM_MODES = [dict(), dict(top=3), dict(all=True), dict(all=True, max_letters=70)]


def check_pangram(wf, paths):
    paths = strs(paths)
    for mode in PANGRAM_MODES:
        want = wf.json_lines(*pangram_args(**mode), *paths)
        assert widefinder.pangram(paths, **mode) == want, mode
        assert widefinder.pangram(paths, threads=1, chunk_size=777, **mode) == want, mode
    assert widefinder.count(paths) == wf.json("count", "--json", *paths)


def test_pangram_text_equals_cli(wf, text_dir):
    check_pangram(wf, [text_dir])
    check_pangram(wf, [text_dir / "three.txt", text_dir / "one.txt"])


def test_pangram_max_letters_needs_all(text_dir):
    # As the CLI's --max-letters needs --all (it was ignored without a word).
    with pytest.raises(ValueError, match="max_letters needs all=True"):
        widefinder.pangram([text_dir], max_letters=5)
    # The same of another job's partial state.
    one = str(text_dir / "one.txt")
    with pytest.raises(ValueError, match="pangram's, not count's"):
        widefinder.partial("count", one, max_letters=30)


def test_pangram_books_equal_cli(wf, books):
    check_pangram(wf, [books])


def test_inputs_as_the_cli_collects_them(wf, gen_dir, compressed_dir, text_dir, tmp_path):
    got = widefinder.inputs([gen_dir, compressed_dir])
    # Directories walked recursively, each level sorted by file name.
    want = [gen_dir / "a.log", gen_dir / "b.log", gen_dir / "sub" / "c.log"]
    want += sorted(compressed_dir.iterdir(), key=lambda p: p.name)
    assert [os.path.realpath(i["path"]) for i in got] == [os.path.realpath(p) for p in want]
    assert [i["size"] for i in got] == [os.path.getsize(p) for p in want]
    kinds = {"gzip": "gzip", "zstd": "zstd", "bzip2": "bzip2", "xz": "xz"}
    assert [i["compressed"] for i in got] == [None] * 3 + [
        kinds[p.name.split(".")[1]] for p in want[3:]
    ]
    # The names are the ones the CLI prints (pangram --all names every file
    # that holds a window).
    names = {w["path"] for w in wf.json_lines("pangram", "--json", "--all", text_dir)}
    assert names == {i["name"] for i in widefinder.inputs(text_dir)}
    assert widefinder.inputs(str(gen_dir / "a.log"))[0]["name"] == str(gen_dir / "a.log")
    # An empty file is an input too.
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    assert widefinder.inputs(empty)[0]["size"] == 0
    assert widefinder.count([empty, gen_dir / "a.log"]) == wf.json(
        "count", "--json", empty, gen_dir / "a.log")


def test_version():
    from importlib.metadata import version

    assert isinstance(widefinder.__version__, str)
    assert widefinder.__version__ == version("widefinder")


# --------------------------------------------------------- SQL and tables --


def cli_rows(wf, query, paths, *args):
    """`wf sql --json` rows; the JSON writer leaves NULLs out, so do we."""
    return wf.json_lines("sql", "--json", *args, query, *strs(paths))


def no_nulls(rows):
    return [{k: v for k, v in r.items() if v is not None} for r in rows]


STATUS = "SELECT status, count(*) AS n FROM logs GROUP BY status ORDER BY status"


def test_sql_equals_cli(wf, gen_logs, gen_dir):
    for fmt in ("combined", "auto"):
        got = widefinder.sql(STATUS, gen_logs, format=fmt)
        assert isinstance(got, pa.Table)
        assert no_nulls(got.to_pylist()) == cli_rows(wf, STATUS, gen_logs, "--format", fmt)
    q = ("SELECT path, count(*) AS hits, sum(bytes) AS b FROM logs WHERE status = 200 "
         "GROUP BY path ORDER BY hits DESC, path LIMIT 20")
    assert no_nulls(widefinder.sql(q, gen_dir).to_pylist()) == cli_rows(wf, q, [gen_dir])
    # tables: more tables for joins, by name, with their own formats.
    j = ("SELECT count(*) AS n FROM logs WHERE client IN (SELECT client FROM other) "
         "AND status = 404")
    a, b = gen_logs[0], gen_logs[1]
    want = cli_rows(wf, j, [a], "--table", f"other={b}")
    assert widefinder.sql(j, a, tables={"other": b}).to_pylist() == want
    assert widefinder.sql(j, a, tables={"other": ([b], "combined")}).to_pylist() == want


def test_sql_disorder_as_the_cli(wf, tmp_path):
    """``disorder`` is ``wf sql --disorder``: lines written up to 1,000 s
    late, a WHERE on the time with 30 minutes of slack, counted exactly."""
    import datetime as dt

    t0 = dt.datetime(2007, 2, 10, tzinfo=dt.timezone.utc)
    lines, times = [], []
    for i in range(20_000):
        t = t0 + dt.timedelta(seconds=10 * i - (1000 if i % 11 == 5 else 0))
        times.append(t)
        lines.append(f'10.0.0.{i % 200} - - [{t.strftime("%d/%b/%Y:%H:%M:%S")} +0000] '
                     f'"GET /p{i % 13} HTTP/1.1" 200 {i} "-" "x"\n')
    log = tmp_path / "late.log"
    log.write_text("".join(lines))
    a, b = t0 + dt.timedelta(seconds=100_000), t0 + dt.timedelta(seconds=100_600)
    q = (f"SELECT count(*) AS n FROM logs WHERE time >= TIMESTAMP '{a:%Y-%m-%dT%H:%M:%SZ}' "
         f"AND time < TIMESTAMP '{b:%Y-%m-%dT%H:%M:%SZ}'")
    want = sum(a <= t < b for t in times)
    got = widefinder.sql(q, log, format="combined", disorder=dt.timedelta(minutes=30))
    assert got.to_pylist() == [{"n": want}]
    assert cli_rows(wf, q, [log], "--format", "combined", "--disorder", "30m") == [{"n": want}]
    assert widefinder.sql(q, log, format="combined", disorder=1800).to_pylist() == [{"n": want}]
    with pytest.raises(ValueError):
        widefinder.sql(q, log, disorder=-1)


def test_sql_warns_as_the_cli_says(wf, tmp_path):
    """What ``wf sql`` says on stderr, here a JSON key first seen after the
    sample (not a column, its values not read), is a ``UserWarning``."""
    log = tmp_path / "late.jsonl"
    log.write_text("".join('{"a": %d%s}\n' % (i, ', "err": "x"' if i == 2500 else "")
                           for i in range(3000)))
    with pytest.warns(UserWarning, match=r"keys that are not its columns \(err\)"):
        got = widefinder.sql("SELECT count(*) AS n FROM logs", log)
    assert got.to_pylist() == [{"n": 3000}]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning):
            widefinder.sql("SELECT count(*) AS n FROM logs", log)


def test_a_column_renamed_for_a_virtual_one_warns(tmp_path):
    """A CSV column named as a virtual column (``_line``) is renamed, and
    said, as ``wf sql`` says it: Python users were told nothing, and
    ``SELECT _line`` read wf's line numbers."""
    f = tmp_path / "mine.csv"
    f.write_text("_line,x\n99,1\n")
    with pytest.warns(UserWarning, match=r'column "_line" is named "_line_1"'):
        got = widefinder.sql("SELECT _line_1, _line, x FROM logs", f)
    assert got.to_pylist() == [{"_line_1": 99, "_line": 2, "x": 1}]
    with pytest.warns(UserWarning, match=r'column "_line" is named "_line_1"'):
        got = widefinder.read(f, format="csv")
    assert got.column("_line_1").to_pylist() == [99]


def test_sql_shared_logs_equal_cli(wf, shared_logs):
    q = ("SELECT client, count(*) AS errors FROM logs WHERE status >= 400 "
         "GROUP BY client ORDER BY errors DESC, client LIMIT 10")
    for p in shared_logs.values():
        assert no_nulls(widefinder.sql(q, p).to_pylist()) == cli_rows(wf, q, [p])
        assert no_nulls(widefinder.sql(STATUS, p).to_pylist()) == cli_rows(wf, STATUS, [p])


def cli_table(wf, tmp_path, fmt, paths, columns):
    """Every record as `wf sql -o FILE.parquet` writes it, in (_file, _offset) order."""
    out = tmp_path / "cli.parquet"
    quoted = ", ".join('"%s"' % c for c in columns)
    q = f"SELECT {quoted} FROM logs ORDER BY _file, _offset"
    wf.run("sql", "--format", fmt, "-o", out, q, *strs(paths))
    return pq.read_table(out)


def sorted_rows(t):
    # In Python: pyarrow 26 cannot sort or take string_view columns.
    return sorted(t.to_pylist(), key=lambda r: (r["_file"], r["_offset"]))


def test_read_equals_cli(wf, gen_logs, tmp_path):
    t = widefinder.read(gen_logs, format="combined")
    assert t.column_names == COMBINED
    cols = COMBINED + ["_file", "_offset"]
    want = cli_table(wf, tmp_path, "combined", gen_logs, cols)
    got = widefinder.read(gen_logs, format="combined", columns=cols)
    assert got.num_rows == t.num_rows == want.num_rows
    assert sorted_rows(got) == want.to_pylist()
    sub = widefinder.read(gen_logs, columns=["status", "bytes", "_file", "_offset"])
    assert sub.column_names == ["status", "bytes", "_file", "_offset"]
    assert sorted_rows(sub) == want.select(sub.column_names).to_pylist()


def test_read_shared_logs_equal_cli(wf, shared_logs, tmp_path):
    for fmt, p in shared_logs.items():
        t = widefinder.read(p)  # auto detects the same format as the CLI
        names = t.column_names
        want = cli_table(wf, tmp_path, fmt, [p], names + ["_file", "_offset"])
        got = widefinder.read(p, format=fmt, columns=names + ["_file", "_offset"])
        assert sorted_rows(got) == want.to_pylist(), fmt


def test_arrow_results_feed_polars_and_duckdb(wf, gen_logs):
    import duckdb
    import polars as pl

    t = widefinder.read(gen_logs, columns=["status", "bytes"])
    want = {r.get("status"): r["n"] for r in cli_rows(wf, STATUS, gen_logs)}
    df = pl.from_arrow(t)
    assert df.height == t.num_rows
    got = {r["status"]: r["len"] for r in df.group_by("status").len().to_dicts()}
    assert got == want
    got = dict(duckdb.sql("SELECT status, count(*) FROM t GROUP BY status").fetchall())
    assert got == want
    s = widefinder.sql(STATUS, gen_logs)
    assert dict(duckdb.sql("SELECT status, n FROM s").fetchall()) == want
    assert dict(pl.from_arrow(s).iter_rows()) == want


# ---------------------------------------------------------------- ranges --


def cuts_for(data: bytes, rnd: random.Random, n=30, singles=40):
    """Cut points of a tiling: random ones, newlines and the bytes just after
    them, a run of 1-byte ranges around a newline; the last range ends past
    the end of the file. (Few: a read_range call costs about 4 ms.)"""
    size = len(data)
    cuts = {rnd.randrange(1, size) for _ in range(n)}
    nls = [m.start() for m in re.finditer(b"\n", data)]
    for nl in rnd.sample(nls, min(n, len(nls))):
        cuts |= {nl, nl + 1}
    s = max(0, rnd.choice(nls) - singles // 2) if nls else 0
    cuts |= set(range(s, s + singles))
    return [0] + sorted(c for c in cuts if 0 < c < size) + [size + 1000]


def tiled(source, cuts, fmt, columns):
    tables = [widefinder.read_range(source, a, b, format=fmt, columns=columns)
              for a, b in zip(cuts, cuts[1:])]
    return pa.concat_tables(tables)


def whole(path, fmt, columns):
    """read()'s rows (in scan order) in file order, as dicts."""
    t = widefinder.read(path, format=fmt, columns=columns)
    return t.schema, sorted(t.to_pylist(), key=lambda r: r["_offset"])


def check_tilings(path, fmt, seed, tilings=1):
    data = path.read_bytes()
    rnd = random.Random(seed)
    base = widefinder.read(path, format=fmt)
    cols = base.column_names + ["_offset"]
    schema, want = whole(path, fmt, cols)
    assert want
    for _ in range(tilings):
        cuts = cuts_for(data, rnd)
        got = tiled(path, cuts, fmt, cols)
        assert got.schema == schema
        assert got.num_rows == len(want), (path.name, fmt)
        assert got.to_pylist() == want, (path.name, fmt)
        # The same file given as bytes: the same table, the same offsets.
        assert tiled(data, cuts, fmt, cols).to_pylist() == got.to_pylist()
    # Only the columns asked for.
    got = tiled(path, cuts_for(data, rnd, n=10, singles=5), fmt, ["_offset", cols[0]])
    assert got.column_names == ["_offset", cols[0]]
    assert got.to_pylist() == [{"_offset": r["_offset"], cols[0]: r[cols[0]]} for r in want]


def test_read_range_tilings_generated(gen_logs, tmp_path):
    check_tilings(gen_logs[1], "combined", 1, tilings=3)
    check_tilings(gen_logs[2], "combined", 2)
    # Edge records: CRLF, blank lines, a line of spaces, a final line without newline.
    lines = gen_logs[0].read_bytes().splitlines(keepends=True)[:50]
    odd = tmp_path / "odd.log"
    odd.write_bytes(b"\n" + b"".join(lines[:10]) + b"\n\n   \n"
                    + b"".join(l.rstrip(b"\n") + b"\r\n" for l in lines[10:20])
                    + b"".join(lines[20:]).rstrip(b"\n"))
    check_tilings(odd, "combined", 9)


def test_read_range_tilings_shared(shared_logs):
    check_tilings(shared_logs["combined"], "combined", 1)
    check_tilings(shared_logs["common"], "common", 2)
    check_tilings(shared_logs["common"], "auto", 3)


def test_read_range_tilings_csv(gen_logs, tmp_path):
    t = widefinder.read(gen_logs[0], columns=["client", "status", "bytes", "path"])
    rows = ["client,status,bytes,path"] + [
        f'{r["client"]},{r["status"]},{r["bytes"] if r["bytes"] is not None else ""},'
        f'"{r["path"]}"' for r in t.to_pylist()]
    p = tmp_path / "x.csv"
    p.write_text("\n".join(rows) + "\n")
    check_tilings(p, "csv", 4)  # every range knows the header at the file's start


def test_read_range_tilings_csv_with_quoted_line_breaks(tmp_path):
    """Ranges of a CSV file whose quoted fields hold line breaks (issue 35,
    defect 5): cut anywhere, even inside quotes, they hold each record once, as
    the whole file's read and Python's csv module have them; never a row made
    of part of a record."""
    rows = ["id,note,n"]
    for i in range(300):
        note = f'"line {i}\nsecond, ""quoted""\r\nthird"' if i % 3 == 0 else f"plain {i}"
        rows.append(f"{i},{note},{i * 2}")
    p = tmp_path / "q.csv"
    p.write_bytes(("\n".join(rows) + "\n").encode())
    check_tilings(p, "csv", 5, tilings=2)
    with open(p, newline="") as f:
        want = [[int(r[0]), r[1], int(r[2])] for r in list(csv.reader(f))[1:]]
    got = tiled(p, cuts_for(p.read_bytes(), random.Random(6)), "csv", ["id", "note", "n"])
    assert [[r["id"], r["note"], r["n"]] for r in got.to_pylist()] == want


def test_read_range_inside_one_quoted_field(tmp_path):
    """A range that lies inside one quoted field, with no quote of its own,
    holds no record: it made records of the field's lines (`2,b` from
    `1,"a\\n2,b\\n3,c"`), exit 0, and ranges that tile the file gave 1, 2, 4."""
    p = tmp_path / "rr.csv"
    data = b'id,txt\n1,"a\n2,b\n3,c"\n4,d\n'
    p.write_bytes(data)
    assert widefinder.read_range(p, 12, 13, format="csv").num_rows == 0
    for k in range(len(data) + 1):
        ids = [r["id"] for part in [(0, k), (k, None)]
               for r in widefinder.read_range(p, *part, format="csv").to_pylist()]
        assert ids == [1, 4], k


def test_read_range_bytes_window(gen_logs):
    """What widefinder.dask does on object stores: fetch [start-1, end) plus the
    rest of the last record, and shift _offset back. Equal to the file's range."""
    p = gen_logs[1]
    data = p.read_bytes()
    rnd = random.Random(5)
    cols = COMBINED + ["_offset"]
    for _ in range(200):
        start = rnd.randrange(0, len(data))
        end = min(len(data), start + rnd.choice([1, 2, 100, 1000, 20000]))
        base = max(start - 1, 0)
        nl = data.find(b"\n", max(end - 1, 0))
        stop = len(data) if nl < 0 else nl + 1
        got = widefinder.read_range(data[base:stop], start - base, end - base, columns=cols,
                                    format="combined")
        got = got.set_column(got.num_columns - 1, "_offset",
                             pc.add(got.column("_offset"), base))
        want = widefinder.read_range(p, start, end, columns=cols, format="combined")
        assert got.to_pylist() == want.to_pylist(), (start, end)


def test_read_range_empty_and_past_end(gen_logs):
    p = gen_logs[0]
    size = os.path.getsize(p)
    full = widefinder.read(p, format="combined")
    for a, b in [(0, 0), (5, 5), (size, size + 10), (size + 5, size + 100)]:
        t = widefinder.read_range(p, a, b, format="combined")
        assert t.num_rows == 0
        assert t.schema == full.schema
    assert widefinder.read_range(p, 0, size * 2, format="combined").num_rows == full.num_rows


# --------------------------------------------------------- partial states --


def tiling(size, rnd, pieces):
    cuts = sorted(rnd.sample(range(1, size), min(pieces, size - 1))) if size > 1 else []
    ends = cuts + [rnd.choice([None, size, size + 7])]
    return list(zip([0] + cuts, ends))


def random_merge(job, states, rnd):
    states = list(states)
    rnd.shuffle(states)
    while len(states) > 1:
        k = rnd.randint(2, min(5, len(states)))
        i = rnd.randrange(0, len(states) - k + 1)
        states[i:i + k] = [widefinder.merge(job, states[i:i + k])]
    return states[0]


def states_of(job, files, rnd, pieces, use_bytes=False, **opts):
    out = []
    for i, f in enumerate(files):
        src = f.read_bytes() if use_bytes else f
        for a, b in tiling(os.path.getsize(f), rnd, pieces):
            out.append(widefinder.partial(job, src, a, b, input=i, **opts))
    return out


def test_partial_states_count_wf2(wf, gen_logs):
    rnd = random.Random(11)
    for files in ([gen_logs[1]], gen_logs):
        want_c = wf.json("count", "--json", *files)
        want_w = wf.json("wf2", "--json", *files)
        want_3 = wf.json("wf2", "--json", "--top", "3", *files)
        for pieces, use_bytes in [(1, False), (40, False), (300, True)]:
            c = states_of("count", files, rnd, pieces, use_bytes)
            assert widefinder.finish("count", random_merge("count", c, rnd)) == want_c
            w = states_of("wf2", files, rnd, pieces, use_bytes)
            s = random_merge("wf2", w, rnd)
            assert widefinder.finish("wf2", s) == want_w, (pieces, use_bytes)
            assert widefinder.finish("wf2", s, top=3) == want_3
            # A different tree over the same states: the same answer.
            assert widefinder.finish("wf2", random_merge("wf2", w, rnd)) == want_w


def test_partial_states_shared_logs(wf, shared_logs):
    rnd = random.Random(12)
    files = list(shared_logs.values())
    s = random_merge("wf2", states_of("wf2", files, rnd, 60), rnd)
    assert widefinder.finish("wf2", s) == wf.json("wf2", "--json", *files)
    s = random_merge("count", states_of("count", files, rnd, 60), rnd)
    assert widefinder.finish("count", s) == wf.json("count", "--json", *files)


def check_pangram_states(wf, dirpath, rnd, pieces):
    inputs = widefinder.inputs(dirpath)
    files = [i["path"] for i in inputs]
    rename = {i["path"]: i["name"] for i in inputs}
    for mode in PANGRAM_MODES:
        want = wf.json_lines(*pangram_args(**mode), dirpath)
        states = states_of("pangram", [Path(f) for f in files], rnd, pieces, **mode)
        s = random_merge("pangram", states, rnd)
        got = widefinder.finish("pangram", s, top=mode.get("top", 10), paths=files)
        for w in got:
            w["path"] = rename[w["path"]]
        assert got == want, mode


def test_partial_states_pangram(wf, text_dir):
    rnd = random.Random(13)
    for pieces in (1, 7, 200):
        check_pangram_states(wf, text_dir, rnd, pieces)


def test_partial_states_pangram_books(wf, books):
    check_pangram_states(wf, books, random.Random(14), 30)


def test_finish_pangram_refuses_a_path_not_the_states(tmp_path):
    """The paths of a pangram state's inputs are one regular file each, and
    hold the windows: an empty directory panicked (PanicException), and a
    file not the state's gave windows of empty or unrelated text."""
    book = tmp_path / "book.txt"
    book.write_text("x " * 200 + "the quick brown fox jumps over the lazy dog\n")
    s = widefinder.partial("pangram", book, top=1)
    assert "quick brown" in widefinder.finish("pangram", s, paths=[book])[0]["text"]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="not one regular file"):
        widefinder.finish("pangram", s, paths=[empty])
    short = tmp_path / "short.txt"
    short.write_text("the end\n")
    with pytest.raises(OSError, match="not the input read"):
        widefinder.finish("pangram", s, paths=[short])


def test_read_range_refuses_line_numbers_inside_a_file(tmp_path):
    """``_line`` needs the lines before a range: from inside a file it gave
    the records before ``start`` too (ranges that tile a file repeated
    rows); it is refused there, and kept from the start."""
    log = tmp_path / "a.log"
    log.write_text("".join("line %d\n" % i for i in range(100)))
    t = widefinder.read_range(log, 0, 40, format="fields", columns=["_offset", "_line"])
    assert t.column("_line").to_pylist()[:2] == [1, 2]
    with pytest.raises(ValueError, match="_line needs the lines before the range"):
        widefinder.read_range(log, 40, None, format="fields", columns=["_offset", "_line"])
    assert widefinder.read_range(log, 40, None, format="fields",
                                 columns=["_offset"]).column("_offset")[0].as_py() >= 40


def test_inputs_keep_a_name_that_is_not_utf8(tmp_path):
    """A file name that is not UTF-8 is given as ``os.fsdecode`` gives it,
    so that it can be opened (written lossily, Dask could not)."""
    d = tmp_path / "u8"
    d.mkdir()
    name = os.fsdecode(b"\xffbad.log")
    (d / name).write_text("a\nb\n")
    [i] = widefinder.inputs(d)
    assert os.fsencode(i["path"]).endswith(b"/\xffbad.log")
    assert open(i["path"], "rb").read() == b"a\nb\n"


def test_partial_of_compressed_file_is_whole(wf, compressed_dir, gen_dir):
    want = wf.json("wf2", "--json", gen_dir / "b.log")
    for f in sorted(compressed_dir.iterdir()):
        s = widefinder.partial("wf2", f)
        assert widefinder.finish("wf2", s) == want, f.name
        assert widefinder.finish("wf2", widefinder.partial("wf2", f.read_bytes())) == want
        for a, b in [(0, 100), (10, None), (5, 50)]:
            with pytest.raises(ValueError):
                widefinder.partial("wf2", f, a, b)


def test_merge_of_one_state(gen_logs):
    s = widefinder.partial("wf2", gen_logs[0])
    assert widefinder.finish("wf2", widefinder.merge("wf2", [s])) == widefinder.finish("wf2", s)


# ------------------------------------------------------------ bad states --


def corrupt_states(state: bytes, rnd, n_flips=None):
    """Byte flips (all of them, or n_flips random ones), truncations, a wrong
    magic, trailing garbage."""
    positions = range(len(state)) if n_flips is None else rnd.sample(range(len(state)),
                                                                      min(n_flips, len(state)))
    for i in positions:
        b = bytearray(state)
        b[i] ^= 1 << rnd.randrange(8)
        yield f"flip {i}", bytes(b)
    lengths = range(len(state)) if n_flips is None else rnd.sample(range(len(state)),
                                                                   min(n_flips, len(state)))
    for n in lengths:
        yield f"truncated to {n}", state[:n]
    yield "magic", b"XXXX" + state[4:]
    yield "trailing byte", state + b"\0"


def check_rejects(job, state, rnd, n_flips=None):
    for what, bad in corrupt_states(state, rnd, n_flips):
        with pytest.raises(ValueError):
            widefinder.finish(job, bad)
            pytest.fail(f"{job} state, {what}: accepted by finish")
        with pytest.raises(ValueError):
            widefinder.merge(job, [state, bad])
            pytest.fail(f"{job} state, {what}: accepted by merge")


def test_corrupt_states_raise(gen_logs, text_dir):
    rnd = random.Random(15)
    count = widefinder.partial("count", gen_logs[0], 0, 5000)
    wf2 = widefinder.partial("wf2", gen_logs[0], 0, 5000)
    pangram = widefinder.partial("pangram", text_dir / "one.txt", 0, 3000)
    check_rejects("count", count, rnd)
    check_rejects("wf2", wf2, rnd, n_flips=300)
    check_rejects("pangram", pangram, rnd, n_flips=300)
    # A state of another job.
    for job, other in [("wf2", count), ("count", wf2), ("pangram", wf2), ("wf2", pangram)]:
        with pytest.raises(ValueError):
            widefinder.finish(job, other)
        with pytest.raises(ValueError):
            widefinder.merge(job, [other])
    with pytest.raises(ValueError):
        widefinder.merge("wf2", [wf2, count])
    # The error says what is wrong.
    with pytest.raises(ValueError, match=r"(?i)state"):
        widefinder.finish("wf2", wf2[:-1])


# ---------------------------------------------------------------- errors --


def test_missing_file_is_oserror(tmp_path, gen_logs):
    missing = tmp_path / "nope.log"
    calls = [
        lambda: widefinder.count(missing),
        lambda: widefinder.count([gen_logs[0], missing]),
        lambda: widefinder.wf2(missing),
        lambda: widefinder.pangram(missing),
        lambda: widefinder.inputs(missing),
        lambda: widefinder.read(missing, format="combined"),
        lambda: widefinder.sql(STATUS, missing, format="combined"),
        lambda: widefinder.read_range(missing, 0, 100, format="combined"),
        lambda: widefinder.partial("wf2", missing),
    ]
    for call in calls:
        with pytest.raises(FileNotFoundError, match="nope.log"):
            call()


def test_unreadable_file_is_permissionerror(tmp_path, gen_logs):
    locked = tmp_path / "locked.log"
    locked.write_bytes(gen_logs[0].read_bytes())
    locked.chmod(0)
    try:
        open(locked, "rb").close()
        pytest.skip("this user reads a file of mode 000 (root with CAP_DAC_OVERRIDE)")
    except PermissionError:
        pass
    calls = [
        lambda: widefinder.count(locked),
        lambda: widefinder.count([gen_logs[0], locked]),
        lambda: widefinder.wf2(locked),
        lambda: widefinder.pangram(locked),
        lambda: widefinder.partial("wf2", locked),
        lambda: widefinder.partial("count", locked, 0, 100),
        # The format is read from a sample of the file: its error has a kind too.
        lambda: widefinder.read(locked, format="combined"),
        lambda: widefinder.read(locked),
        lambda: widefinder.sql(STATUS, locked, format="combined"),
        lambda: widefinder.read_range(locked, 0, 100, format="combined"),
    ]
    for call in calls:
        with pytest.raises(PermissionError, match="locked.log"):
            call()


def test_bad_arguments_are_valueerror(gen_logs):
    p = gen_logs[0]
    for call in [
        lambda: widefinder.read(p, format="no-such-format"),
        lambda: widefinder.read_range(p, 0, 100, format="no-such-format"),
        lambda: widefinder.read_range(p.read_bytes(), 0, 100, format="apache:%h %Z"),
        lambda: widefinder.sql(STATUS, p, format="no-such-format"),
        lambda: widefinder.sql("SELEC nothing", p),
        lambda: widefinder.sql("SELECT no_such_column FROM logs", p, format="combined"),
        lambda: widefinder.read(p, format="combined", columns=["no_such_column"]),
        lambda: widefinder.partial("no-such-job", p),
        lambda: widefinder.merge("no-such-job", []),
        lambda: widefinder.finish("no-such-job", b""),
    ]:
        with pytest.raises(ValueError):
            call()


def test_gzip_made_by_gzip_reads_like_plain(gen_logs, tmp_path):
    p = tmp_path / "a.log.gz"
    with open(p, "wb") as out:
        subprocess.run(["gzip", "-c", str(gen_logs[0])], stdout=out, check=True)
    assert gzip.decompress(p.read_bytes()) == gen_logs[0].read_bytes()
    got = widefinder.read(p, columns=["status", "_offset"]).sort_by("_offset")
    want = widefinder.read(gen_logs[0], columns=["status", "_offset"]).sort_by("_offset")
    assert got.num_rows > 0
    assert got.to_pylist() == want.to_pylist()
    assert json.dumps(widefinder.wf2(p)) == json.dumps(widefinder.wf2(gen_logs[0]))


def test_decimal_schema_is_exact(wf, tmp_path):
    """A `decimal(P,S)` column arrives in pyarrow as decimal128(P,S), its values
    and per-station sums exactly those of Python's `decimal` module over the
    same text, whatever the threads and chunk size."""
    from decimal import Decimal

    p = tmp_path / "m.txt"
    wf.run("gen", "1brc", "--rows", "20000", "--stations", "30", "--seed", "3", "-o", p)
    rows = [line.split(";") for line in p.read_text(encoding="utf-8").splitlines()]
    kw = dict(format="csv", delimiter=";", header=False, schema="station:string,t:decimal(3,1)")
    t = widefinder.read(p, columns=["station", "t", "_offset"], **kw)
    assert t.schema.field("t").type == pa.decimal128(3, 1)
    got = [(r["station"], r["t"]) for r in sorted(t.to_pylist(), key=lambda r: r["_offset"])]
    assert got == [(s, Decimal(v)) for s, v in rows]
    sums = {}
    for s, v in rows:
        sums[s] = sums.get(s, Decimal(0)) + Decimal(v)
    q = "SELECT station, sum(t) AS total FROM logs GROUP BY station ORDER BY station"
    for scan in SCANS:
        res = widefinder.sql(q, p, **kw, **scan).to_pylist()
        assert [(r["station"], r["total"]) for r in res] == sorted(sums.items()), scan
