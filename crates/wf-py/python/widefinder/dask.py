"""widefinder on Dask: the same parsers and jobs as tasks of a Dask cluster.

    import widefinder.dask as wfd
    df = wfd.read_log("s3://bucket/logs/2026-11-*.log", storage_options={"anon": False})
    df.groupby("status").size().compute()          # ordinary Dask from here on
    wfd.wf2("/data/logs/", top=10)                  # == json.loads(`wf wf2 --json /data/logs/`)

Why it is shaped so:

* **The unit of work is a byte range of one file.** A range owns the records
  that *start* in it (a record straddling its end belongs to it, one straddling
  its start to the range before), exactly as the `wf` scan engine's chunks, so
  ranges cut at arbitrary byte offsets tile a file with every record exactly
  once, and the client never reads the data to plan: it only lists the files
  and their sizes. A worker reads its own range. On a local (or shared) file
  system Rust reads the file itself (`widefinder.read_range(path, start,
  end)`); elsewhere (S3, GCS, HTTP, ``memory://``, any fsspec URL) the task
  fetches the range with fsspec, plus the byte before it (to see whether a
  record starts at `start`) and the tail of its last record (up to the first
  newline at or after `end - 1`), and hands the bytes to the same parser.
* **Jobs ship states, not rows.** `wf2`, `count` and `pangram` turn each range
  into a partial state (`widefinder.partial`: a few bytes to a few MB), merge
  them in a tree of at most `split_every` states per task
  (`widefinder.merge`), and finish once (`widefinder.finish`). The merge is
  associative, so neither the tree's shape, nor which worker ran what, nor a
  task rerun after a worker died, can change the answer: it is the CLI's
  answer, byte for byte. States are versioned and checksummed, so a state
  from another version of widefinder is an error, never a wrong report.
* **Compressed files** (gzip, zstd, bzip2, xz, known by their first bytes,
  never by their names) cannot be entered in the middle, so each is one
  partition, decoded front to back by one task.
* **Input order is the CLI's.** Local paths are listed by
  `widefinder.inputs` (directories walked recursively, sorted by file name),
  so `pangram`'s ties and its `"path"` names are the ones `wf pangram --json`
  prints; other file systems are walked the same way with fsspec.

Everything runs on the current Dask scheduler: a `distributed.Client` if one
is the default (`Client("tcp://scheduler:8786")` on a real cluster, whose
workers must all reach the same paths: a shared file system or object store),
else Dask's local threads. Nothing here needs a cluster to be correct.
"""

from __future__ import annotations

import glob as _glob
import os
from typing import NamedTuple, Optional

import widefinder

__all__ = ["read_log", "wf2", "count", "pangram"]

# Bytes read ahead at a time to finish a range's last record on a remote file
# system, doubled until a newline is found (a log line is usually < 1 KiB).
_TAIL_STEP = 64 << 10
_MAGIC = {
    b"\x1f\x8b": "gzip",
    b"\x28\xb5\x2f\xfd": "zstd",
    b"BZh": "bzip2",
    b"\xfd7zXZ\x00": "xz",
}


class _File(NamedTuple):
    """One input: `path` is what the task opens, `name` what results call it;
    `given` the path as walked (`os.fsdecode`'s text), which pangram's
    windows are named by, as the CLI names them."""

    path: str
    name: str
    size: int
    compressed: Optional[str]
    given: Optional[str] = None


class _Part(NamedTuple):
    """The records starting in [start, end) of input number `input`.
    `end` None: the whole file (a compressed one, decoded front to back)."""

    path: str
    name: str
    start: int
    end: Optional[int]
    input: int
    size: int


# ---------------------------------------------------------------- listing --


def _urls(urlpath) -> list:
    if isinstance(urlpath, (list, tuple)):
        if not urlpath:
            raise ValueError("no input paths given")
        return [os.fspath(u) for u in urlpath]
    return [os.fspath(urlpath)]


def _has_magic(p: str) -> bool:
    return any(c in p for c in "*?[")


def _filesystem(urls: list, storage_options: Optional[dict]):
    """The fsspec file system of the URLs (all must share one) and their paths."""
    from fsspec.core import url_to_fs

    so = storage_options or {}
    fs, first = url_to_fs(urls[0], **so)
    paths = [first]
    for u in urls[1:]:
        other, p = url_to_fs(u, **so)
        if type(other) is not type(fs):
            raise ValueError(f"inputs on different file systems: {urls[0]!r} and {u!r}")
        paths.append(p)
    return fs, paths


def _is_local(fs) -> bool:
    protocols = fs.protocol if isinstance(fs.protocol, (tuple, list)) else (fs.protocol,)
    return "file" in protocols


def _local_files(urls: list) -> list:
    """Local inputs exactly as the CLI collects them: `wf CMD a.log logs/`
    (a glob is expanded like a shell would, sorted)."""
    paths = []
    for u in urls:
        for prefix in ("file://", "local://"):
            if u.startswith(prefix):
                u = u[len(prefix):]
        if _has_magic(u):
            found = sorted(_glob.glob(u, recursive=True))
            if not found:
                raise FileNotFoundError(2, "no files match", u)
            paths += found
        else:
            paths.append(u)
    return [
        _File(os.path.abspath(i["path"]), i["name"], i["size"], i["compressed"], i["path"])
        for i in widefinder.inputs(paths)
    ]


def _walk_key(path: str) -> list:
    # Component by component, as the CLI walks a directory (each level sorted
    # by file name): "a/x" comes before "a.log", unlike a plain string sort.
    return path.split("/")


def _remote_files(fs, paths: list) -> list:
    """Files of any other fsspec file system: globs expanded, directories walked."""
    infos = []
    for p in paths:
        if _has_magic(p):
            found = sorted(fs.glob(p, detail=True).values(), key=lambda i: _walk_key(i["name"]))
            if not found:
                raise FileNotFoundError(2, "no files match", fs.unstrip_protocol(p))
        else:
            found = [fs.info(p)]  # FileNotFoundError for a missing path
        for info in found:
            if info["type"] == "directory":
                walked = fs.find(info["name"], detail=True).values()
                infos += sorted(walked, key=lambda i: _walk_key(i["name"]))
            else:
                infos.append(info)
    heads = fs.cat_ranges(
        [i["name"] for i in infos], [0] * len(infos), [min(6, i["size"]) for i in infos]
    )
    out = []
    for info, head in zip(infos, heads):
        if isinstance(head, BaseException):
            raise head
        kind = next((k for m, k in _MAGIC.items() if head.startswith(m)), None)
        name = fs.unstrip_protocol(info["name"])
        out.append(_File(info["name"], name, int(info["size"]), kind))
    return out


def _list(urlpath, storage_options):
    """(fs or None for local files, [_File]) in the CLI's order."""
    urls = _urls(urlpath)
    fs, paths = _filesystem(urls, storage_options)
    if _is_local(fs):
        return None, _local_files(urls)
    return fs, _remote_files(fs, paths)


def _blocksize(blocksize) -> Optional[int]:
    if blocksize is None:
        return None
    if isinstance(blocksize, str):
        from dask.utils import parse_bytes

        blocksize = parse_bytes(blocksize)
    blocksize = int(blocksize)
    if blocksize <= 0:
        raise ValueError(f"blocksize must be positive, not {blocksize}")
    return blocksize


def _parts(files: list, blocksize: Optional[int]) -> list:
    """Byte ranges of every file: `blocksize` bytes each (None: one per file),
    one per compressed file, one (empty) for an empty file so it still counts."""
    parts = []
    for i, f in enumerate(files):
        if f.compressed:
            parts.append(_Part(f.path, f.name, 0, None, i, f.size))
            continue
        step = blocksize or max(f.size, 1)
        for start in range(0, max(f.size, 1), step):
            parts.append(_Part(f.path, f.name, start, min(start + step, f.size), i, f.size))
    return parts


# ------------------------------------------------------ reading one range --


def _fetch(fs, part: _Part):
    """Bytes of a range on a remote file system, as `read_range`/`partial` need
    them: (data, base, start, end), the range being [start, end) of `data` and
    `data[0]` being byte `base` of the file.

    The fetch starts one byte early (does a record start at `start`? only the
    byte before says) and goes on past `end` until the newline that ends the
    range's last record (at or after `end - 1`) or the end of the file."""
    if part.end is None:
        return fs.cat_file(part.path), 0, 0, None
    base = max(part.start - 1, 0)
    end = min(part.end, part.size)
    data = fs.cat_file(part.path, base, end) if end > base else b""
    stop, step = end, _TAIL_STEP
    if stop < part.size and not data.endswith(b"\n"):
        chunks = [data]
        while stop < part.size:
            more = fs.cat_file(part.path, stop, min(stop + step, part.size))
            if not more:
                break
            nl = more.find(b"\n")
            if nl >= 0:
                chunks.append(more[: nl + 1])
                break
            chunks.append(more)
            stop += len(more)
            step *= 2
        data = b"".join(chunks)
    return data, base, part.start - base, end - base


def _check_remote_format(fmt: str):
    kind = fmt.split(":", 1)[0].strip().lower()
    if kind in ("csv", "tsv"):
        raise NotImplementedError(
            f"format {fmt!r} on a non-local file system is not supported yet: a "
            "range fetched from the middle of a file does not see the file's header "
            "(copy the files to a shared local file system, or use a log format)"
        )
    if kind == "auto":
        raise NotImplementedError(
            "format 'auto' on a non-local file system is not supported yet: each "
            "range would guess from its own bytes; name the format (e.g. 'combined')"
        )


def _strip_virtual(columns):
    """The columns to ask the parser for: `_file` is added here, by name."""
    if columns is None:
        return None, False
    want_file = "_file" in columns
    native = [c for c in columns if c != "_file"]
    if want_file and not native:
        native = ["_offset"]  # any column, for the row count; dropped again
    return native, want_file


def _read_part(fs, part: _Part, fmt: str, columns):
    """The records of one range as a pyarrow.Table (the requested columns)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    native, want_file = _strip_virtual(columns)
    if fs is None:
        table = widefinder.read_range(part.path, part.start, part.end, format=fmt, columns=native)
    else:
        data, base, start, end = _fetch(fs, part)
        table = widefinder.read_range(data, start, end, format=fmt, columns=native)
        if base and "_offset" in table.column_names:
            i = table.column_names.index("_offset")
            col = table.column(i)
            table = table.set_column(i, table.field(i), pc.add(col, pa.scalar(base, col.type)))
    if want_file:
        names = pa.array([part.name] * table.num_rows, pa.string())
        table = table.append_column("_file", names).select(list(columns))
    return table


def _pandas_type(t):
    """pyarrow type -> pandas dtype for `to_pandas`: nullable integers and
    booleans, so a partition with a NULL (a `-` byte count) has the same dtype
    as one without and as the meta (plain int64 would turn into float64)."""
    import pandas as pd
    import pyarrow as pa

    if pa.types.is_integer(t):
        return pd.api.types.pandas_dtype(("Int" if pa.types.is_signed_integer(t) else "UInt")
                                         + str(t.bit_width))
    if pa.types.is_boolean(t):
        return pd.BooleanDtype()
    return None


def _to_pandas(table):
    return table.to_pandas(types_mapper=_pandas_type)


class _ReadLog:
    """The function of `read_log`'s partitions: one `_Part` -> pandas.DataFrame.
    Its `columns` argument lets Dask's optimiser push a column selection down
    into the parser, which then builds only those columns."""

    def __init__(self, fs, fmt: str):
        self.fs = fs
        self.fmt = fmt

    def __call__(self, part: _Part, columns=None):
        return _to_pandas(_read_part(self.fs, part, self.fmt, columns))

    def __dask_tokenize__(self):
        from dask.base import tokenize

        return ("widefinder-read-log", tokenize(self.fs), self.fmt)


_HEAD = 256 << 10  # what `wf sql` samples to detect a format or infer types


def _decoded_head(read, kind: str) -> bytes:
    """About the first 256 KiB of a compressed file's text; `read(offset, n)`
    gives its compressed bytes. b"" when Python cannot decode the codec."""
    import bz2
    import lzma
    import zlib

    if kind == "gzip":
        d = zlib.decompressobj(wbits=47)
    elif kind == "bzip2":
        d = bz2.BZ2Decompressor()
    elif kind in ("xz", "lzma"):
        d = lzma.LZMADecompressor()
    else:
        try:
            import zstandard
        except ImportError:
            return b""
        d = zstandard.ZstdDecompressor().decompressobj()
    out, off = [], 0
    while sum(map(len, out)) < _HEAD:
        chunk = read(off, 64 << 10)
        if not chunk:
            break
        off += len(chunk)
        try:
            out.append(d.decompress(chunk))
        except (EOFError, OSError, ValueError, zlib.error):
            break
    return b"".join(out)[:_HEAD]


def _meta_table(fs, files: list, fmt: str, columns):
    """An empty table of the partitions' schema, from the start of the first
    file that is neither compressed nor empty (else the decoded start of the
    first file)."""
    native, want_file = _strip_virtual(columns)
    plain = [f for f in files if not f.compressed and f.size > 0]
    if plain:
        f = plain[0]
        if fs is None:
            source = f.path
        else:
            source = fs.cat_file(f.path, 0, min(f.size, _HEAD))
    else:
        f = files[0]
        if fs is None:
            with open(f.path, "rb") as fh:
                source = _decoded_head(lambda off, n: (fh.seek(off), fh.read(n))[1], f.compressed)
        else:
            source = _decoded_head(lambda off, n: fs.cat_file(f.path, off, min(off + n, f.size))
                                   if off < f.size else b"", f.compressed)
    table = widefinder.read_range(source, 0, 0, format=fmt, columns=native)
    if want_file:
        import pyarrow as pa

        table = table.append_column("_file", pa.array([], pa.string())).select(list(columns))
    return table


def read_log(urlpath, format="combined", columns=None, blocksize="256MiB",
             storage_options=None):
    """A Dask DataFrame of the records of log (or CSV, JSON lines, ...) files.

    urlpath: a path, glob, directory or any fsspec URL (``s3://bucket/logs/*.log``),
        or a list of them. Directories are walked recursively, sorted by name.
    format: any format of `wf sql --format` (default ``"combined"``: the Apache
        combined log). ``"auto"`` looks at the start of each local file; on other
        file systems name the format.
    columns: the columns to build (default: every column of the format), also
        ``_offset`` (the record's byte offset in its file) and ``_file`` (its
        name). ``_line`` needs every line before a record and is not available
        per range (use ``widefinder.read``).
    blocksize: bytes per partition (an int, or a string such as ``"64MiB"``);
        ``None``: one partition per file. A compressed file is one partition.
    storage_options: passed to fsspec (credentials, endpoints, ...).

    Each partition holds the records that start in its byte range, so the
    partitions hold every record exactly once. Lines that do not parse are not
    rows, as in `wf sql`. Integers are pandas' nullable types (a ``-`` byte count
    is ``<NA>``), text is pandas' string dtype, times are UTC. Dask pushes a later
    column selection (``df.groupby("status").size()``) down to the parser, which
    then builds only that column.
    """
    import dask.dataframe as dd

    if columns is not None:
        columns = [columns] if isinstance(columns, str) else list(columns)
        if "_line" in columns:
            raise ValueError(
                "column _line is not available per byte range (a line number needs "
                "every line before it); use widefinder.read, or _offset"
            )
    fs, files = _list(urlpath, storage_options)
    if not files:
        raise FileNotFoundError(2, "no input files", str(urlpath))
    if fs is not None:
        _check_remote_format(format)
    parts = _parts(files, _blocksize(blocksize))
    meta = _to_pandas(_meta_table(fs, files, format, columns))
    return dd.from_map(
        _ReadLog(fs, format),
        parts,
        meta=meta,
        columns=columns,
        label="widefinder-read-log",
        enforce_metadata=False,
    )


# ------------------------------------------------------------------ jobs --


def _partial_task(fs, part: _Part, job: str, opts: dict) -> bytes:
    if fs is None:
        return widefinder.partial(job, part.path, part.start, part.end, input=part.input, **opts)
    data, _, start, end = _fetch(fs, part)
    return widefinder.partial(job, data, start, end, input=part.input, **opts)


def _merge_task(job: str, states: list) -> bytes:
    return widefinder.merge(job, states)


def _finish_task(job: str, state: bytes, top: int, paths, names):
    out = widefinder.finish(job, state, top=top, paths=paths)
    if job == "pangram":
        # Windows are read back from the paths the workers open; the report
        # names them as the CLI does, a name that is not UTF-8 by its bytes
        # (`path_bytes`: matched by the lossy text, it was not renamed).
        rename = dict(zip(paths, names))
        for w in out:
            opened = os.fsdecode(bytes(w["path_bytes"])) if "path_bytes" in w else w["path"]
            given = rename.get(opened)
            if given is None:
                continue
            w.pop("path_bytes", None)
            raw = os.fsencode(given)
            try:
                w["path"] = raw.decode("utf-8")
            except UnicodeDecodeError:
                w["path"] = raw.decode("utf-8", "replace")
                w["path_bytes"] = list(raw)
    return out


def _run(job: str, urlpath, *, blocksize, split_every, storage_options, top=10,
         opts=None):
    """One partial task per range, a tree of merges, one finish; computed."""
    from dask import delayed
    from dask.base import tokenize

    if split_every is None or int(split_every) < 2:
        raise ValueError(f"split_every must be at least 2, not {split_every}")
    split_every = int(split_every)
    opts = opts or {}
    fs, files = _list(urlpath, storage_options)
    if not files:
        raise FileNotFoundError(2, "no input files", str(urlpath))
    if fs is not None and job == "pangram":
        raise NotImplementedError(
            "pangram on a non-local file system is not supported yet: its windows "
            "are read back from the files by path at the end"
        )
    parts = _parts(files, _blocksize(blocksize))
    tok = tokenize(job, fs, parts, opts, top, split_every)
    states = [
        delayed(_partial_task)(fs, p, job, opts, dask_key_name=(f"{job}-partial-{tok}", i))
        for i, p in enumerate(parts)
    ]
    level = 0
    while len(states) > 1:
        states = [
            delayed(_merge_task)(job, states[i:i + split_every],
                                 dask_key_name=(f"{job}-merge-{level}-{tok}", j))
            for j, i in enumerate(range(0, len(states), split_every))
        ]
        level += 1
    paths = [f.path for f in files] if job == "pangram" else None
    names = [f.given or f.name for f in files] if job == "pangram" else [f.name for f in files]
    final = delayed(_finish_task)(job, states[0], top, paths, names,
                                  dask_key_name=f"{job}-finish-{tok}")
    return final.compute()


def wf2(urlpath, top=10, blocksize="256MiB", split_every=8, storage_options=None) -> dict:
    """The Wide Finder 2 report of the logs, computed on the current Dask scheduler.

    Returns the dict `wf wf2 --json --top TOP` prints for the same files: one
    `widefinder.partial("wf2", ...)` task per `blocksize` bytes of each file, a
    tree of merges of at most `split_every` states, one `finish`. See `read_log`
    for `urlpath` and `storage_options`.
    """
    return _run("wf2", urlpath, blocksize=blocksize, split_every=split_every,
                storage_options=storage_options, top=top)


def count(urlpath, blocksize="256MiB", split_every=8, storage_options=None) -> dict:
    """Records (lines), bytes and files, as `wf count --json` prints them
    (`{"records", "bytes", "files"}`; bytes are decoded bytes for compressed files)."""
    return _run("count", urlpath, blocksize=blocksize, split_every=split_every,
                storage_options=storage_options)


def pangram(urlpath, top=10, all=False, max_letters=None, blocksize="256MiB",
            split_every=8, storage_options=None) -> list:
    """The shortest pangrammatic windows, as the lines of `wf pangram --json`
    (`[{"path", "offset", "bytes", "letters", "text"}, ...]`): the `top` shortest,
    or with `all=True` every minimal window in input order (at most `max_letters`
    letters). Windows that cross a range boundary are stitched by the merge, so
    the answer equals one serial pass. Local (or shared) file systems only: the
    windows' text is read back from the files at the end.
    """
    opts = {"top": top, "all": all, "max_letters": max_letters}
    return _run("pangram", urlpath, blocksize=blocksize, split_every=split_every,
                storage_options=storage_options, top=top, opts=opts)
