"""`widefinder.report` against `wf report --json`, its oracle: the same dict
on generated logs with malformed lines, at several thread counts and chunk
sizes, with each `bots` setting, over several files and a gzip copy."""

import gzip

import pytest

import widefinder

SCANS = [dict(), dict(threads=1, chunk_size=4096), dict(threads=3, chunk_size=1000)]


def test_report_equals_cli(wf, gen_logs):
    for paths in ([gen_logs[0]], gen_logs):
        paths = [str(p) for p in paths]
        want = wf.json("report", "--json", *paths)
        assert want["general"]["valid_requests"] > 1000
        for scan in SCANS:
            assert widefinder.report(paths, **scan) == want, scan


def test_report_options_equal_cli(wf, gen_logs, tmp_path):
    log = str(gen_logs[1])
    for bots in ("include", "exclude", "only"):
        want = wf.json("report", "--json", "--bots", bots, "--max-rows", "7", log)
        assert widefinder.report(log, bots=bots, max_rows=7) == want, bots
    gz = tmp_path / "x.log.gz"
    gz.write_bytes(gzip.compress(open(log, "rb").read()))
    assert widefinder.report(gz, format="combined") == wf.json(
        "report", "--json", "--format", "combined", gz
    )


def test_resolve_names_hosts_as_the_cli(wf, tmp_path):
    log = tmp_path / "a.log"
    line = '{} - - [10/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 2 "-" "curl/8"\n'
    log.write_text(line.format("127.0.0.1") * 3 + line.format("not-an-address"))
    plain = widefinder.report(log)
    assert all("hostname" not in r for r in plain["hosts"]["data"])
    named = widefinder.report(log, resolve=True)
    assert named == wf.json("report", "--json", "--resolve", log)
    names = {r["data"]: r["hostname"] for r in named["hosts"]["data"]}
    assert names == {"127.0.0.1": "localhost", "not-an-address": ""}


def test_report_errors_raise():
    with pytest.raises(ValueError, match="bots"):
        widefinder.report(__file__, bots="some")
    with pytest.raises(ValueError, match="format"):
        widefinder.report(__file__, format="nonesuch")
    with pytest.raises(FileNotFoundError):
        widefinder.report("/nonexistent/access.log")


def test_a_log_none_of_whose_lines_read_raises(tmp_path):
    # An ISO-time log read as combined: `wf report` exits 2 on it (GoAccess
    # stops), and the package raises, naming the file and first offset.
    log = tmp_path / "iso.log"
    line = '1.2.3.4 - - [2007-06-17T21:37:17-07:00] "GET / HTTP/1.1" 200 1 "-" "x"\n'
    log.write_text(line * 3)
    with pytest.raises(ValueError, match=r"none of 3 lines read as combined \(the first at byte 0\)"):
        widefinder.report(log, format="combined")
    iso = (
        "nginx:$remote_addr - $remote_user [$time_iso8601] "
        '"$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"'
    )
    assert widefinder.report(log, format=iso)["general"]["valid_requests"] == 3
    # `widefinder.sql` too, on a table none of whose lines parse (a common
    # log read as combined: its time above is only a NULL there), as `wf sql`
    # exits 2 there.
    common = tmp_path / "common.log"
    common.write_text('1.2.3.4 - - [17/Jun/2007:21:37:17 -0700] "GET / HTTP/1.1" 200 1\n' * 3)
    q = "SELECT count(*) AS n FROM logs"
    with pytest.raises(ValueError, match=r"none of 3 lines parse as combined"):
        widefinder.sql(q, common, format="combined")
    assert widefinder.sql(q, common, format="common").to_pylist() == [{"n": 3}]
