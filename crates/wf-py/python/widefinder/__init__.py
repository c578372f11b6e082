"""widefinder: wf's scan, jobs and log/CSV parsers for Python.

The same Rust code as the ``wf`` command line, on every core, with the GIL
released while it reads:

- ``count``, ``wf2``, ``pangram``: the answers of ``wf count --json``,
  ``wf wf2 --json`` and ``wf pangram --json``, as dicts and lists.
- ``report``: the web-log report of ``wf report --json`` (GoAccess's
  panels, exact unique visitors, named bots), as a dict.
- ``sql`` and ``read``: Apache DataFusion's SQL over logs and delimited files,
  or their records, as a ``pyarrow.Table`` (handed over through the Arrow C
  data interface, so ``polars.from_arrow`` and DuckDB take it without a copy).
- ``read_range``, ``partial``, ``merge``, ``finish``: the unit a distributed
  engine schedules (a byte range of a file) and the built-in jobs' partial
  states; ``widefinder.dask`` runs them as Dask tasks.

Inputs are what ``wf`` takes: a path (``str`` or ``os.PathLike``) or a list of
them; directories are walked recursively (sorted by name); gzip, zstd, bzip2,
xz and lzma files are decoded (known by their first bytes, not their names).
Errors: an input that cannot be read raises ``OSError`` (``FileNotFoundError``
when it is missing) naming it; a bad format, query, job or partial state raises
``ValueError``.

Byte ranges: ``read_range(path, start, end)`` and ``partial(job, path, start,
end)`` take the records that *start* in ``[start, end)`` (a record straddling
``end`` belongs to the range, one straddling ``start`` to the one before), so
ranges that tile a file give every record exactly once, as the chunks of a
``wf`` run do. In a CSV file whose quoted fields hold line breaks, records are
found by following the quotes from the file's start (a range reads the file up
to its end once, on one core), so a record is never cut at a quoted line break.
A compressed file is read whole (``start=0, end=None``).

Partial states are bytes: ``b"WFPS"``, a format version (``STATE_VERSION``),
the job and its settings, the inputs seen, the state, and a CRC-32 of it all.
A state of another version, of another job or settings, or a damaged one,
raises ``ValueError``; it never gives a wrong answer.
"""

import datetime
import json
import os

from . import _native

__version__ = _native.__version__
STATE_VERSION = _native.STATE_VERSION

__all__ = [
    "count",
    "wf2",
    "pangram",
    "report",
    "sql",
    "read",
    "read_range",
    "partial",
    "merge",
    "finish",
    "inputs",
    "STATE_VERSION",
]


def _paths(paths):
    """A path or a list of paths, as a list of str."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    out = [os.fsdecode(os.fspath(p)) for p in paths]
    if not out:
        raise ValueError("widefinder: no paths given")
    return out


def _source(path_or_bytes):
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return bytes(path_or_bytes)
    return os.fsdecode(os.fspath(path_or_bytes))


def inputs(paths):
    """The inputs as ``wf`` collects them, in its order: a list of dicts
    ``{"name", "path", "size", "compressed"}`` (``compressed`` is None or the
    format: "gzip", "zstd", "bzip2", "xz", "lzma")."""
    return [
        {"name": n, "path": p, "size": s, "compressed": c}
        for n, p, s, c in _native.inputs(_paths(paths))
    ]


def count(paths, *, threads=None, chunk_size=None):
    """Records (lines), bytes and files, as ``wf count --json``:
    ``{"records": N, "bytes": N, "files": N}``."""
    return json.loads(_native.count(_paths(paths), threads, chunk_size))


def wf2(paths, top=10, *, threads=None, chunk_size=None):
    """The Wide Finder 2 report over Apache logs, as ``wf wf2 --json --top N``:
    ``{"lines", "resources", "404s", "clients", "top": {"uri_hits",
    "uri_bytes", "404s", "clients", "referrers"}}``, each list of
    ``[key, value]`` pairs, best first."""
    return json.loads(_native.wf2(_paths(paths), top, threads, chunk_size))


def pangram(paths, top=10, *, all=False, max_letters=None, threads=None, chunk_size=None):
    """Minimal pangrammatic windows, as the lines of ``wf pangram --json``:
    dicts ``{"path", "offset", "bytes", "letters", "text"}``; the ``top``
    shortest, or ``all=True`` (optionally of at most ``max_letters``)."""
    lines = _native.pangram(_paths(paths), top, all, max_letters, threads, chunk_size)
    return [json.loads(line) for line in lines]


def report(
    paths,
    *,
    format="auto",
    bots="include",
    max_rows=1000,
    threads=None,
    chunk_size=None,
    resolve=False,
):
    """The web-log report of ``wf report --json`` as a dict (the same call as
    the CLI's makes it, so the numbers are its numbers): ``{"general": {...},
    "visitors": {"metadata": ..., "data": [rows]}, "requests": ..., ...}``,
    every panel's rows with ``hits``, ``visitors`` and ``bytes``.

    ``format`` is ``wf report --format``'s: ``auto``, ``combined``,
    ``common``, ``vcombined``, ``nginx-main``, ``combinedio``, ``apache:'LogFormat'``,
    ``nginx:'log_format'``,
    ``caddy``, ``traefik`` or ``json:name=path,...``; ``bots`` is
    ``"include"``, ``"exclude"`` or ``"only"``; ``max_rows`` the rows kept
    per panel (totals count them all); ``resolve=True`` gives the hosts'
    rows kept their reverse-DNS ``hostname``, as ``wf report --resolve``
    (without it, no DNS lookup is made).

    >>> r = widefinder.report("access.log")          # doctest: +SKIP
    >>> r["general"]["unique_visitors"], r["requests"]["data"][0]["data"]
    """
    return json.loads(
        _native.report(
            _paths(paths), format, bots, max_rows, threads, chunk_size, resolve
        )
    )


def _format_kwargs(delimiter, header, schema):
    return {"delimiter": delimiter, "no_header": not header, "schema": schema}


def sql(
    query,
    paths=None,
    *,
    format="auto",
    tables=None,
    memory=None,
    threads=None,
    chunk_size=None,
    delimiter=None,
    header=True,
    schema=None,
    strict=False,
    disorder=None,
):
    """Run ``query`` (Apache DataFusion SQL) and return a ``pyarrow.Table``.

    ``paths`` is the table ``logs``, read in ``format`` (``auto``, ``combined``,
    ``common``, ``vcombined``, ``nginx-main``, ``combinedio``, ``apache:'FORMAT'``,
    ``nginx:'FORMAT'``,
    ``csv``, ``tsv``, ``jsonl``, ``logfmt``, ``fields``, ``regex:'...'``; see
    ``wf sql --help`` for the columns). ``tables`` adds more: a dict of name to
    paths, or to ``(paths, format)``. ``memory`` bounds the query's memory in
    bytes (aggregations spill beyond it). ``delimiter``, ``header`` and
    ``schema`` (``"name:type,..."``) are for CSV/TSV. Records that do not parse
    are not rows; ``strict=True`` makes them an error. A ``WHERE`` on the log's
    time reads only the bytes of its window; ``disorder`` (a
    ``datetime.timedelta`` or seconds; default 5 minutes, as ``wf sql
    --disorder``) is how much earlier than one before it a record may be.
    """
    specs = []
    if paths is not None:
        specs.append(("logs", _paths(paths), format))
    for name, spec in (tables or {}).items():
        if isinstance(spec, tuple):
            specs.append((name, _paths(spec[0]), spec[1]))
        else:
            specs.append((name, _paths(spec), "auto"))
    if not specs:
        raise ValueError("widefinder.sql: give paths (the table logs) or tables")
    return _native.sql(
        query,
        specs,
        memory,
        threads,
        chunk_size,
        strict=strict,
        disorder_us=_micros(disorder),
        **_format_kwargs(delimiter, header, schema),
    )


def _micros(d):
    """A duration (``timedelta`` or seconds) in whole microseconds, or None."""
    if d is None:
        return None
    if isinstance(d, datetime.timedelta):
        return d // datetime.timedelta(microseconds=1)
    return round(d * 1_000_000)


def read(
    paths,
    *,
    format="auto",
    columns=None,
    threads=None,
    chunk_size=None,
    delimiter=None,
    header=True,
    schema=None,
):
    """The records of ``paths`` as a ``pyarrow.Table``: every column of the
    format, or ``columns`` (which may name ``_file``, ``_offset``, ``_line``).
    Row order follows the parallel scan, not the file."""
    return _native.read(
        _paths(paths),
        format,
        None if columns is None else list(columns),
        threads,
        chunk_size,
        **_format_kwargs(delimiter, header, schema),
    )


def read_range(
    path_or_bytes,
    start,
    end,
    *,
    format="auto",
    columns=None,
    threads=1,
    delimiter=None,
    header=True,
    schema=None,
):
    """The records that start in ``[start, end)`` of one file, or of ``bytes``
    holding a file from its first byte, as a ``pyarrow.Table`` (see the
    module's notes on ranges). ``end=None`` reads to the end; ``_offset`` is
    the record's offset in the file. An empty range gives an empty table with
    the format's schema. ``format="auto"`` looks at the file's start."""
    return _native.read_range(
        _source(path_or_bytes),
        start,
        end,
        format,
        None if columns is None else list(columns),
        threads,
        **_format_kwargs(delimiter, header, schema),
    )


def partial(
    job,
    path_or_bytes,
    start=0,
    end=None,
    *,
    input=0,
    top=10,
    all=False,
    max_letters=None,
    threads=1,
):
    """The partial state (bytes) of ``job`` ("count", "wf2" or "pangram") over
    the records that start in ``[start, end)`` of one file. ``input`` is the
    file's index in the list of files of the whole run (``finish`` reads
    pangram windows back from ``paths[input]``; ``count`` counts distinct
    inputs as files). ``top``, ``all``, ``max_letters`` are pangram's."""
    return _native.partial_state(
        job, _source(path_or_bytes), start, end, input, top, all, max_letters, threads
    )


def merge(job, states):
    """Merge partial states (bytes) of one job into one. Associative: any
    grouping and order gives the same final answer."""
    return _native.merge(job, [bytes(s) for s in states])


def finish(job, state, *, top=10, paths=None):
    """The answer from a (merged) partial state: the dict of ``wf count
    --json`` or ``wf wf2 --json --top N``, or the list of ``wf pangram --json``
    windows (their text read back from ``paths``, indexed by ``input``)."""
    texts = _native.finish(job, bytes(state), top, None if paths is None else _paths(paths))
    values = [json.loads(t) for t in texts]
    return values if job == "pangram" else values[0]
