"""Shared fixtures of the Python tests: the real `wf` binary as the oracle, and
data made once per session (generated logs, compressed copies, a text for
pangram) in temporary directories.

The binary is $WF_BIN, or target/ci/wf (else target/release/wf) of the repository (scripts/test
builds it before it runs pytest). Tests over the project's shared sample data
(`../shared/data` beside the clone) skip with a message when it is absent.
"""

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SHARED = ROOT.parent / "shared" / "data"


class Wf:
    """The `wf` command line, the oracle every answer is compared with."""

    def __init__(self, binary: Path):
        self.binary = binary

    def run(self, *args, check=True) -> subprocess.CompletedProcess:
        r = subprocess.run([str(self.binary), *map(str, args)], capture_output=True)
        if check and r.returncode != 0:
            raise AssertionError(
                f"wf {' '.join(map(str, args))} exited {r.returncode}: "
                f"{r.stderr.decode(errors='replace')}"
            )
        return r

    def json(self, *args):
        """One JSON document (count, wf2)."""
        return json.loads(self.run(*args).stdout)

    def json_lines(self, *args) -> list:
        """JSON lines (pangram, sql)."""
        return [json.loads(line) for line in self.run(*args).stdout.splitlines() if line]

    def gen_wf2(self, out: Path, size: str, seed: int, odd: float = 0.0) -> Path:
        args = ["gen", "wf2", "--size", size, "--seed", seed, "-o", out]
        if odd:
            args += ["--odd-lines", odd]
        self.run(*args)
        return out


@pytest.fixture(scope="session")
def wf() -> Wf:
    built = [ROOT / "target" / p / "wf" for p in ("ci", "release")]
    default = next((b for b in built if b.is_file()), built[0])
    binary = Path(os.environ.get("WF_BIN", default))
    if not binary.is_absolute() and not binary.exists():
        binary = ROOT / binary  # relative to the repository
    if not binary.is_file():
        pytest.fail(f"the wf binary {binary} is missing: build it (cargo build --release) "
                    "or set WF_BIN (scripts/test does both)")
    return Wf(binary)


@pytest.fixture(scope="session")
def gen_dir(wf, tmp_path_factory) -> Path:
    """Three generated logs: a.log (clean), b.log (1% odd lines: short, empty,
    tabs, leading spaces, invalid UTF-8, very long lines), sub/c.log (5% odd)."""
    d = tmp_path_factory.mktemp("gen")
    (d / "sub").mkdir()
    wf.gen_wf2(d / "a.log", "250K", 7)
    wf.gen_wf2(d / "b.log", "200K", 8, 0.01)
    wf.gen_wf2(d / "sub" / "c.log", "60K", 9, 0.05)
    return d


@pytest.fixture(scope="session")
def gen_logs(gen_dir) -> list:
    return [gen_dir / "a.log", gen_dir / "b.log", gen_dir / "sub" / "c.log"]


@pytest.fixture(scope="session")
def compressed_dir(gen_dir, tmp_path_factory) -> Path:
    """b.log compressed by the real tools: gzip, zstd, bzip2, xz (names without
    a telling suffix: formats are known by their first bytes)."""
    d = tmp_path_factory.mktemp("compressed")
    src = gen_dir / "b.log"
    for tool, args in [("gzip", ["-c"]), ("zstd", ["-q", "-c"]), ("bzip2", ["-c"]),
                       ("xz", ["-c"])]:
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} not found (apt-get install {tool})")
        with open(d / f"b.{tool}.data", "wb") as out:
            subprocess.run([tool, *args, str(src)], stdout=out, check=True)
    return d


def _words_text(seed: int, n_lines: int) -> bytes:
    """English-like text with pangrams scattered in, for pangram tests that do
    not need the Gutenberg books."""
    rnd = random.Random(seed)
    common = ("the of and to in is was he for it with as his on be at by had "
              "quick brown fox jumps over lazy dog sphinx black quartz judge vow "
              "waltz nymph jackdaws love my big sphinx").split()
    lines = []
    for _ in range(n_lines):
        words = [rnd.choice(common) if rnd.random() < 0.9 else
                 "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randrange(2, 9)))
                 for _ in range(rnd.randrange(0, 14))]
        line = " ".join(words)
        if rnd.random() < 0.1:
            line = line.capitalize() + ", -- 1895."
        lines.append(line)
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture(scope="session")
def text_dir(tmp_path_factory) -> Path:
    """Three texts; the last has no final newline."""
    d = tmp_path_factory.mktemp("text")
    (d / "one.txt").write_bytes(_words_text(1, 3000))
    (d / "two.txt").write_bytes(_words_text(2, 1500))
    (d / "three.txt").write_bytes(_words_text(3, 500).rstrip(b"\n"))
    return d


def shared(sub: str) -> Path:
    p = SHARED / sub
    if not p.exists():
        pytest.skip(f"shared data absent ({p})")
    return p


@pytest.fixture(scope="session")
def shared_logs() -> dict:
    """{"combined": ongoing-1000.log, "common": nasa-aug95-20k.log}, or skip."""
    d = shared("logs")
    return {"combined": d / "ongoing-1000.log", "common": d / "nasa-aug95-20k.log"}


@pytest.fixture(scope="session")
def books() -> Path:
    """The Gutenberg sample directory, or skip."""
    return shared("gutenberg")
