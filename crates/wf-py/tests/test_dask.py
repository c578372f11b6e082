"""widefinder.dask on a real cluster: two worker processes, over TCP.

Every answer is compared with the `wf` binary's on the same files, at block
sizes from 1 KiB (most records straddle a block boundary) to whole files, over
several files (a glob, a directory walked recursively, fsspec's ``memory://``
file system for the path that fetches bytes instead of reading files). A
worker killed in the middle of a run must not change the answer.
"""

import logging
import math
import os
import shutil
import signal
import subprocess
import threading
import time

import pandas as pd
import pytest

import widefinder
import widefinder.dask as wfd

BLOCKS = [1024, "64KiB", None]  # None: one partition per file
STATUS = "SELECT status, count(*) AS n FROM logs GROUP BY status"


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=logging.ERROR)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def block_bytes(bs):
    from dask.utils import parse_bytes

    return parse_bytes(bs) if isinstance(bs, str) else bs


def n_ranges(paths, bs):
    bs = block_bytes(bs)
    return sum(1 if bs is None else max(1, math.ceil(os.path.getsize(p) / bs)) for p in paths)


def cli_status(wf, paths):
    rows = wf.json_lines("sql", "--json", "--format", "combined", STATUS, *map(str, paths))
    return {r.get("status"): r["n"] for r in rows}


def status_counts(df, **kw):
    """{status: rows}, None for the NULL status (a status that is not a number)."""
    s = df.groupby("status", dropna=False).size(**kw).compute()
    return {(None if s.index.isna()[i] else int(k)): int(v)
            for i, (k, v) in enumerate(s.items())}


def globbed(gen_dir):
    """gen_dir/*.log and the files the CLI gets for it (a shell's expansion)."""
    return str(gen_dir / "*.log"), [gen_dir / "a.log", gen_dir / "b.log"]


# ----------------------------------------------------------------- read_log --


@pytest.mark.parametrize("bs", BLOCKS)
def test_read_log_group_by_equals_wf_sql(client, wf, gen_dir, gen_logs, bs):
    # split_out=1: one tree reduction. Dask's default for hundreds of
    # partitions is a shuffle, as exact but 3x slower (test_read_log_as_users_write_it).
    pattern, files = globbed(gen_dir)
    for urlpath, paths in [(pattern, files), (gen_dir, gen_logs)]:
        df = wfd.read_log(urlpath, blocksize=bs)
        assert df.npartitions == n_ranges(paths, bs)
        assert status_counts(df, split_out=1) == cli_status(wf, paths), (urlpath, bs)


def test_read_log_as_users_write_it(client, wf, gen_dir):
    df = wfd.read_log(str(gen_dir / "*.log"), blocksize="4KiB")
    s = df.groupby("status").size().compute()
    want = cli_status(wf, [gen_dir / "a.log", gen_dir / "b.log"])
    assert {int(k): int(v) for k, v in s.items()} == {k: v for k, v in want.items() if k is not None}


def test_read_log_rows_columns_and_dtypes(client, wf, gen_dir):
    df = wfd.read_log(gen_dir, blocksize="64KiB")
    pdf = df.compute()
    assert list(pdf.columns) == list(df.columns)
    assert dict(pdf.dtypes) == dict(df.dtypes)  # every partition as the meta says
    n = wf.json_lines("sql", "--json", "--format", "combined",
                      "SELECT count(*) AS n FROM logs", gen_dir)[0]["n"]
    assert len(pdf) == n
    # Virtual columns: _offset, and _file named as the CLI names it.
    df = wfd.read_log(gen_dir, columns=["client", "_offset", "_file"], blocksize=4096)
    assert list(df.columns) == ["client", "_offset", "_file"]
    got = sorted(df.compute().itertuples(index=False, name=None))
    rows = wf.json_lines("sql", "--json", "--format", "combined",
                         "SELECT client, _offset, _file FROM logs", gen_dir)
    assert got == sorted((r["client"], r["_offset"], r["_file"]) for r in rows)


def test_read_log_gzip_is_one_partition(client, wf, gen_logs, tmp_path):
    (tmp_path / "0-empty.log").write_bytes(b"")  # a file, of no records
    shutil.copy(gen_logs[0], tmp_path / "a.log")
    with open(tmp_path / "b.log.gz", "wb") as out:
        subprocess.run(["gzip", "-c", str(gen_logs[1])], stdout=out, check=True)
    df = wfd.read_log(tmp_path, blocksize="64KiB")
    assert df.npartitions == 1 + n_ranges([tmp_path / "a.log"], "64KiB") + 1
    assert status_counts(df, split_out=1) == cli_status(wf, [tmp_path])
    assert wfd.wf2(tmp_path, blocksize="64KiB") == wf.json("wf2", "--json", tmp_path)
    assert wfd.count(tmp_path, blocksize=1024) == wf.json("count", "--json", tmp_path)


# ------------------------------------------------------------------- jobs --


@pytest.mark.parametrize("bs", BLOCKS)
def test_wf2_and_count_equal_cli(client, wf, gen_dir, gen_logs, bs):
    pattern, files = globbed(gen_dir)
    for urlpath, paths in [(pattern, files), (gen_dir, gen_logs)]:
        cli = [str(p) for p in paths]
        assert wfd.wf2(urlpath, blocksize=bs) == wf.json("wf2", "--json", *cli), (urlpath, bs)
        assert wfd.count(urlpath, blocksize=bs) == wf.json("count", "--json", *cli)


def test_wf2_tree_shapes_and_top(client, wf, gen_dir):
    from distributed import get_task_stream

    want = wf.json("wf2", "--json", "--top", "3", gen_dir)
    for split_every in (2, 3, 100):
        with get_task_stream(client) as ts:
            got = wfd.wf2(gen_dir, top=3, blocksize="16KiB", split_every=split_every)
        assert got == want, split_every
        # It ran on the cluster's workers, one partial task per range.
        partials = [t for t in ts.data if "wf2-partial" in str(t["key"])]
        assert len(partials) == n_ranges([gen_dir / "a.log", gen_dir / "b.log",
                                          gen_dir / "sub" / "c.log"], "16KiB")
        assert len({t["worker"] for t in ts.data}) == 2


def pangram_cli(wf, path, top=None, all=False, max_letters=None):
    args = ["pangram", "--json"]
    args += ["--top", top] if top is not None else []
    args += ["--all"] if all else []
    args += ["--max-letters", max_letters] if max_letters is not None else []
    return wf.json_lines(*args, path)


@pytest.mark.parametrize("bs", BLOCKS)
def test_pangram_equals_cli(client, wf, text_dir, bs):
    for mode in [dict(), dict(top=3), dict(all=True, max_letters=70)]:
        assert wfd.pangram(text_dir, blocksize=bs, **mode) == pangram_cli(wf, text_dir, **mode)


def test_pangram_of_a_name_not_utf8_equals_cli(client, wf, tmp_path):
    """A file name that is not UTF-8: the windows are named as the CLI
    names them (``path_bytes`` beside the lossy text), not by the worker's
    absolute path."""
    d = tmp_path / "nu"
    d.mkdir()
    with open(os.path.join(os.fsencode(d), b"\xffa.log"), "wb") as f:
        f.write(b"x " * 100 + b"the quick brown fox jumps over the lazy dog\n")
    want = pangram_cli(wf, d)
    assert want and "path_bytes" in want[0]
    assert wfd.pangram(d, blocksize="64KiB") == want
    assert widefinder.pangram(d) == want


def test_pangram_books_equal_cli(client, wf, books):
    assert wfd.pangram(books, blocksize="64KiB") == pangram_cli(wf, books)
    assert wfd.count(books, blocksize="64KiB") == wf.json("count", "--json", books)


# ------------------------------------------------- other file systems ------


def _fill_memory(files):
    import fsspec

    fs = fsspec.filesystem("memory")
    for path, data in files.items():
        fs.pipe(path, data)
    return len(files)


def _clear_memory():
    import fsspec

    fsspec.filesystem("memory").rm("/wf", recursive=True)


@pytest.fixture
def memory_logs(client, gen_logs, tmp_path):
    """memory:///wf/{a.log, b.log, c.log.gz}, in every worker process and here
    (a memory file system lives in one process); and the same files on disk."""
    local = tmp_path / "wf"
    local.mkdir()
    shutil.copy(gen_logs[0], local / "a.log")
    shutil.copy(gen_logs[1], local / "b.log")
    with open(local / "c.log.gz", "wb") as out:
        subprocess.run(["gzip", "-c", str(gen_logs[2])], stdout=out, check=True)
    files = {f"/wf/{p.name}": p.read_bytes() for p in sorted(local.iterdir())}
    _fill_memory(files)
    client.run(_fill_memory, files)
    yield local
    client.run(_clear_memory)
    _clear_memory()


@pytest.mark.parametrize("bs", BLOCKS)
def test_memory_filesystem_equals_cli(client, wf, memory_logs, bs):
    df = wfd.read_log("memory://wf/*", blocksize=bs)
    plain = [memory_logs / "a.log", memory_logs / "b.log"]
    assert df.npartitions == n_ranges(plain, bs) + 1
    assert status_counts(df, split_out=1) == cli_status(wf, [memory_logs])
    assert wfd.wf2("memory://wf/", blocksize=bs) == wf.json("wf2", "--json", memory_logs)
    assert wfd.count("memory://wf/*", blocksize=bs) == wf.json("count", "--json", memory_logs)


def test_memory_filesystem_offsets(client, wf, memory_logs):
    df = wfd.read_log(["memory://wf/a.log", "memory://wf/b.log"],
                      columns=["_file", "_offset", "status"], blocksize=3000)
    rows = list(df.compute().itertuples(index=False, name=None))
    assert {f for f, _, _ in rows} == {"memory:///wf/a.log", "memory:///wf/b.log"}
    got = sorted((f.rsplit("/", 1)[1], int(o), None if pd.isna(s) else int(s))
                 for f, o, s in rows)
    want = wf.json_lines("sql", "--json", "--format", "combined",
                         "SELECT _file, _offset, status FROM logs",
                         memory_logs / "a.log", memory_logs / "b.log")
    assert got == sorted((r["_file"].rsplit("/", 1)[1], r["_offset"], r.get("status"))
                         for r in want)


def test_memory_filesystem_unsupported(client, memory_logs):
    with pytest.raises(NotImplementedError, match="csv"):
        wfd.read_log("memory://wf/a.log", format="csv")
    with pytest.raises(NotImplementedError, match="pangram"):
        wfd.pangram("memory://wf/a.log")


# ----------------------------------------------------------------- errors --


def test_errors(client, gen_logs, tmp_path):
    missing = tmp_path / "nope.log"
    with pytest.raises(FileNotFoundError, match="nope.log"):
        wfd.read_log(missing)
    with pytest.raises(FileNotFoundError, match="nope.log"):
        wfd.wf2([gen_logs[0], missing])
    with pytest.raises(FileNotFoundError, match="nothing"):
        wfd.count(tmp_path / "nothing*.log")
    with pytest.raises(FileNotFoundError):
        wfd.read_log("memory://no/such/*.log")
    with pytest.raises(ValueError, match="no-such-format"):
        wfd.read_log(gen_logs[0], format="no-such-format")
    with pytest.raises(ValueError, match="_line"):
        wfd.read_log(gen_logs[0], columns=["status", "_line"])
    with pytest.raises(ValueError, match="split_every"):
        wfd.wf2(gen_logs[0], split_every=1)
    with pytest.raises(ValueError, match="blocksize"):
        wfd.wf2(gen_logs[0], blocksize=0)
    # A file that goes away after planning: the worker's error, on the client.
    gone = tmp_path / "gone.log"
    shutil.copy(gen_logs[0], gone)
    df = wfd.read_log(gone, blocksize="64KiB")
    os.remove(gone)
    with pytest.raises(FileNotFoundError, match="gone.log"):
        df.compute()


def test_corrupt_state_on_a_worker(client, gen_logs):
    good = widefinder.partial("wf2", gen_logs[0], 0, 10000)
    bad = bytearray(good)
    bad[len(bad) // 2] ^= 0x10
    with pytest.raises(ValueError):
        client.submit(widefinder.merge, "wf2", [good, bytes(bad)]).result()
    with pytest.raises(ValueError):
        client.submit(widefinder.finish, "wf2", bytes(bad)).result()


# ------------------------------------------------------- a worker killed --


@pytest.fixture(scope="module")
def long_log(wf, tmp_path_factory):
    return wf.gen_wf2(tmp_path_factory.mktemp("long") / "long.log", "3M", 21, 0.001)


def _scheduler_view(dask_scheduler, victim):
    """(wf2 tasks finished, results held by the victim) on the scheduler."""
    done = held = 0
    for key, ts in dask_scheduler.tasks.items():
        if "wf2-" in str(key) and ts.state == "memory":
            done += 1
            held += any(ws.address == victim for ws in ts.who_has)
    return done, held


def test_worker_killed_mid_run_still_exact(client, wf, long_log):
    want = wf.json("wf2", "--json", long_log)
    pids = client.run(os.getpid)
    victim, pid = sorted(pids.items())[0]
    out = {}

    def run():
        try:
            out["result"] = wfd.wf2(long_log, blocksize=2048)
        except BaseException as e:  # noqa: BLE001 - reported below
            out["error"] = e

    t = threading.Thread(target=run)
    t.start()
    deadline = time.monotonic() + 60
    held = 0
    while time.monotonic() < deadline and t.is_alive():
        done, held = client.run_on_scheduler(_scheduler_view, victim=victim)
        if done >= 20 and held >= 3:
            break
        time.sleep(0.01)
    running = t.is_alive()
    os.kill(pid, signal.SIGKILL)
    t.join(180)
    assert not t.is_alive(), "the run did not finish after the kill"
    assert running and held >= 3, (
        "the run ended before a worker could be killed holding results; "
        "make long_log bigger or the blocks smaller")
    assert "error" not in out, out.get("error")
    assert out["result"] == want
    # The nanny started a new worker process in place of the killed one.
    deadline = time.monotonic() + 60
    now = {}
    while time.monotonic() < deadline:
        try:
            now = client.run(os.getpid)
        except Exception:  # noqa: BLE001 - the dead worker may still be listed
            now = {}
        if len(now) == 2 and pid not in now.values():
            break
        time.sleep(0.2)
    assert len(now) == 2 and pid not in now.values(), now
