//! `wf sql` (issue 17) against independent implementations, run as a real process:
//!
//! - every format parser against the naive reference `tests/naive/sqlref.py`, which
//!   answers the same questions (row and malformed-line counts, GROUP BY status,
//!   sums by method, counts by hour, top clients, distinct paths; per-column
//!   counts, sums, minima and maxima) with its own plain parser, on the shared
//!   logs, on generated logs full of odd lines and on generated JSON lines, logfmt
//!   and CSV files full of odd records, at `-j 1/2/3` and chunk sizes down to 7
//!   bytes; `--stats` counts (rows, malformed, blank, invalid UTF-8, bad values)
//!   are compared too;
//! - CSV (1BRC and quoted multi-line fields) against DuckDB, the oracle;
//! - `examples/sql/wf2.sql` against `wf wf2 --json`;
//! - scans shared by the readers of a UNION ALL against each branch run alone;
//! - exit statuses, error messages and `-o` files read back by DuckDB/pyarrow.
//!
//! Python: `$WF_PYTHON` (scripts/test points it at a virtual environment with
//! duckdb and pyarrow) or `python3`. Without duckdb the DuckDB comparisons print
//! "skipping: duckdb not installed", unless `WF_REQUIRE_DUCKDB=1` (scripts/test,
//! CI), which makes that a failure.

mod common;
use common::*;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

const SQLREF: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/naive/sqlref.py");
const WF2_SQL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/sql/wf2.sql");

/// Every comparison runs at each thread count and chunk size.
const THREADS: [&str; 3] = ["1", "2", "3"];
const CHUNKS: [&str; 4] = ["7", "64", "1K", "8M"];

fn configs() -> Vec<(&'static str, &'static str)> {
    THREADS
        .iter()
        .flat_map(|j| CHUNKS.iter().map(move |c| (*j, *c)))
        .collect()
}

/// A temporary directory for one test; kept (and named on stderr) when
/// `WF_TEST_KEEP=1`, to look at the inputs of a failure.
fn scratch() -> tempfile::TempDir {
    let keep = std::env::var("WF_TEST_KEEP").as_deref() == Ok("1");
    let t = tempfile::Builder::new()
        .prefix("wf-sql-test")
        .disable_cleanup(keep)
        .tempdir()
        .unwrap();
    if keep {
        eprintln!("keeping {}", t.path().display());
    }
    t
}

fn paths_str(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.join(" ")
}

// ------------------------------------------------------------------ running wf sql

/// What `--stats` says about the table `logs`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Stats {
    rows: u64,
    malformed: u64,
    blank: u64,
    invalid_utf8: u64,
    bad_values: u64,
}

fn parse_stats(stderr: &str) -> Stats {
    let mut s = Stats::default();
    for line in stderr.lines() {
        let l = line.trim();
        let num = |prefix: &str| -> Option<u64> {
            l.strip_prefix(prefix).map(|r| {
                r.trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("--stats line {l:?}"))
            })
        };
        if let Some(n) = num("rows:") {
            s.rows = n;
        } else if let Some(n) = num("malformed lines:") {
            s.malformed = n;
        } else if let Some(n) = num("blank lines:") {
            s.blank = n;
        } else if let Some(n) = num("invalid UTF-8 values (replaced):") {
            s.invalid_utf8 = n;
        } else if let Some(n) = num("values not of their column's type (NULL):") {
            s.bad_values = n;
        }
    }
    s
}

struct Run {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

fn wf_sql(args: &[&str], query: &str, paths: &[PathBuf]) -> Run {
    let mut c = wf();
    c.arg("sql")
        .arg("--no-progress")
        .args(args)
        .arg(query)
        .args(paths);
    let o = run(c, None);
    Run {
        code: o.status.code(),
        stdout: o.stdout,
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn json_lines(out: &[u8]) -> Vec<Value> {
    String::from_utf8(out.to_vec())
        .expect("UTF-8 output")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// `wf sql --json --stats ARGS QUERY PATHS`, which must succeed: its rows and stats.
fn sql_ok(args: &[&str], query: &str, paths: &[PathBuf]) -> (Vec<Value>, Stats) {
    let r = wf_sql(&[&["--json", "--stats"], args].concat(), query, paths);
    assert_eq!(
        r.code,
        Some(0),
        "wf sql {args:?} {query:?} {}\nstderr: {}",
        paths_str(paths),
        r.stderr
    );
    (json_lines(&r.stdout), parse_stats(&r.stderr))
}

fn get(row: &Value, key: &str) -> Value {
    row.get(key).cloned().unwrap_or(Value::Null)
}

fn tuples(rows: &[Value], keys: &[&str]) -> Value {
    Value::Array(
        rows.iter()
            .map(|r| Value::Array(keys.iter().map(|k| get(r, k)).collect()))
            .collect(),
    )
}

/// A column name as a SQL identifier.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

// ------------------------------------------------------------------ the reference

fn reference(format: &str, extra: &[&str], paths: &[PathBuf]) -> Value {
    let mut c = Command::new(python());
    c.arg(SQLREF)
        .args(["--format", format])
        .args(extra)
        .args(paths);
    let out = ok_bytes(c, None);
    serde_json::from_slice(&out).expect("sqlref.py prints JSON")
}

/// The stats `wf sql --stats` must print for a query projecting `cols`.
fn expected_stats(want: &Value, cols: &[&str]) -> Stats {
    let sum = |key: &str| -> u64 {
        cols.iter()
            .map(|c| want[key][*c].as_u64().unwrap_or(0))
            .sum()
    };
    Stats {
        rows: want["rows"].as_u64().unwrap(),
        malformed: want["malformed"].as_u64().unwrap(),
        blank: want["blank"].as_u64().unwrap(),
        invalid_utf8: sum("invalid_utf8"),
        bad_values: sum("bad_values"),
    }
}

// ------------------------------------------------------------------ web logs

/// Rows and the sum of their `_offset`s by `_file`: where the rows came from.
const BY_FILE: &str =
    "SELECT _file AS f, count(*) AS n, sum(_offset) AS o FROM logs GROUP BY _file ORDER BY _file";

/// The sum of the rows' `_line`s by `_file` (read front to back per file).
const BY_LINE: &str = "SELECT _file AS f, sum(_line) AS l FROM logs GROUP BY _file ORDER BY _file";

/// A question about a web log: its SQL, the output columns that make one answer
/// row, the format columns it projects (for the `--stats` counts), and whether the
/// answer is one value.
struct LogQuery {
    key: &'static str,
    sql: &'static str,
    fields: &'static [&'static str],
    cols: &'static [&'static str],
    scalar: bool,
    combined_only: bool,
}

const LOG_QUERIES: &[LogQuery] = &[
    LogQuery {
        key: "by_file",
        sql: BY_FILE,
        fields: &["f", "n", "o"],
        cols: &[],
        scalar: false,
        combined_only: false,
    },
    LogQuery {
        key: "by_line",
        sql: BY_LINE,
        fields: &["f", "l"],
        cols: &[],
        scalar: false,
        combined_only: false,
    },
    LogQuery {
        key: "rows",
        sql: "SELECT count(*) AS n FROM logs",
        fields: &["n"],
        cols: &[],
        scalar: true,
        combined_only: false,
    },
    LogQuery {
        key: "by_status",
        sql: "SELECT status, count(*) AS n FROM logs GROUP BY status ORDER BY status NULLS FIRST",
        fields: &["status", "n"],
        cols: &["status"],
        scalar: false,
        combined_only: false,
    },
    LogQuery {
        key: "by_method",
        sql: "SELECT method, sum(bytes) AS s, count(bytes) AS c, count(*) AS n FROM logs \
              GROUP BY method ORDER BY method NULLS FIRST",
        fields: &["method", "s", "c", "n"],
        cols: &["method", "bytes"],
        scalar: false,
        combined_only: false,
    },
    LogQuery {
        key: "by_hour",
        sql: "SELECT date_trunc('hour', time) AS h, count(*) AS n FROM logs \
              GROUP BY 1 ORDER BY 1 NULLS FIRST",
        fields: &["h", "n"],
        cols: &["time"],
        scalar: false,
        combined_only: false,
    },
    LogQuery {
        key: "top_clients",
        sql: "SELECT client, count(*) AS n FROM logs GROUP BY client \
              ORDER BY n DESC, client LIMIT 10",
        fields: &["client", "n"],
        cols: &["client"],
        scalar: false,
        combined_only: false,
    },
    LogQuery {
        key: "distinct_paths",
        sql: "SELECT count(DISTINCT path) AS n FROM logs",
        fields: &["n"],
        cols: &["path"],
        scalar: true,
        combined_only: false,
    },
    LogQuery {
        key: "distinct_referrers",
        sql: "SELECT count(DISTINCT referrer) AS n FROM logs",
        fields: &["n"],
        cols: &["referrer"],
        scalar: true,
        combined_only: true,
    },
    LogQuery {
        key: "ua_chars",
        sql: "SELECT sum(length(user_agent)) AS n FROM logs",
        fields: &["n"],
        cols: &["user_agent"],
        scalar: true,
        combined_only: true,
    },
];

/// Every question about a web log in `format` equals the reference's answer, with
/// the same `--stats`, at every configuration.
fn check_log(format: &str, paths: &[PathBuf], configs: &[(&str, &str)]) {
    let want = reference(format, &[], paths);
    assert!(want["rows"].as_u64().unwrap() > 0, "no rows in {paths:?}");
    for q in LOG_QUERIES {
        if q.combined_only && format == "common" {
            continue;
        }
        let expected = if q.key == "rows" {
            want["rows"].clone()
        } else {
            want["answers"][q.key].clone()
        };
        let stats = expected_stats(&want, q.cols);
        for (j, c) in configs {
            let args = ["--format", format, "-j", j, "--chunk-size", c];
            let (rows, got_stats) = sql_ok(&args, q.sql, paths);
            let got = if q.scalar {
                assert_eq!(rows.len(), 1, "{}", q.sql);
                get(&rows[0], q.fields[0])
            } else {
                tuples(&rows, q.fields)
            };
            let what = format!(
                "{format} {} -j {j} --chunk-size {c} {}",
                q.key,
                paths_str(paths)
            );
            assert_eq!(got, expected, "{what}");
            assert_eq!(got_stats, stats, "--stats of {what}");
        }
    }
}

#[test]
fn shared_logs_equal_reference() {
    let Some(dir) = shared_data("logs") else {
        return;
    };
    let ongoing = dir.join("ongoing-1000.log");
    let nasa = dir.join("nasa-aug95-20k.log");
    check_log("combined", std::slice::from_ref(&ongoing), &configs());
    check_log("common", std::slice::from_ref(&nasa), &configs());
    // `auto` finds the same formats, and says so.
    for (f, name) in [(&ongoing, "combined"), (&nasa, "common")] {
        let r = wf_sql(
            &["--json"],
            "SELECT count(*) AS n FROM logs",
            std::slice::from_ref(f),
        );
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert!(
            r.stderr.contains(&format!("format {name} (detected)")),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn generated_odd_logs_equal_reference() {
    let t = scratch();
    let g = generated_log(t.path(), "2M", "0.05", 11);
    check_log("combined", &[g], &configs());
}

/// Lines that break log parsers: escapes, missing and unconvertible values, zones,
/// stray whitespace, bad bytes, a 1 MB line, CRLF, and no final newline.
fn odd_log_lines() -> Vec<u8> {
    let ua = "\"Mozilla/5.0 (X11; Linux) Firefox/1.0\"";
    let line = |client: &str, time: &str, req: &str, status: &str, bytes: &str, rest: &str| {
        format!("{client} - - [{time}] \"{req}\" {status} {bytes}{rest}\n")
    };
    let t = "10/Oct/2000:13:55:36 -0700";
    let full = |client: &str, req: &str, status: &str, bytes: &str| {
        line(client, t, req, status, bytes, &format!(" \"-\" {ua}"))
    };
    let mut s = String::new();
    s += &full("1.2.3.4", "GET /a b.gif HTTP/1.0", "200", "2326");
    s += "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] \"GET /q?x=\\\"a b\\\" HTTP/1.1\" 200 10 \"http://x/\\\"q\\\"\" \"UA \\\\\"\n";
    s += &full("1.2.3.4", "-", "408", "-");
    s += &full("1.2.3.4", "GET /only-one-space", "400", "0");
    s += &full("1.2.3.4", "GET  HTTP/1.1", "200", "5");
    s += &full("1.2.3.4", "GET /a HTTP/1.1", "OK", "5");
    s += &full("1.2.3.4", "GET /a HTTP/1.1", "-", "5");
    s += &full("1.2.3.4", "GET /a HTTP/1.1", "+200", "-5");
    s += &full("1.2.3.4", "GET /a HTTP/1.1", "99999999999999999999", "5");
    s += &full("1.2.3.4", "GET /a HTTP/1.1", "200", "12 34");
    s += &full("1.2.3.4", "GET /a HTTP/1.1", "200", "");
    s += &full("1.2.3.4", "GET /a HTTP/1.1", "200", "0x10");
    s += &line(
        "5.6.7.8",
        "-",
        "GET /t HTTP/1.1",
        "200",
        "1",
        &format!(" \"-\" {ua}"),
    );
    s += &line(
        "5.6.7.8",
        "10/Foo/2000:13:55:36 -0700",
        "GET /t HTTP/1.1",
        "200",
        "1",
        " \"-\" \"x\"",
    );
    s += &line(
        "5.6.7.8",
        "31/Feb/2001:23:59:60 +0530",
        "GET /t HTTP/1.1",
        "200",
        "1",
        " \"-\" \"x\"",
    );
    s += &line(
        "5.6.7.8",
        "01/jan/1999:00:00:00 +0000",
        "GET /t HTTP/1.1",
        "200",
        "1",
        " \"-\" \"x\"",
    );
    s += &line(
        "5.6.7.8",
        "1/Jan/1999:00:00:00 +0000",
        "GET /t HTTP/1.1",
        "200",
        "1",
        " \"-\" \"x\"",
    );
    s += &line(
        "5.6.7.8",
        "01/Jan/1999:24:00:00 +0000",
        "GET /t HTTP/1.1",
        "200",
        "1",
        " \"-\" \"x\"",
    );
    s += &line(
        "9.9.9.9",
        t,
        "GET /trail HTTP/1.1",
        "200",
        "1",
        " \"-\" \"x\" \t ",
    );
    s += &line(
        "9.9.9.9",
        t,
        "GET /trail HTTP/1.1",
        "200",
        "1",
        " \"-\" \"x\" junk",
    );
    s += &line(
        "9.9.9.9",
        t,
        "GET /quote HTTP/1.1",
        "200",
        "1",
        " \"-\" \"a \"b\" c\"",
    );
    s += &line(
        "9.9.9.9",
        t,
        "GET /ref HTTP/1.1",
        "200",
        "1",
        " \"a\" \"b\" \"ua\"",
    );
    s += &line(
        "9.9.9.9",
        t,
        "GET /ref HTTP/1.1",
        "200",
        "1",
        " \"a\"b\" \"ua\"",
    );
    s += "1.2.3.4 - john doe [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1 \"-\" \"x\"\n";
    s += " 1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1 \"-\" \"x\"\n";
    s += "1.2.3.4\t-\t-\t[10/Oct/2000:13:55:36 -0700]\t\"GET / HTTP/1.1\"\t200\t1\t\"-\"\t\"x\"\n";
    s += "::1 - - [10/Oct/2000:13:55:36 -0700] \"GET /v6 HTTP/1.1\" 200 1 \"-\" \"x\"\r\n";
    s += "\n\r\nshort\n   \n";
    s += &line("a", t, "POST /p HTTP/1.1", "201", "7", " \"-\" \"x\"");
    s += &line("a", t, "POST /p HTTP/1.1", "201", "8", " \"-\" \"x\"");
    s += &line("b", t, "POST /p HTTP/1.1", "201", "9", " \"-\" \"x\"");
    let mut v = s.into_bytes();
    // Invalid UTF-8 and NUL in the client, the path and the user agent.
    v.extend_from_slice(b"bad\xff\xfe - - [10/Oct/2000:13:55:36 -0700] \"GET /p\xc3\x28ath HTTP/1.1\" 200 3 \"-\" \"U\xe2\x82A\0\"\n");
    v.extend_from_slice(
        b"c\0d - - [10/Oct/2000:13:55:36 -0700] \"G\xffET /x HTTP/1.1\" 200 3 \"-\" \"ua\"\n",
    );
    // A 1 MB line.
    let long = format!("/long?{}", "a%20b".repeat(200_000));
    v.extend_from_slice(
        full("long.example", &format!("GET {long} HTTP/1.1"), "200", "99").as_bytes(),
    );
    // The last line has no newline.
    v.extend_from_slice(
        full("last.example", "GET /end HTTP/1.1", "200", "1")
            .trim_end()
            .as_bytes(),
    );
    v
}

#[test]
fn odd_log_lines_equal_reference() {
    let t = scratch();
    let odd = t.path().join("odd.log");
    std::fs::write(&odd, odd_log_lines()).unwrap();
    let empty = t.path().join("empty.log");
    std::fs::write(&empty, b"").unwrap();
    let g = generated_log(t.path(), "200K", "0.2", 5);
    check_log("combined", std::slice::from_ref(&odd), &configs());
    // Several inputs, an empty one among them.
    check_log(
        "combined",
        &[odd.clone(), empty, g.clone()],
        &[("1", "8M"), ("3", "7"), ("2", "1K")],
    );
    // The same lines as `common` (the last two fields are then part of `bytes`).
    check_log("common", &[odd, g], &[("1", "8M"), ("2", "7"), ("3", "64")]);
}

#[test]
fn vcombined_equals_reference() {
    let t = scratch();
    let g = generated_log(t.path(), "300K", "0.1", 2);
    let mut v = Vec::new();
    let hosts: [&[u8]; 6] = [
        b"www.example.com:80 ",
        b"api.example.com:443 ",
        b"x:abc ",
        b"[::1]:8080 ",
        b"nohost ",
        b"",
    ];
    for (i, l) in std::fs::read(&g)
        .unwrap()
        .split(|&b| b == b'\n')
        .enumerate()
    {
        if l.is_empty() && i > 0 {
            continue;
        }
        v.extend_from_slice(hosts[i % 7 % 6]);
        v.extend_from_slice(l);
        v.push(b'\n');
    }
    let p = t.path().join("v.log");
    std::fs::write(&p, v).unwrap();
    let want = reference("vcombined", &[], std::slice::from_ref(&p));
    // vhost and port columns, with the port's bad values counted.
    let (rows, stats) = sql_ok(
        &["--format", "vcombined", "-j", "2", "--chunk-size", "1K"],
        "SELECT vhost, count(*) AS n, sum(port) AS p FROM logs GROUP BY vhost ORDER BY vhost",
        std::slice::from_ref(&p),
    );
    assert!(rows.len() >= 4, "{rows:?}");
    assert_eq!(stats, expected_stats(&want, &["vhost", "port"]));
    check_log("vcombined", &[p], &[("1", "8M"), ("2", "7"), ("3", "1K")]);
}

// ------------------------------------------------------------------ other formats

/// A deterministic pseudo-random source for generated records.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "alpha",
    "beta",
    "gamma",
    "über",
    "naïve",
    "東京",
    "x",
    "a b",
    "comma,here",
    "semi;colon",
    "tab\there",
    "quote\"d",
    "back\\slash",
    "=eq",
    "",
];

/// Characters counted in text columns (by code point), as sqlref.py's SPECIALS.
const SPECIALS: [(&str, u32); 6] = [
    ("lf", 10),
    ("tab", 9),
    ("cr", 13),
    ("quote", 34),
    ("backslash", 92),
    ("replacement", 0xfffd),
];

/// The SQL that asks per-column questions of a table with `columns` (name, type),
/// and a function turning its one result row into the reference's answers.
fn column_query(columns: &[(String, String)]) -> (String, Vec<(String, String, String)>) {
    let mut select = Vec::new();
    // (alias, column, answer key)
    let mut keys = Vec::new();
    for (i, (name, kind)) in columns.iter().enumerate() {
        let c = ident(name);
        let mut add = |expr: String, key: &str| {
            let alias = format!("a{i}_{key}");
            select.push(format!("{expr} AS {alias}"));
            keys.push((alias, name.clone(), key.to_string()));
        };
        add(format!("count({c})"), "count");
        match kind.as_str() {
            "int" | "float" => {
                add(format!("sum({c})"), "sum");
                add(format!("min({c})"), "min");
                add(format!("max({c})"), "max");
            }
            "timestamp" => {
                add(format!("min(CAST({c} AS BIGINT))"), "min");
                add(format!("max(CAST({c} AS BIGINT))"), "max");
            }
            "bool" => add(format!("count(CASE WHEN {c} THEN 1 END)"), "true"),
            _ => {
                add(format!("count(DISTINCT {c})"), "distinct");
                add(format!("min({c})"), "min");
                add(format!("max({c})"), "max");
                add(format!("sum(length({c}))"), "chars");
                for (key, code) in SPECIALS {
                    add(
                        format!("sum(length({c}) - length(replace({c}, chr({code}), '')))"),
                        key,
                    );
                }
            }
        }
    }
    (format!("SELECT {} FROM logs", select.join(", ")), keys)
}

/// Equal, or both numbers within `rel` of each other (float sums depend on the
/// order of addition, which depends on the threads).
fn close(a: &Value, b: &Value, rel: f64) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) if a.is_f64() || b.is_f64() => {
            x == y || (x - y).abs() <= rel * x.abs().max(y.abs())
        }
        _ => a == b,
    }
}

fn arrow_type(kind: &str) -> &'static str {
    match kind {
        "string" => "Utf8View",
        "int" => "Int64",
        "float" => "Float64",
        "bool" => "Boolean",
        "timestamp" => "Timestamp",
        k => panic!("unknown type {k}"),
    }
}

/// The columns and types wf infers, and per-column counts, sums, minima and maxima,
/// equal the reference's at every configuration.
fn check_columns(format: &str, extra: &[&str], paths: &[PathBuf], configs: &[(&str, &str)]) {
    let want = reference(format, extra, paths);
    let columns: Vec<(String, String)> = want["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c[0].as_str().unwrap().into(), c[1].as_str().unwrap().into()))
        .collect();
    let fmt = [&["--format", format][..], extra].concat();
    let (types, _) = sql_ok(
        &fmt,
        "SELECT column_name, data_type FROM information_schema.columns \
         WHERE table_name = 'logs' ORDER BY ordinal_position",
        &paths[..1],
    );
    let got: Vec<(String, String)> = types
        .iter()
        .map(|r| {
            let t = r["data_type"].as_str().unwrap();
            let t = if t.starts_with("Timestamp") {
                "Timestamp"
            } else {
                t
            };
            (
                r["column_name"].as_str().unwrap().to_string(),
                t.to_string(),
            )
        })
        .filter(|(n, _)| !["_file", "_offset", "_line"].contains(&n.as_str()))
        .collect();
    let expected: Vec<(String, String)> = columns
        .iter()
        .map(|(n, k)| (n.clone(), arrow_type(k).to_string()))
        .collect();
    assert_eq!(got, expected, "columns of {format} {}", paths_str(paths));

    let (query, keys) = column_query(&columns);
    let names: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
    let stats = expected_stats(&want, &names);
    for (j, c) in configs {
        let args = [&fmt[..], &["-j", j, "--chunk-size", c]].concat();
        let (rows, got_stats) = sql_ok(&args, &query, paths);
        assert_eq!(rows.len(), 1);
        let what = format!("{format} -j {j} --chunk-size {c} {}", paths_str(paths));
        for (alias, col, key) in &keys {
            let got = get(&rows[0], alias);
            let exp = want["answers"][col][key].clone();
            let rel = if key == "sum" { 1e-9 } else { 0.0 };
            assert!(
                close(&got, &exp, rel),
                "{what}: {key} of column {col:?}: wf {got}, reference {exp}"
            );
        }
        assert_eq!(got_stats, stats, "--stats of {what}");
        let (rows, _) = sql_ok(&args, BY_FILE, paths);
        assert_eq!(
            tuples(&rows, &["f", "n", "o"]),
            want["answers"]["by_file"],
            "_file and _offset of {what}"
        );
        let (rows, _) = sql_ok(&args, BY_LINE, paths);
        assert_eq!(
            tuples(&rows, &["f", "l"]),
            want["answers"]["by_line"],
            "_line of {what}"
        );
    }
}

fn jsonl_data() -> Vec<u8> {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out: Vec<u8> = Vec::new();
    for i in 0..1400u64 {
        let word = r.pick(WORDS);
        let level = r.pick(&["info", "warn", "error"]);
        let dur = if r.below(3) == 0 {
            json!(r.below(100))
        } else {
            json!(r.below(4000) as f64 / 8.0 - 100.0)
        };
        let mut rec = json!({
            "id": i,
            "level": level,
            "dur": dur,
            "ok": r.below(2) == 0,
            "msg": format!("{word} #{i}, \"quoted\" \\ {}", r.pick(WORDS)),
            "tags": [word, i % 7, {"k": null, "n": [1, 2.5]}],
            "user": if i % 5 == 0 { Value::Null } else { json!(format!("u{}", i % 13)) },
            "ключ": i % 17,
            "odd key\"": word,
        });
        let line: Vec<u8> = match i % 50 {
            1 => b"{\"id\": 1}".to_vec(),
            2 => b"  {\"id\":2,\"user\":42,\"level\":true}  ".to_vec(),
            3 => b"[1, 2, 3]".to_vec(),
            4 => b"\"just a string\"".to_vec(),
            5 => b"42".to_vec(),
            6 => b"{\"id\": 6,".to_vec(),
            7 => b"{\"id\":7}{\"id\":8}".to_vec(),
            8 => b"{\"id\": NaN}".to_vec(),
            9 => b"{\"id\": 9, \"msg\": \"bad \xff utf-8\"}".to_vec(),
            10 => b"   ".to_vec(),
            11 => b"".to_vec(),
            12 => b"{\"id\":12,\"id\":13,\"user\":{\"nested\":{\"deep\":[[],{}]}}}".to_vec(),
            13 => b"{\"id\":14,\"user\":1.5,\"tags\":\"plain\",\"msg\":\"esc \\u00e9 \\n \\t \\\" \\\\ \\/\"}"
                .to_vec(),
            14 => {
                let mut l = serde_json::to_vec(&rec).unwrap();
                l.push(b'\r');
                l
            }
            // After the sample (first 1000 records): values of shapes it did not
            // show that still fit (values that do not fit stop the query).
            20 if i > 1000 => "{\"id\":20,\"dur\":3,\"ok\":false,\"late\":1,\"ключ\":-1}".into(),
            21 if i == 1021 => {
                "{\"id\":9007199254740993,\"dur\":-0,\"ok\":false,\"ключ\":-7}"
                    .into()
            }
            22 if i > 1000 => "{\"id\":-0,\"ключ\":0,\"dur\":1E1}".into(),
            _ => {
                if i % 11 == 0 {
                    rec.as_object_mut().unwrap().remove("msg");
                }
                serde_json::to_vec(&rec).unwrap()
            }
        };
        out.extend_from_slice(&line);
        out.push(b'\n');
    }
    // A 1 MB line, and a last line without newline.
    let big = json!({"id": 5000, "msg": "m".repeat(1 << 20), "level": "big"});
    out.extend_from_slice(&serde_json::to_vec(&big).unwrap());
    out.push(b'\n');
    out.extend_from_slice(b"{\"id\": 5001, \"level\": \"last\"}");
    out
}

#[test]
fn jsonl_equals_reference() {
    let t = scratch();
    let p = t.path().join("a.jsonl");
    std::fs::write(&p, jsonl_data()).unwrap();
    let empty = t.path().join("empty.jsonl");
    std::fs::write(&empty, b"").unwrap();
    check_columns("jsonl", &[], std::slice::from_ref(&p), &configs());
    check_columns(
        "jsonl",
        &[],
        &[p.clone(), empty, p],
        &[("2", "64"), ("3", "8M")],
    );
}

fn logfmt_data() -> Vec<u8> {
    let mut r = Rng(0x2545_f491_4f6c_dd1d);
    let times = [
        "2024-01-02T03:04:05Z",
        "2024-01-02",
        "\"2024-01-02 03:04:05.123456\"",
        "2024-01-02T03:04:05+05:30",
        "2024-01-02T03:04:05.5-0700",
        "1999-12-31t23:59:60z",
    ];
    let mut out: Vec<u8> = Vec::new();
    for i in 0..1400u64 {
        let ts = times[r.below(times.len() as u64) as usize];
        let dur = match r.below(5) {
            0 => format!("{}", r.below(50)),
            1 => format!("-{}.{}", r.below(9), r.below(100)),
            2 => ".5".into(),
            3 => "5.".into(),
            _ => format!("{}.{:02}", r.below(1000), r.below(100)),
        };
        let word = r.pick(WORDS);
        let esc = word.replace('\\', "\\\\").replace('"', "\\\"");
        let flag = if i % 3 == 0 { " cached" } else { "" };
        let mut line = match i % 40 {
            1 => "level=info".to_string(),
            2 => "just some words".to_string(),
            3 => "msg=\"unclosed quote".to_string(),
            4 => "msg=\"ends in a backslash\\\"".to_string(),
            5 => "   ".to_string(),
            6 => String::new(),
            7 => format!("level=warn\tmsg=\"tab\\tand\\nnewline and \\x\"\tn={i}"),
            8 => format!("level=info msg=\"a\"n={i} url=http://x/?a=b&c=d"),
            9 => format!("n=1 n={i} n=2 level=dup"),
            10 => format!("ts={ts} n= dur= level= msg=\"\""),
            11 => format!("level=crlf n={i}\r"),
            // After the sample: shapes it did not show that still fit.
            12 if i > 1000 => "n=-12 dur=1e-3 ts=2024-02-29 cached=FALSE late=1 =5".to_string(),
            13 if i > 1000 => {
                "n=+7 dur=1e3 ts=\"10/Oct/2000:13:55:36 -0700\" msg=\" 2.5 \"".to_string()
            }
            14 if i > 1000 => "n=-0 dur=\" 2.5 \" cached=false".to_string(),
            _ => format!(
                "ts={ts} level={} msg=\"{esc} #{i}\" dur={dur} n={}{flag}",
                r.pick(&["info", "warn", "error"]),
                r.below(1000)
            ),
        }
        .into_bytes();
        if i % 40 == 15 {
            line = b"level=bytes msg=\"bad \xff\xfe utf-8\" other=\xc3\x28".to_vec();
        }
        out.extend_from_slice(&line);
        out.push(b'\n');
    }
    out.extend_from_slice(format!("level=big msg=\"{}\" n=1\n", "y".repeat(1 << 20)).as_bytes());
    out.extend_from_slice(b"level=last n=5 cached");
    out
}

#[test]
fn logfmt_equals_reference() {
    let t = scratch();
    let p = t.path().join("a.logfmt");
    std::fs::write(&p, logfmt_data()).unwrap();
    check_columns("logfmt", &[], std::slice::from_ref(&p), &configs());
}

/// CSV records: `id,name,score,when,flag,note`. `multiline` adds quoted line breaks
/// (LF and CRLF) and, as the last record, an unclosed quote; `wide` records with
/// more fields than the header (which, without a header, set the column count).
fn csv_data(seed: u64, rows: u64, multiline: bool, header: bool, wide: bool) -> Vec<u8> {
    let mut r = Rng(seed);
    let mut out: Vec<u8> = Vec::new();
    if header {
        out.extend_from_slice(b"id,name,score,when,flag,note\r\n");
    }
    let whens = [
        "2024-03-01",
        "2024-03-01T10:00:00Z",
        "2024-03-01 10:00:00.25",
        "2024-03-01T10:00:00-07:00",
    ];
    for i in 0..rows {
        let score = match r.below(3) {
            0 => format!("{}", r.below(100)),
            1 => format!("-{}.{:02}", r.below(100), r.below(100)),
            _ => format!("{}.{}", r.below(10000), r.below(10)),
        };
        let when = whens[r.below(4) as usize];
        let flag = r.pick(&["true", "false", "TRUE", "False"]);
        let word = r.pick(&WORDS[..8]);
        let line: Vec<u8> = match i % 45 {
            1 => format!("{i},\"Smith, J\",{score},{when},{flag},\"say \"\"hi\"\"\"").into_bytes(),
            2 => format!("{i},,,,,").into_bytes(),
            3 => format!("{i},\"\",\"\",\"\",\"\",\"\"").into_bytes(),
            4 => format!("{i},ab\"\"c,{score},{when},{flag},x\"\"y").into_bytes(),
            5 => [
                format!("{i},bad ").as_bytes(),
                b"\xff",
                format!(",{score},{when},{flag},n").as_bytes(),
            ]
            .concat(),
            6 => b"1,2,3".to_vec(),
            7 if wide => format!("{i},a,1,{when},true,n,extra").into_bytes(),
            8 => format!("{i},\"ab\"c,1,{when},true,n").into_bytes(),
            9 if wide => format!("{i},a,1,{when},true,").into_bytes(),
            10 => Vec::new(),
            11 => format!("{i},crlf,{score},{when},{flag},n\r").into_bytes(),
            12 if multiline => format!(
                "{i},\"two\nlines\",{score},{when},{flag},\"three\r\nlines, \"\"q\"\"\nhere\""
            )
            .into_bytes(),
            13 if multiline => format!("{i},\"\n\",{score},{when},{flag},\"\r\n\"").into_bytes(),
            // After the sample: values of shapes it did not show that still fit
            // (values that do not fit stop the query: see
            // `a_late_value_not_of_the_inferred_type_stops_the_query`).
            20 if i > 1000 => format!("{i},late,-0.0,2024-02-29T23:59:59Z,FALSE,z").into_bytes(),
            21 if i > 1000 => format!("{i},late,1e3,10/Oct/2000:13:55:36 -0700,1,z").into_bytes(),
            22 if i > 1000 => format!("{i},late,+7,2024-01-01 00:00:00,t,z").into_bytes(),
            _ => format!("{i},{word},{score},{when},{flag},note {i}").into_bytes(),
        };
        let mut line = line;
        if i == rows / 2 {
            line = format!("{i},long,1,{},true,{}", whens[0], "n".repeat(1 << 20)).into_bytes();
        }
        out.extend_from_slice(&line);
        out.push(b'\n');
    }
    if multiline {
        out.extend_from_slice(
            b"9999,\"unclosed,1,2024-01-01,true,n\n10000,a,1,2024-01-01,true,n\n",
        );
    } else {
        out.extend_from_slice(b"9998,last,1.5,2024-01-01,true,no newline");
    }
    out
}

#[test]
fn csv_equals_reference() {
    let t = scratch();
    let plain = t.path().join("plain.csv");
    std::fs::write(&plain, csv_data(1, 1300, false, true, true)).unwrap();
    let multi = t.path().join("multi.csv");
    std::fs::write(&multi, csv_data(2, 1300, true, true, true)).unwrap();
    let empty = t.path().join("empty.csv");
    std::fs::write(&empty, b"").unwrap();
    // Only the file with quoted line breaks is read serially (and says so).
    let r = wf_sql(
        &["--format", "csv", "--stats"],
        "SELECT count(*) FROM logs",
        &[plain.clone(), multi.clone()],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let serial: Vec<&str> = r
        .stderr
        .lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix("read serially (quoted line breaks): ")
        })
        .collect();
    assert_eq!(serial, [multi.to_str().unwrap()], "{}", r.stderr);
    check_columns("csv", &[], std::slice::from_ref(&plain), &configs());
    check_columns(
        "csv",
        &[],
        std::slice::from_ref(&multi),
        &[("1", "8M"), ("3", "7")],
    );
    // A file cut at newlines and one read whole, with an empty file between.
    check_columns(
        "csv",
        &[],
        &[plain.clone(), empty, multi],
        &[("1", "8M"), ("2", "64"), ("3", "1K")],
    );
    // TSV without a header line.
    let tsv = t.path().join("plain.tsv");
    let data = String::from_utf8_lossy(&csv_data(3, 1300, false, false, false)).replace(',', "\t");
    std::fs::write(&tsv, data).unwrap();
    check_columns(
        "tsv",
        &["--no-header"],
        &[tsv],
        &[("1", "8M"), ("2", "7"), ("3", "1K")],
    );
}

/// Whitespace of every kind awk splits on, blank-looking records, records with
/// more fields than the sampled ones (after the sample), bad bytes.
fn fields_data() -> Vec<u8> {
    let mut r = Rng(99);
    let seps: [&[u8]; 6] = [b" ", b"\t", b"\x0b", b"\x0c", b" \t ", b"\r"];
    let mut out = Vec::new();
    for i in 0..1200u64 {
        match i % 37 {
            1 => out.extend_from_slice(b"   "),
            2 => out.extend_from_slice(b"\r\r"),
            3 => out.extend_from_slice(b"\t lead and trail \x0c "),
            4 => out.extend_from_slice(b"bad\xff field \xc3\x28 nul\0byte"),
            5 if i > 1000 => out.extend_from_slice(b"1 2 3 4 5 6 7 8 9 10"),
            _ => {
                for k in 0..1 + r.below(5) {
                    if k > 0 {
                        out.extend_from_slice(seps[r.below(6) as usize]);
                    }
                    out.extend_from_slice(r.pick(&WORDS[..8]).replace(' ', "_").as_bytes());
                }
            }
        }
        out.extend_from_slice(if i % 5 == 0 { b"\r\n" } else { b"\n" });
    }
    out
}

#[test]
fn fields_equal_reference() {
    let t = scratch();
    let f = t.path().join("f.txt");
    std::fs::write(&f, fields_data()).unwrap();
    check_columns("fields", &[], &[f], &configs());
    let g = generated_log(t.path(), "300K", "0.2", 9);
    check_columns("fields", &[], &[g], &[("1", "8M"), ("2", "7"), ("3", "1K")]);
}

/// `regex:` with a pattern that means the same to Rust's regex crate and Python's
/// re (ASCII classes only, so invalid UTF-8 matches neither).
#[test]
fn regex_equals_reference() {
    let t = scratch();
    let g = generated_log(t.path(), "300K", "0.2", 13);
    let re = r#"regex:^(?P<client>[a-zA-Z0-9.:-]+) - (?P<user>[a-z-]+) \[(?P<time>[0-9A-Za-z/: +-]+)\] "(?P<method>[A-Z]+) (?P<path>[!-~]+) HTTP/1\.[01]" (?P<status>[0-9]{3}) (?P<bytes>[0-9]+|-)(?P<referrer> "[ -~]*")?"#;
    check_columns(re, &[], &[g], &[("1", "8M"), ("2", "7"), ("3", "1K")]);
}

/// `--format auto` names the format it chose on stderr, and reads like it.
#[test]
fn auto_detects_each_format() {
    let t = scratch();
    let n = 30;
    let mut cases: Vec<(&str, &str, String)> = Vec::new();
    let lines = |f: &dyn Fn(u64) -> String| -> String { (0..n).map(|i| f(i) + "\n").collect() };
    cases.push((
        "a.jsonl",
        "jsonl",
        lines(&|i| format!("{{\"id\":{i},\"msg\":\"m {i}\"}}")),
    ));
    cases.push((
        "a.logfmt",
        "logfmt",
        lines(&|i| format!("id={i} msg=\"m {i}\" ok")),
    ));
    cases.push((
        "a.csv",
        "csv",
        format!("id,msg\n{}", lines(&|i| format!("{i},\"m, {i}\""))),
    ));
    cases.push((
        "a.tsv",
        "tsv",
        format!("id\tmsg\n{}", lines(&|i| format!("{i}\tm {i}"))),
    ));
    cases.push((
        "m.txt",
        "csv (delimiter ';')",
        lines(&|i| format!("Station {i};{i}.5")),
    ));
    cases.push((
        "a.txt",
        "fields",
        lines(&|i| format!("word {i} and {}", "more ".repeat(i as usize % 3))),
    ));
    let log = |i: u64| {
        format!("1.2.3.{i} - - [10/Oct/2000:13:55:36 -0700] \"GET /{i} HTTP/1.1\" 200 {i}")
    };
    cases.push(("c.log", "common", lines(&log)));
    cases.push(("d.log", "combined", lines(&|i| log(i) + " \"-\" \"UA\"")));
    cases.push((
        "v.log",
        "vcombined",
        lines(&|i| format!("h:80 {} \"-\" \"UA\"", log(i))),
    ));
    for (name, format, data) in cases {
        let p = t.path().join(name);
        std::fs::write(&p, data).unwrap();
        let r = wf_sql(
            &["--json"],
            "SELECT count(*) AS n FROM logs",
            std::slice::from_ref(&p),
        );
        assert_eq!(r.code, Some(0), "{name}: {}", r.stderr);
        assert!(
            r.stderr
                .contains(&format!("logs: format {format} (detected)")),
            "{name}: expected {format}: {}",
            r.stderr
        );
        assert_eq!(json_lines(&r.stdout), [json!({"n": n})], "{name}");
    }
}

/// Standard input is read like a file (spooled first), quoted line breaks included.
#[test]
fn stdin_equals_file() {
    let data = csv_data(4, 400, true, true, true);
    let t = scratch();
    let p = t.path().join("m.csv");
    std::fs::write(&p, &data).unwrap();
    let q =
        "SELECT count(*) AS n, count(name) AS c, sum(length(note)) AS l, sum(score) AS s FROM logs";
    let (file_rows, file_stats) = sql_ok(&["--format", "csv"], q, std::slice::from_ref(&p));
    // `-` after the query: before it, it would be the query.
    for (args, dash) in [
        (["--format", "csv", "-j", "3"], false),
        (["--format", "csv", "-j", "1"], true),
    ] {
        let mut c = wf();
        c.args(["sql", "--json", "--stats", "--no-progress"])
            .args(args)
            .arg(q);
        if dash {
            c.arg("-");
        }
        let o = run(c, Some(&data));
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(json_lines(&o.stdout), file_rows, "{args:?} {dash}");
        assert_eq!(parse_stats(&String::from_utf8_lossy(&o.stderr)), file_stats);
    }
}

/// Standard input read as it comes, not copied first (issue 36 item 12): the
/// rows and `--stats` counts of the same bytes in a file, plain and gzipped,
/// odd lines, a 1 MB line and no final newline included.
#[test]
fn streamed_stdin_equals_file() {
    let data = odd_log_lines();
    let t = scratch();
    let p = t.path().join("odd.log");
    std::fs::write(&p, &data).unwrap();
    let q = "SELECT count(*) AS n, count(status) AS s, sum(bytes) AS b, \
             count(DISTINCT client) AS c, max(_offset) AS o FROM logs";
    let (file_rows, file_stats) = sql_ok(&["--format", "combined"], q, std::slice::from_ref(&p));
    assert!(file_stats.malformed > 0, "{file_stats:?}");
    let mut gzip = Command::new("gzip");
    gzip.arg("-c").arg(&p);
    let gz = ok_bytes(gzip, None);
    for (input, j) in [(&data, "1"), (&data, "3"), (&gz, "2")] {
        let mut c = wf();
        c.args([
            "sql",
            "--json",
            "--stats",
            "--no-progress",
            "--format",
            "combined",
        ])
        .args(["-j", j, q, "-"]);
        let o = run(c, Some(input));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "-j {j}: {err}");
        assert_eq!(json_lines(&o.stdout), file_rows, "-j {j}");
        assert_eq!(parse_stats(&err), file_stats, "-j {j}: {err}");
    }
}

// ------------------------------------------------------------------ DuckDB

const DUCK_SCRIPT: &str = r#"
import json, sys, duckdb
if len(sys.argv) > 2:
    import pyarrow.ipc
    t = pyarrow.ipc.open_file(sys.argv[2]).read_all()
rows = duckdb.sql(sys.argv[1]).fetchall()
print(json.dumps([list(r) for r in rows], default=str, ensure_ascii=False))
"#;

fn has_pyarrow(py: &str) -> bool {
    Command::new(py)
        .args(["-c", "import pyarrow.ipc"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// DuckDB's rows for `sql`, as JSON arrays; `arrow` is an Arrow IPC file DuckDB
/// can query as the table `t`.
fn duckdb(py: &str, sql: &str, arrow: Option<&Path>) -> Vec<Value> {
    let mut c = Command::new(py);
    c.args(["-c", DUCK_SCRIPT, sql]);
    if let Some(a) = arrow {
        c.arg(a);
    }
    let out = ok_bytes(c, None);
    match serde_json::from_slice(&out).unwrap() {
        Value::Array(rows) => rows,
        v => panic!("duckdb printed {v}"),
    }
}

fn sql_string(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "''"))
}

/// CSV as the `csv` crate-less tests read it: RFC 4180 records of fields.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows
}

/// 200,000 rows from `wf gen 1brc` with `stations` stations, in `dir`.
fn gen_1brc(dir: &Path, stations: &str, seed: &str) -> PathBuf {
    let f = dir.join("m.txt");
    let mut c = wf();
    c.args([
        "gen",
        "1brc",
        "--rows",
        "200000",
        "--stations",
        stations,
        "--seed",
        seed,
        "-o",
    ])
    .arg(&f);
    ok(c);
    f
}

#[test]
fn onebrc_equals_duckdb() {
    let Some(py) = duckdb_python() else { return };
    let t = scratch();
    let f = gen_1brc(t.path(), "50", "5");
    let want = duckdb(
        &py,
        &format!(
            "SELECT station, min(t), avg(t), max(t), count(*) FROM read_csv({}, delim=';', \
             header=false, columns={{'station':'VARCHAR','t':'DOUBLE'}}) \
             GROUP BY station ORDER BY station",
            sql_string(&f)
        ),
        None,
    );
    assert_eq!(want.len(), 50);
    let q = "SELECT station, min(t), avg(t), max(t), count(*) FROM logs GROUP BY station ORDER BY station";
    for (j, c) in [("1", "8M"), ("2", "1K"), ("3", "64K"), ("3", "7")] {
        let r = wf_sql(
            &[
                "--format",
                "csv",
                "--delimiter",
                ";",
                "--no-header",
                "--schema",
                "station:string,t:float",
                "--csv",
                "-j",
                j,
                "--chunk-size",
                c,
            ],
            q,
            std::slice::from_ref(&f),
        );
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let rows = parse_csv(&String::from_utf8(r.stdout).unwrap());
        assert_eq!(rows.len(), 51, "header and 50 stations");
        for (got, exp) in rows[1..].iter().zip(&want) {
            let what = format!("-j {j} --chunk-size {c}: {got:?} vs duckdb {exp:?}");
            assert_eq!(got[0], exp[0].as_str().unwrap(), "{what}");
            let num = |s: &str| s.parse::<f64>().unwrap();
            assert_eq!(num(&got[1]), exp[1].as_f64().unwrap(), "min {what}");
            assert_eq!(num(&got[3]), exp[3].as_f64().unwrap(), "max {what}");
            assert_eq!(
                got[4].parse::<u64>().unwrap(),
                exp[4].as_u64().unwrap(),
                "{what}"
            );
            let (a, b) = (num(&got[2]), exp[2].as_f64().unwrap());
            assert!((a - b).abs() <= 1e-9 * b.abs().max(1e-300), "avg {what}");
        }
    }
}

/// With `t:decimal(3,1)` sums and averages are exact: the output is the same
/// bytes at every `-j` and chunk size (floats only agree within a tolerance), and
/// min, max, sum and count equal DuckDB's on DECIMAL(3,1) to the digit.
#[test]
fn onebrc_decimal_is_the_same_at_every_j_and_equals_duckdb() {
    let Some(py) = duckdb_python() else { return };
    let t = scratch();
    let f = gen_1brc(t.path(), "40", "9");
    let want = duckdb(
        &py,
        &format!(
            "SELECT station, min(t), max(t), sum(t), count(*), avg(t) FROM read_csv({}, \
             delim=';', header=false, columns={{'station':'VARCHAR','t':'DECIMAL(3,1)'}}) \
             GROUP BY station ORDER BY station",
            sql_string(&f)
        ),
        None,
    );
    assert_eq!(want.len(), 40);
    let q = "SELECT station, min(t), max(t), sum(t), count(*), avg(t) FROM logs \
             GROUP BY station ORDER BY station";
    let mut first: Option<Vec<u8>> = None;
    for (j, c) in [
        ("1", "8M"),
        ("2", "1K"),
        ("3", "64K"),
        ("2", "7"),
        ("3", "13"),
    ] {
        let args = [
            "--format",
            "csv",
            "--delimiter",
            ";",
            "--no-header",
            "--schema",
            "station:string,t:decimal(3,1)",
            "--csv",
            "-j",
            j,
            "--chunk-size",
            c,
        ];
        let r = wf_sql(&args, q, std::slice::from_ref(&f));
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        match &first {
            None => first = Some(r.stdout.clone()),
            Some(b) => assert!(*b == r.stdout, "-j {j} --chunk-size {c}: other bytes"),
        }
    }
    let rows = parse_csv(&String::from_utf8(first.unwrap()).unwrap());
    assert_eq!(rows.len(), 41, "header and 40 stations");
    for (got, exp) in rows[1..].iter().zip(&want) {
        let exp: Vec<String> = exp
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect();
        assert_eq!(got[..5], exp[..5], "station, min, max, sum, count");
        let (a, b): (f64, f64) = (got[5].parse().unwrap(), exp[5].parse().unwrap());
        assert!((a - b).abs() < 1e-5, "avg {a} vs duckdb {b}");
    }
}

/// Text to DECIMAL(4,1) as DuckDB casts it: extra digits rounded half away from
/// zero, a value past the precision NULL (and counted in `--stats`).
#[test]
fn decimal_values_round_as_duckdb_casts_them() {
    let Some(py) = duckdb_python() else { return };
    let t = scratch();
    let vals = [
        "0",
        "-0.0",
        "12.34",
        "12.35",
        "-12.35",
        "999.94",
        "-999.9",
        "0.05",
        "-0.05",
        "7.",
        ".25",
        "+3.149",
        "123.456789",
        "1.04999",
    ];
    let f = t.path().join("d.csv");
    std::fs::write(&f, format!("v\n{}\n9999.9\n", vals.join("\n"))).unwrap();
    let in_list = vals.map(|v| format!("('{v}')")).join(",");
    let want = duckdb(
        &py,
        &format!("SELECT CAST(v AS DECIMAL(4,1)) FROM (VALUES {in_list}) AS x(v)"),
        None,
    );
    let r = wf_sql(
        &[
            "--format",
            "csv",
            "--schema",
            "v:decimal(4,1)",
            "--csv",
            "--stats",
        ],
        "SELECT v FROM logs ORDER BY _offset",
        std::slice::from_ref(&f),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let rows = parse_csv(&String::from_utf8(r.stdout).unwrap());
    let got: Vec<&str> = rows[1..].iter().map(|r| r[0].as_str()).collect();
    let exp: Vec<String> = want
        .iter()
        .map(|r| r[0].as_str().unwrap().to_string())
        .collect();
    assert_eq!(got[..vals.len()], exp[..], "{vals:?}");
    assert_eq!(got[vals.len()], "", "9999.9 does not fit DECIMAL(4,1)");
    assert!(
        r.stderr
            .contains("values not of their column's type (NULL): 1"),
        "{}",
        r.stderr
    );
}

/// A clean CSV (delimiter `d`) with every quoting rule: delimiters, doubled quotes
/// and (with `line_breaks`) LF and CRLF line breaks inside quotes, empty fields
/// quoted and not, CRLF line ends, UTF-8, and no final line end.
fn tricky_csv(d: char, line_breaks: bool) -> Vec<u8> {
    let mut r = Rng(77);
    let mut s = format!("id{d}name{d}score{d}note\r\n");
    let (lf, crlf) = if line_breaks {
        ("\"two\nlines\"", "\"crlf\r\nin quotes\"")
    } else {
        ("\"two lines\"", "\"tab\tin quotes\"")
    };
    for i in 0..3000u64 {
        let name = match i % 9 {
            0 => format!("\"Smith{d} J\""),
            1 => "\"say \"\"hi\"\"\"".to_string(),
            2 => lf.to_string(),
            3 => crlf.to_string(),
            4 => String::new(),
            5 => "\"\"".to_string(),
            6 => "Zürich 東京".to_string(),
            7 => "\"\"\"\"".to_string(),
            _ => format!("plain {}", r.below(100)),
        };
        let score = if i % 13 == 0 {
            String::new()
        } else {
            format!("{}.{}", r.below(1000) as i64 - 500, r.below(10))
        };
        let note = match (i % 4, line_breaks) {
            (0, true) => format!("\"{d}\n{d}\""),
            (0, false) => format!("\"{d}{d}\""),
            _ => "n".to_string(),
        };
        // CRLF line ends throughout: DuckDB's strict mode rejects mixed ones.
        s += &format!("{i}{d}{name}{d}{score}{d}{note}\r\n");
    }
    s += &format!("3000{d}last{d}1.5{d}end");
    s.into_bytes()
}

/// CSV and TSV with quoted delimiters, doubled quotes and (read serially) quoted
/// line breaks, and CSV without line breaks (cut on every core), as DuckDB reads
/// them.
#[test]
fn quoted_csv_and_tsv_equal_duckdb() {
    let Some(py) = duckdb_python() else { return };
    let t = scratch();
    for (d, format, line_breaks) in [(',', "csv", true), ('\t', "tsv", true), (',', "csv", false)] {
        let f = t.path().join(format!("tricky-{line_breaks}.{format}"));
        std::fs::write(&f, tricky_csv(d, line_breaks)).unwrap();
        // DuckDB reads a quoted empty field as NULL unless allow_quoted_nulls=false;
        // wf's documented rule is DuckDB's with that option.
        let want = duckdb(
            &py,
            &format!(
                "SELECT id, name, score, note FROM read_csv({}, header=true, delim={}, \
                 quote='\"', escape='\"', allow_quoted_nulls=false, \
                 columns={{'id':'BIGINT','name':'VARCHAR','score':'DOUBLE','note':'VARCHAR'}}) \
                 ORDER BY id",
                sql_string(&f),
                if d == ',' { "','" } else { "'\\t'" },
            ),
            None,
        );
        assert_eq!(want.len(), 3001);
        for schema in [None, Some("id:int,name:string,score:float,note:string")] {
            for (j, c) in [("1", "8M"), ("3", "1K")] {
                let mut args = vec!["--format", format, "-j", j, "--chunk-size", c];
                if let Some(s) = schema {
                    args.extend(["--schema", s]);
                }
                let (rows, stats) = sql_ok(
                    &args,
                    "SELECT id, name, score, note FROM logs ORDER BY id",
                    std::slice::from_ref(&f),
                );
                assert_eq!(stats.malformed, 0);
                let got = tuples(&rows, &["id", "name", "score", "note"]);
                let what = format!("{} schema {schema:?} -j {j} --chunk-size {c}", f.display());
                assert_eq!(got, Value::Array(want.clone()), "{what}");
            }
        }
    }
}

/// `-0.0` and `0.0` are one value, and so are `NaN` and `-NaN`, as DuckDB
/// counts and groups them: DataFusion's `count(DISTINCT f)` beside
/// `count(*)` counted `-0.0` apart (2 of 1, exit 0), and `GROUP BY f` made
/// two NaN groups. A `-0.0` is still `-0.0` where it is not compared.
#[test]
fn signed_zeros_and_nans_are_one_value_each() {
    let Some(py) = duckdb_python() else { return };
    let t = scratch();
    let f = t.path().join("zeros.csv");
    std::fs::write(&f, "f\n0.0\n-0.0\n0\n-0.0\nNaN\n-NaN\n1.5\n-0.0\n").unwrap();
    let j = t.path().join("zeros.jsonl");
    std::fs::write(&j, "{\"f\":0.5}\n{\"f\":-0.0}\n{\"f\":0.0}\n{\"f\":1.5}\n").unwrap();
    // (query, its columns in order); `{t}` is the table.
    let queries: [(&str, &[&str]); 5] = [
        (
            "SELECT count(DISTINCT f) AS d, count(*) AS n FROM {t}",
            &["d", "n"],
        ),
        (
            "SELECT count(DISTINCT f) OVER () AS d FROM {t} LIMIT 1",
            &["d"],
        ),
        // The data keep their sign of zero (read as 0.0, -0.0 gave π).
        (
            "SELECT atan2(f, -1.0) AS a FROM {t} WHERE abs(f) < 1 ORDER BY a",
            &["a"],
        ),
        (
            "SELECT count(*) AS n, count(DISTINCT f) AS d FROM {t} GROUP BY f = 0 ORDER BY n",
            &["n", "d"],
        ),
        (
            "SELECT count(*) AS n FROM {t} GROUP BY f ORDER BY n",
            &["n"],
        ),
    ];
    for (path, format, reader) in [(&f, "csv", "read_csv"), (&j, "jsonl", "read_json")] {
        for (q, keys) in queries {
            let from = format!("{reader}({})", sql_string(path));
            let want = duckdb(&py, &q.replace("{t}", &from), None);
            let (rows, _) = sql_ok(
                &["--format", format],
                &q.replace("{t}", "logs"),
                std::slice::from_ref(path),
            );
            let got = tuples(&rows, keys);
            assert_eq!(got, Value::Array(want), "{q} over {}", path.display());
        }
    }
    // A DISTINCT aggregate with an ORDER BY of its own is left as it is
    // (DataFusion refused it once its argument was rewritten).
    let q = "SELECT array_agg(DISTINCT f ORDER BY f) AS a FROM logs WHERE f > 0";
    let (rows, _) = sql_ok(&["--format", "jsonl"], q, std::slice::from_ref(&j));
    assert_eq!(tuples(&rows, &["a"]), json!([[[0.5, 1.5]]]));
}

// ------------------------------------------------------------------ wf2.sql

/// The `wf wf2 --json` object built from the rows of examples/sql/wf2.sql.
fn wf2_from_sql(rows: &[Value]) -> Value {
    let lists = ["uri_hits", "uri_bytes", "404s", "clients", "referrers"];
    let mut top = serde_json::Map::new();
    let mut keys = serde_json::Map::new();
    for l in lists {
        top.insert(l.into(), json!([]));
    }
    for r in rows {
        let list = r["list"].as_str().unwrap();
        top[list]
            .as_array_mut()
            .unwrap()
            .push(json!([r["key"], r["value"]]));
        keys.insert(list.into(), r["keys"].clone());
    }
    let count = |l: &str| keys.get(l).cloned().unwrap_or(json!(0));
    let mut o = serde_json::Map::new();
    o.insert(
        "lines".into(),
        rows.first().map_or(json!(0), |r| r["lines"].clone()),
    );
    o.insert("resources".into(), count("uri_hits"));
    o.insert("404s".into(), count("404s"));
    o.insert("clients".into(), count("clients"));
    o.insert("top".into(), Value::Object(top));
    Value::Object(o)
}

fn check_wf2_sql(log: &Path) {
    let query = std::fs::read_to_string(WF2_SQL).unwrap();
    let mut c = wf();
    c.args(["wf2", "--json"]).arg(log);
    let want: Value = serde_json::from_str(&ok(c)).unwrap();
    assert!(want["resources"].as_u64().unwrap() > 0);
    for (j, chunk) in [
        ("1", "8M"),
        ("2", "8M"),
        ("3", "8M"),
        ("2", "1K"),
        ("3", "64"),
    ] {
        let (rows, _) = sql_ok(
            &["--format", "fields", "-j", j, "--chunk-size", chunk],
            &query,
            &[log.to_path_buf()],
        );
        assert_eq!(
            wf2_from_sql(&rows),
            want,
            "wf2.sql -j {j} --chunk-size {chunk} {}",
            log.display()
        );
    }
}

/// Article hits whose bytes field is not a plain number: a sign, trailing
/// text, leading zeros, no digits, Arabic digits (the report counts the
/// leading ASCII digits of a 200, 0 for a 304 or a POST); and referrer fields
/// that differ only in their first and last bytes.
fn odd_bytes_log(dir: &Path) -> PathBuf {
    let vals = [
        "12abc",
        "-5",
        "+5",
        "007",
        "abc",
        "-",
        "0",
        "5-",
        "999999999999999999",
        "1.5",
        "\u{661}\u{662}",
        "42",
        "3e2",
        "0x10",
    ];
    let mut log = String::new();
    for (i, v) in vals.iter().enumerate() {
        let uri = format!("/ongoing/When/200x/2007/10/{:02}/P{}", 10 + i % 5, i % 7);
        for (c, method, status) in [(0, "GET", 200), (1, "GET", 304), (2, "POST", 200)] {
            log += &format!(
                "10.0.{c}.{i} - - [10/Oct/2007:13:55:36 -0700] \"{method} {uri} HTTP/1.1\" \
                 {status} {v} \"http://x.org/{i}\" \"ua\"\n"
            );
        }
        // Referrer fields that are one key once their first and last bytes
        // are cut (`"http://x.org/1/"`, and `"http://x.org/1/z` of a referrer
        // with a space): counted together, as the report does. A field of
        // one or two bytes is the empty key.
        for r in [
            "\"http://x.org/{i}/\"",
            "\"http://x.org/{i}/z b\"",
            "xhttp://x.org/{i}/y",
            "-",
            "\"\"",
        ] {
            let r = r.replace("{i}", &i.to_string());
            log += &format!(
                "10.1.0.{i} - - [10/Oct/2007:13:55:36 -0700] \"GET {uri} HTTP/1.1\" 200 1 {r} \"ua\"\n"
            );
        }
    }
    let p = dir.join("odd-bytes.log");
    std::fs::write(&p, log).unwrap();
    p
}

#[test]
fn wf2_sql_equals_wf_wf2() {
    let t = scratch();
    let clean = generated_log(t.path(), "5M", "0", 3);
    check_wf2_sql(&clean);
    check_wf2_sql(&odd_bytes_log(t.path()));
    if let Some(dir) = shared_data("logs") {
        check_wf2_sql(&dir.join("ongoing-1000.log"));
    }
}

// ------------------------------------------------------------------ shared scans

/// Readers of one table, each over other columns; the last one's LIMIT stops
/// it early while the others read on.
const BRANCHES: [&str; 4] = [
    "SELECT 'status' AS k, CAST(status AS VARCHAR) AS v, count(*) AS n FROM logs GROUP BY status",
    "SELECT 'client' AS k, client AS v, count(*) AS n FROM logs GROUP BY client",
    "SELECT 'bytes' AS k, CAST(sum(bytes) AS VARCHAR) AS v, count(path) AS n FROM logs",
    "SELECT 'limit' AS k, NULL AS v, count(*) AS n FROM (SELECT user_agent FROM logs LIMIT 5)",
];

fn sorted(mut rows: Vec<Value>) -> Vec<Value> {
    rows.sort_by_key(|r| r.to_string());
    rows
}

/// `wf sql` with `env`, which must end within two minutes (a shared scan that
/// deadlocked would hang the suite instead of failing it).
fn wf_sql_within(env: &[(&str, &str)], args: &[&str], query: &str, p: &Path) -> Run {
    let mut c = wf();
    c.arg("sql")
        .arg("--no-progress")
        .args(args)
        .arg(query)
        .arg(p);
    c.envs(env.iter().copied());
    let what = format!("{c:?}");
    c.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = c.spawn().expect("spawn");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    let o = match rx.recv_timeout(std::time::Duration::from_secs(120)) {
        Ok(o) => o.expect("wait"),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("{what} did not end within 120 s");
        }
    };
    Run {
        code: o.status.code(),
        stdout: o.stdout,
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// The plan `EXPLAIN` gives for `query` over a combined log.
fn plan(query: &str, p: &[PathBuf]) -> String {
    let r = wf_sql(
        &["--format", "combined", "--csv"],
        &format!("EXPLAIN {query}"),
        p,
    );
    String::from_utf8_lossy(&r.stdout).into_owned()
}

/// The rows of a combined log.
fn log_rows(p: &[PathBuf]) -> i64 {
    let (rows, _) = sql_ok(
        &["--format", "combined"],
        "SELECT count(*) AS n FROM logs",
        p,
    );
    rows[0]["n"].as_i64().unwrap()
}

/// Readers that meet at a UNION ALL read one scan (EXPLAIN says so), and the
/// answer is each branch's own answer, at every `-j` and chunk size, whether
/// the readers share the scan or read on their own as late readers do
/// (`WF_SHARED_READERS=1`); `--stats` counts each line once.
#[test]
fn readers_under_a_union_share_one_scan() {
    let t = scratch();
    let g = generated_log(t.path(), "2M", "0.05", 3);
    let p = std::slice::from_ref(&g);
    let union = BRANCHES.join(" UNION ALL ");
    let text = plan(&union, p);
    assert_eq!(text.matches("shared: reader").count(), 4, "{text}");
    let mut want = Vec::new();
    for b in BRANCHES {
        want.extend(sql_ok(&["--format", "combined"], b, p).0);
    }
    let (_, once) = sql_ok(&["--format", "combined"], BRANCHES[0], p);
    assert!(once.malformed > 0);
    for readers in ["4", "1"] {
        for (j, chunk) in [("1", "8M"), ("2", "1K"), ("3", "64"), ("2", "7")] {
            let args = [
                "--format",
                "combined",
                "--json",
                "--stats",
                "-j",
                j,
                "--chunk-size",
                chunk,
            ];
            let r = wf_sql_within(&[("WF_SHARED_READERS", readers)], &args, &union, &g);
            let what = format!("-j {j} --chunk-size {chunk}, {readers} shared readers");
            assert_eq!(r.code, Some(0), "{what}: {}", r.stderr);
            let rows = json_lines(&r.stdout);
            assert_eq!(sorted(rows), sorted(want.clone()), "{what}");
            // Lines are counted once; invalid and bad values are counted in
            // the columns a scan built, which differ between the readers.
            let st = parse_stats(&r.stderr);
            let lines = |s: &Stats| (s.rows, s.malformed, s.blank);
            assert_eq!(lines(&st), lines(&once), "{what}: {}", r.stderr);
        }
    }
}

/// Queries that once deadlocked a shared scan end, with small batches so that
/// channels fill at once: a merge of two undrained readers (ORDER BY a column
/// constant in each branch: not shared now), and `EXPLAIN ANALYZE` (which keeps
/// the plan to the end) of a shared scan with a reader that a LIMIT stops.
#[test]
fn shared_scans_never_wait_on_a_reader() {
    let t = scratch();
    let g = generated_log(t.path(), "2M", "0.05", 5);
    let p = std::slice::from_ref(&g);
    let lines = log_rows(p);
    let small = [("DATAFUSION_EXECUTION_BATCH_SIZE", "64")];
    let merge =
        "SELECT 'a' AS src, status FROM logs UNION ALL SELECT 'b', method FROM logs ORDER BY src";
    let text = plan(merge, p);
    assert!(
        text.contains("WfScan") && !text.contains("shared"),
        "{text}"
    );
    let r = wf_sql_within(
        &small,
        &["--format", "combined", "--csv", "-j", "2"],
        merge,
        &g,
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let out = String::from_utf8_lossy(&r.stdout);
    assert_eq!(out.lines().count() as i64, 2 * lines + 1, "{merge}");
    let limited = "SELECT count(*) AS n FROM (SELECT status FROM logs LIMIT 5) UNION ALL SELECT count(*) FROM logs";
    for q in [limited.to_string(), format!("EXPLAIN ANALYZE {limited}")] {
        let r = wf_sql_within(
            &small,
            &["--format", "combined", "--csv", "-j", "2"],
            &q,
            &g,
        );
        assert_eq!(r.code, Some(0), "{q}: {}", r.stderr);
        let out = String::from_utf8_lossy(&r.stdout);
        if q.starts_with("EXPLAIN") {
            assert!(out.contains("shared: reader 2 of 2"), "{out}");
        } else {
            let mut n: Vec<i64> = out.lines().skip(1).map(|l| l.parse().unwrap()).collect();
            n.sort_unstable();
            assert_eq!(n, [5, lines], "{q}");
        }
    }
}

/// Scans on the two sides of a join are not shared (the join reads its build
/// side to the end before it reads the other, so a shared scan would wait on
/// itself): a self-join, and a union with a self-join in it, read on their own
/// and give the answer that the counts per client give.
#[test]
fn scans_on_both_sides_of_a_join_read_on_their_own() {
    let t = scratch();
    let g = generated_log(t.path(), "1M", "0.05", 4);
    let p = std::slice::from_ref(&g);
    let (sq, _) = sql_ok(
        &["--format", "combined"],
        "SELECT sum(n * n) AS n FROM (SELECT client, count(*) AS n FROM logs GROUP BY client)",
        p,
    );
    let pairs = sq[0]["n"].as_i64().unwrap();
    let lines = log_rows(p);
    let join = "SELECT 'pairs' AS k, count(*) AS n FROM logs a JOIN logs b ON a.client = b.client";
    let both = format!("{join} UNION ALL SELECT 'lines', count(*) FROM logs");
    for q in [join.to_string(), both] {
        let text = plan(&q, p);
        assert!(
            text.contains("WfScan") && !text.contains("shared"),
            "{text}"
        );
        for j in ["1", "2", "3"] {
            let args = [
                "--format",
                "combined",
                "--json",
                "-j",
                j,
                "--chunk-size",
                "64K",
            ];
            let r = wf_sql_within(&[], &args, &q, &g);
            assert_eq!(r.code, Some(0), "{q} -j {j}: {}", r.stderr);
            for row in json_lines(&r.stdout) {
                let want = if row["k"] == "pairs" { pairs } else { lines };
                assert_eq!(row["n"].as_i64(), Some(want), "{q} -j {j}");
            }
        }
    }
}

// ------------------------------------------------------------------ errors and exit statuses

fn small_log(dir: &Path) -> PathBuf {
    let p = dir.join("small.log");
    std::fs::write(&p, odd_log_lines()).unwrap();
    p
}

#[test]
fn unknown_column_exits_2_and_lists_the_columns() {
    let t = scratch();
    let p = small_log(t.path());
    let r = wf_sql(&["--format", "combined"], "SELECT nosuch FROM logs", &[p]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stdout.is_empty());
    assert!(r.stderr.contains("nosuch"), "{}", r.stderr);
    for col in [
        "client",
        "time",
        "method",
        "path",
        "status",
        "bytes",
        "user_agent",
        "_file",
        "_offset",
        "_line",
    ] {
        assert!(
            r.stderr.contains(col),
            "column {col} not listed: {}",
            r.stderr
        );
    }
}

#[test]
fn sql_errors_exit_2() {
    let t = scratch();
    let p = small_log(t.path());
    for q in [
        "SELEC count(*) FROM logs",
        "SELECT count(* FROM logs",
        "SELECT * FROM nosuchtable",
        "SELECT sum(client) FROM logs",
        // An error while running, not planning.
        "SELECT CAST(client AS INT) FROM logs",
    ] {
        let r = wf_sql(&["--format", "combined"], q, std::slice::from_ref(&p));
        assert_eq!(r.code, Some(2), "{q}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{q}");
        assert!(
            r.stderr.starts_with("wf sql: ") || r.stderr.contains("\nwf sql: "),
            "{q}: {}",
            r.stderr
        );
    }
    for args in [
        &["--format", "nosuch"][..],
        &["--format", "csv", "--schema", "a:complex"][..],
        &["--format", "csv", "--delimiter", "é"][..],
        &["-o", "out.xlsx"][..],
    ] {
        let r = wf_sql(args, "SELECT 1", std::slice::from_ref(&p));
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
    }
}

#[test]
fn missing_input_is_named_and_the_rest_processed() {
    let t = scratch();
    let p = small_log(t.path());
    let missing = t.path().join("missing.log");
    let (want, _) = sql_ok(
        &["--format", "combined"],
        "SELECT count(*) AS n FROM logs",
        std::slice::from_ref(&p),
    );
    for (format, paths) in [
        ("combined", vec![p.clone(), missing.clone()]),
        ("combined", vec![missing.clone(), p.clone()]),
        ("auto", vec![missing.clone(), p.clone()]),
    ] {
        let r = wf_sql(
            &["--json", "--format", format],
            "SELECT count(*) AS n FROM logs",
            &paths,
        );
        assert_eq!(r.code, Some(2), "{}", r.stderr);
        assert!(r.stderr.contains(missing.to_str().unwrap()), "{}", r.stderr);
        assert_eq!(json_lines(&r.stdout), want, "{format} {paths:?}");
    }
}

#[test]
fn strict_fails_on_malformed_lines_only() {
    let t = scratch();
    let p = small_log(t.path());
    let want = reference("combined", &[], std::slice::from_ref(&p));
    let r = wf_sql(
        &["--strict", "--format", "combined"],
        "SELECT count(*) AS n FROM logs",
        &[p],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(want["malformed"].as_u64().unwrap() > 0);
    // The query stops at the first malformed line and names it.
    assert!(
        r.stderr.contains("small.log: line ") && r.stderr.contains("malformed record"),
        "{}",
        r.stderr
    );
    let clean = generated_log(t.path(), "100K", "0", 1);
    let r = wf_sql(
        &["--strict", "--format", "combined"],
        "SELECT count(*) AS n FROM logs",
        &[clean],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

/// A query that reads its table twice reports each input line once: `--stats`
/// and `--strict` count lines of the input, not lines times scans.
#[test]
fn stats_count_each_line_once_when_a_query_scans_twice() {
    let t = scratch();
    let p = small_log(t.path());
    let want = reference("combined", &[], std::slice::from_ref(&p));
    let (_, stats) = sql_ok(
        &["--format", "combined"],
        "SELECT (SELECT count(*) FROM logs) AS a, (SELECT count(status) FROM logs) AS b",
        std::slice::from_ref(&p),
    );
    assert_eq!(
        stats.rows,
        want["rows"].as_u64().unwrap(),
        "rows: {stats:?}"
    );
    assert_eq!(
        stats.malformed,
        want["malformed"].as_u64().unwrap(),
        "{stats:?}"
    );
    assert_eq!(stats.blank, want["blank"].as_u64().unwrap(), "{stats:?}");
}

/// When a query scans its table twice and one scan stops early (LIMIT), `--stats`
/// still counts every line the other scan read: a partial scan must not be the
/// one reported; and `--strict` fails. (Which scan starts first varies, so each
/// order runs a few times. `--strict` stops the scans at the first malformed
/// line, so its counts are partial by design: it is run apart.)
#[test]
fn stats_are_complete_when_one_of_two_scans_stops_early() {
    let t = scratch();
    let g = generated_log(t.path(), "20M", "0.01", 4);
    let p = std::slice::from_ref(&g);
    let (_, once) = sql_ok(
        &["--format", "combined"],
        "SELECT count(*) AS n FROM logs",
        p,
    );
    assert!(once.malformed > 0);
    for q in [
        "SELECT (SELECT client FROM logs LIMIT 1) AS c, (SELECT count(*) FROM logs) AS n",
        "SELECT (SELECT count(*) FROM logs) AS n, (SELECT client FROM logs LIMIT 1) AS c",
    ] {
        for _ in 0..3 {
            let r = wf_sql(
                &["--format", "combined", "-j", "2", "--stats", "--json"],
                q,
                p,
            );
            let stats = parse_stats(&r.stderr);
            assert_eq!(
                (stats.rows, stats.malformed),
                (once.rows, once.malformed),
                "{q}: --stats {stats:?}"
            );
            let r = wf_sql(
                &["--format", "combined", "-j", "2", "--strict", "--json"],
                q,
                p,
            );
            assert_eq!(r.code, Some(2), "{q}: --strict: {}", r.stderr);
        }
    }
}

/// A LIMIT without ORDER BY ends the reading, not only the parsing: on a 64 MB
/// log `--stats` says the query stopped the scan early, after a small part of
/// the file (before, the scan read the whole file unparsed), and the answer
/// still has its 3 rows.
#[test]
fn a_limit_stops_reading_the_input() {
    let t = scratch();
    let g = generated_log(t.path(), "64M", "0", 5);
    let size = std::fs::metadata(&g).unwrap().len();
    let r = wf_sql(
        &["--format", "combined", "-j", "2", "--stats", "--json"],
        "SELECT client FROM logs LIMIT 3",
        std::slice::from_ref(&g),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(json_lines(&r.stdout).len(), 3);
    let read: u64 = r
        .stderr
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("the query stopped the scan early (LIMIT) after ")
        })
        .and_then(|l| l.split(' ').next())
        .unwrap_or_else(|| panic!("no early stop in --stats: {}", r.stderr))
        .parse()
        .unwrap();
    assert!(read > 0 && read < size / 4, "read {read} of {size} bytes");
}

/// An empty input is no error wherever it stands, first included (format
/// detection and type inference sample the first input with data).
#[test]
fn empty_first_input_is_no_error() {
    let t = scratch();
    let empty = t.path().join("a-empty");
    std::fs::write(&empty, b"").unwrap();
    let csv = t.path().join("b.csv");
    std::fs::write(&csv, b"x,y\n1,2\n3,4\n").unwrap();
    let jsonl = t.path().join("b.jsonl");
    std::fs::write(&jsonl, b"{\"x\":1}\n{\"x\":3}\n").unwrap();
    for (format, data) in [("csv", &csv), ("jsonl", &jsonl), ("auto", &csv)] {
        let r = wf_sql(
            &["--json", "--format", format],
            "SELECT count(*) AS n, sum(x) AS s FROM logs",
            &[empty.clone(), data.clone()],
        );
        assert_eq!(r.code, Some(0), "--format {format}: {}", r.stderr);
        assert_eq!(
            json_lines(&r.stdout),
            [json!({"n": 2, "s": 4})],
            "--format {format}"
        );
    }
}

/// Type inference and format sampling see whole records: a first record longer
/// than the sample (256 KiB) neither hides the columns (jsonl) nor makes every
/// column text (csv: "types inferred from the first 1000 records").
#[test]
fn a_first_record_longer_than_the_sample_is_read() {
    let t = scratch();
    let big = "x".repeat(300_000);
    let mut jsonl = format!("{{\"id\":0,\"msg\":\"{big}\"}}\n");
    let mut csv = format!("id,msg\n0,{big}\n");
    for i in 1..5 {
        jsonl += &format!("{{\"id\":{i},\"msg\":\"m\"}}\n");
        csv += &format!("{i},m\n");
    }
    for (format, data) in [("jsonl", jsonl), ("csv", csv)] {
        let p = t.path().join(format!("big-first.{format}"));
        std::fs::write(&p, data).unwrap();
        let r = wf_sql(
            &["--json", "--format", format],
            "SELECT count(*) AS n, sum(id) AS s, max(length(msg)) AS l FROM logs",
            &[p],
        );
        assert_eq!(r.code, Some(0), "--format {format}: {}", r.stderr);
        assert_eq!(
            json_lines(&r.stdout),
            [json!({"n": 5, "s": 10, "l": 300_000})],
            "--format {format}"
        );
    }
}

/// A UTF-8 byte order mark (as Excel writes) is not part of the first column's
/// name (DuckDB drops it too): `SELECT id` works on "\u{feff}id,name".
#[test]
fn csv_byte_order_mark_is_not_part_of_a_name() {
    let t = scratch();
    let p = t.path().join("bom.csv");
    std::fs::write(&p, b"\xef\xbb\xbfid,name\n1,a\n2,b\n").unwrap();
    let r = wf_sql(
        &["--json", "--format", "csv"],
        "SELECT sum(id) AS s FROM logs",
        &[p],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(json_lines(&r.stdout), [json!({"s": 3})]);
}

/// A missing input is named on stderr even when it is the only one, whatever
/// the format (a format that samples its first input must not hide it).
#[test]
fn a_lone_missing_input_is_named() {
    let t = scratch();
    let missing = t.path().join("missing.csv");
    for format in ["csv", "jsonl", "logfmt", "combined", "auto"] {
        let r = wf_sql(
            &["--format", format],
            "SELECT count(*) AS n FROM logs",
            std::slice::from_ref(&missing),
        );
        assert_eq!(r.code, Some(2), "--format {format}: {}", r.stderr);
        assert!(
            r.stderr.contains(missing.to_str().unwrap()),
            "--format {format}: the missing input is not named: {}",
            r.stderr
        );
    }
}

/// JSON `-0` is an integer (no fraction, no exponent): an int column, value 0.
#[test]
fn jsonl_minus_zero_is_the_integer_0() {
    let t = scratch();
    let p = t.path().join("z.jsonl");
    std::fs::write(&p, b"{\"a\":1}\n{\"a\":-0}\n{\"a\":2}\n").unwrap();
    let (rows, _) = sql_ok(
        &["--format", "jsonl"],
        "SELECT a, arrow_typeof(a) AS t FROM logs ORDER BY _offset",
        &[p],
    );
    assert_eq!(
        rows,
        [
            json!({"a": 1, "t": "Int64"}),
            json!({"a": 0, "t": "Int64"}),
            json!({"a": 2, "t": "Int64"})
        ]
    );
}

#[test]
fn invalid_utf8_is_replaced_and_counted_never_a_crash() {
    let t = scratch();
    let p = t.path().join("u.csv");
    std::fs::write(&p, b"name,n\nok,1\nb\xffd,2\n\"q\xc3\x28\",3\n\xe2\x82,4\n").unwrap();
    let (rows, stats) = sql_ok(
        &["--format", "csv"],
        "SELECT name, n FROM logs ORDER BY n",
        std::slice::from_ref(&p),
    );
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["ok", "b\u{fffd}d", "q\u{fffd}(", "\u{fffd}"]);
    assert_eq!(stats.invalid_utf8, 3);
    assert_eq!(stats.rows, 4);
    // Said without --stats too: the answer is not the file's bytes.
    let q = "SELECT count(DISTINCT name) AS n FROM logs";
    let r = wf_sql(&["--format", "csv"], q, &[p]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("table logs: 3 text values are not valid UTF-8, read with U+FFFD"),
        "{}",
        r.stderr
    );
}

// ------------------------------------------------------------------ -o files

#[test]
fn output_files_read_back_to_the_same_rows() {
    let t = scratch();
    let p = small_log(t.path());
    let q = "SELECT client, status, bytes, time, CAST(time AS BIGINT) AS t_us, method, _offset \
             FROM logs ORDER BY _offset";
    let (rows, _) = sql_ok(&["--format", "combined"], q, std::slice::from_ref(&p));
    assert!(rows.len() > 20);
    // Every output file must be written, whatever reads it back.
    let exts = ["parquet", "csv", "tsv", "jsonl", "arrow"];
    for ext in exts {
        let out = t.path().join(format!("out.{ext}"));
        let r = wf_sql(
            &["--format", "combined", "-o", out.to_str().unwrap()],
            q,
            std::slice::from_ref(&p),
        );
        assert_eq!(r.code, Some(0), "-o {ext}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "-o {ext} printed to stdout");
        assert!(std::fs::metadata(&out).unwrap().len() > 0, "{ext}");
    }
    // An answer of no rows is its header line in CSV and TSV, files and
    // stdout, as DuckDB writes it (it was an empty file).
    let none = "SELECT client, status FROM logs WHERE status < 0";
    for (ext, head) in [("csv", "client,status\n"), ("tsv", "client\tstatus\n")] {
        let out = t.path().join(format!("none.{ext}"));
        let args = ["--format", "combined", "-o", out.to_str().unwrap()];
        assert_eq!(wf_sql(&args, none, std::slice::from_ref(&p)).code, Some(0));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), head, "{ext}");
    }
    let r = wf_sql(
        &["--format", "combined", "--csv"],
        none,
        std::slice::from_ref(&p),
    );
    assert_eq!(
        (r.code, r.stdout.as_slice()),
        (Some(0), &b"client,status\n"[..])
    );
    // jsonl: the same lines as --json.
    let jsonl = std::fs::read(t.path().join("out.jsonl")).unwrap();
    assert_eq!(json_lines(&jsonl), rows);
    let Some(py) = duckdb_python() else { return };
    let keys = ["client", "status", "bytes", "t_us", "method", "_offset"];
    let want = tuples(&rows, &keys);
    let cols = "client, status, bytes, t_us, method, _offset, \
                epoch_us(time::TIMESTAMPTZ) IS NOT DISTINCT FROM t_us::BIGINT AS same_time";
    let check = |what: &str, got: Vec<Value>, as_text: bool| {
        let mut same = Vec::new();
        let got: Vec<Value> = got
            .into_iter()
            .map(|mut r| {
                same.push(r.as_array_mut().unwrap().pop().unwrap());
                r
            })
            .collect();
        assert!(
            same.iter().all(|s| s == &json!(true)),
            "{what}: time column differs"
        );
        let norm = |v: &Value| -> Value {
            match v {
                Value::Number(n) if as_text => json!(n.to_string()),
                Value::String(s) if as_text && s.is_empty() => Value::Null,
                v => v.clone(),
            }
        };
        let want: Vec<Value> = want
            .as_array()
            .unwrap()
            .iter()
            .map(|r| Value::Array(r.as_array().unwrap().iter().map(&norm).collect()))
            .collect();
        let got: Vec<Value> = got
            .iter()
            .map(|r| Value::Array(r.as_array().unwrap().iter().map(&norm).collect()))
            .collect();
        assert_eq!(got, want, "{what}");
    };
    let pq = t.path().join("out.parquet");
    check(
        "parquet",
        duckdb(
            &py,
            &format!(
                "SELECT {cols} FROM read_parquet({}) ORDER BY _offset",
                sql_string(&pq)
            ),
            None,
        ),
        false,
    );
    for (ext, delim) in [("csv", ","), ("tsv", "\t")] {
        let file = t.path().join(format!("out.{ext}"));
        check(
            ext,
            duckdb(
                &py,
                &format!(
                    "SELECT {cols} FROM read_csv({}, delim='{delim}', header=true, \
                     all_varchar=true) ORDER BY _offset::BIGINT",
                    sql_string(&file)
                ),
                None,
            ),
            true,
        );
    }
    check(
        "jsonl",
        duckdb(
            &py,
            &format!(
                "SELECT {cols} FROM read_json({}, format='newline_delimited', columns={{'client':'VARCHAR',\
                 'status':'BIGINT','bytes':'BIGINT','time':'VARCHAR','t_us':'BIGINT','method':'VARCHAR',\
                 '_offset':'BIGINT'}}) ORDER BY _offset",
                sql_string(&t.path().join("out.jsonl"))
            ),
            None,
        ),
        false,
    );
    if has_pyarrow(&py) {
        let arrow = t.path().join("out.arrow");
        check(
            "arrow",
            duckdb(
                &py,
                &format!("SELECT {cols} FROM t ORDER BY _offset"),
                Some(&arrow),
            ),
            false,
        );
    } else {
        eprintln!("skipping: pyarrow not installed (the .arrow file is not read back)");
    }
}

/// A GROUP BY far larger than `--memory` spills and gives the exact answer, every
/// time: under DataFusion 55.2's own pool such a query sometimes hung for good
/// (RepartitionExec's spill path, apache/datafusion#24883) or failed to allocate
/// (2 of 8 runs at 16M here). Each run has a deadline, so a hang fails the test.
/// At 24M the final aggregations still spill (7 spills, 24 MB, EXPLAIN ANALYZE);
/// 16M, where they only just fit, failed to allocate in about 1 run of 20 once
/// the CSV and string-view changes (9defa25) moved the timing, old build 0 of 40.
#[test]
fn group_by_beyond_memory_spills_and_never_hangs() {
    let dir = scratch();
    let log = dir.path().join("clients.log");
    let mut data = Vec::new();
    for i in 0..1_000_000u32 {
        let n = 1 + (i % 7 == 0) as u32 + (i % 1000 == 3) as u32 * 5;
        for _ in 0..n.min(2) {
            data.extend_from_slice(
                format!(
                    "10.{}.{}.{} - - [25/Nov/2026:10:00:00 +0000] \"GET /x HTTP/1.1\" 200 {} \"-\" \"b\"\n",
                    i >> 16,
                    (i >> 8) & 255,
                    i & 255,
                    i % 1000
                )
                .as_bytes(),
            );
        }
    }
    std::fs::write(&log, &data).unwrap();
    // Clients seen twice (i % 7 == 0 or i % 1000 == 3), smallest names first.
    let mut twice: Vec<String> = (0..1_000_000u32)
        .filter(|i| i % 7 == 0 || i % 1000 == 3)
        .map(|i| format!("10.{}.{}.{}", i >> 16, (i >> 8) & 255, i & 255))
        .collect();
    twice.sort();
    let want: Vec<Value> = twice[..5].iter().map(|c| json!([c, 2])).collect();
    let q =
        "SELECT client, count(*) AS n FROM logs GROUP BY client ORDER BY n DESC, client LIMIT 5";
    for attempt in 0..5 {
        let out = dir.path().join(format!("out{attempt}.json"));
        let mut child = wf()
            .args(["sql", "--no-progress", "--json", "--memory", "24M"])
            .arg("--temp-dir")
            .arg(dir.path())
            .args([q, log.to_str().unwrap()])
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if std::time::Instant::now() > deadline {
                child.kill().unwrap();
                panic!("attempt {attempt}: no answer within 90 s (hung)");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        assert!(status.success(), "attempt {attempt}: {status}");
        let rows = json_lines(&std::fs::read(&out).unwrap());
        assert_eq!(tuples(&rows, &["client", "n"]), Value::Array(want.clone()));
    }
}

// ------------------------------------------------------------------ issue 36: no wrong answers

/// Python's answer to a question about a file: `script` reads `sys.argv[1]`
/// and prints JSON.
fn python_json(script: &str, p: &Path) -> Value {
    let mut c = Command::new(python());
    c.args(["-c", script]).arg(p);
    serde_json::from_slice(&ok_bytes(c, None)).unwrap()
}

/// A quote inside an unquoted field is data (issue 36, item 1): two stray
/// quotes 100 rows apart and one at a field's end drop nothing; every row is
/// read as Python's csv module and DuckDB read them, at every -j and chunk size.
#[test]
fn stray_quotes_in_csv_fields_are_data_as_python_and_duckdb_read_them() {
    let t = scratch();
    let p = t.path().join("stray.csv");
    let mut s = String::from("a,b,c\n");
    for i in 0..3000 {
        s += &match i {
            10 => "10,x\"y,20\n".to_string(),
            110 => "110,p\"q,220\n".to_string(),
            700 => "700,ab\",1400\n".to_string(),
            900 => "900,\"quoted, \"\"fine\"\"\",1800\n".to_string(),
            _ => format!("{i},s{i},{}\n", 2 * i),
        };
    }
    std::fs::write(&p, &s).unwrap();
    let want = python_json(
        "import csv, sys, json\n\
         r = list(csv.reader(open(sys.argv[1], newline='')))[1:]\n\
         print(json.dumps([[len(r), sum(int(x[0]) for x in r), sum(int(x[2]) for x in r), \
         sum('\"' in x[1] for x in r)]]))",
        &p,
    );
    assert_eq!(want[0][0], 3000);
    let q = "SELECT count(*) AS n, sum(a) AS sa, sum(c) AS sc, \
             sum(CASE WHEN strpos(b, '\"') > 0 THEN 1 ELSE 0 END) AS q FROM logs";
    for (j, c) in configs() {
        let args = ["--format", "csv", "-j", j, "--chunk-size", c];
        let (rows, stats) = sql_ok(&args, q, std::slice::from_ref(&p));
        assert_eq!(
            tuples(&rows, &["n", "sa", "sc", "q"]),
            want,
            "-j {j} --chunk-size {c}"
        );
        assert_eq!(stats.malformed, 0);
    }
    if let Some(py) = duckdb_python() {
        let duck = duckdb(
            &py,
            &format!(
                "SELECT count(*), sum(a), sum(c), sum(CASE WHEN strpos(b, '\"') > 0 THEN 1 \
                 ELSE 0 END) FROM read_csv({}, header=true, quote='\"', escape='\"')",
                sql_string(&p)
            ),
            None,
        );
        assert_eq!(Value::Array(duck), want);
    }
}

/// A quote that opens a field and never closes it makes only its own line
/// malformed (located by byte offset in --stats): the records after it are
/// still rows, whether the file is read serially or cut on every core. The
/// file quotes a delimiter on its next line, so its quotes are quoting (one
/// whose every line splits evenly without them is read without, as DuckDB
/// reads it: `quotes_that_are_data_are_read_as_data`).
#[test]
fn an_unclosed_quote_spoils_only_its_own_line() {
    let t = scratch();
    let p = t.path().join("unclosed.csv");
    let mut s = String::from("a,b,c\n1,\"x,2\n2,\"p,q\",2\n");
    let mut sum = 2;
    for i in 3..2000 {
        s += &format!("{i},y{i},{i}\n");
        sum += i;
    }
    std::fs::write(&p, &s).unwrap();
    // A quoted line break later in the file makes it one read serially.
    let serial = t.path().join("unclosed-serial.csv");
    std::fs::write(&serial, s + "5000,\"two\nlines\",5000\n").unwrap();
    for (p, n, sum, j, c) in [
        (&p, 1998, sum, "1", "8M"),
        (&p, 1998, sum, "3", "1K"),
        (&serial, 1999, sum + 5000, "1", "8M"),
        (&serial, 1999, sum + 5000, "3", "1K"),
    ] {
        let args = ["--format", "csv", "-j", j, "--chunk-size", c];
        let r = wf_sql(
            &[&["--json", "--stats"], &args[..]].concat(),
            "SELECT count(*) AS n, sum(a) AS s FROM logs",
            std::slice::from_ref(p),
        );
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let rows = json_lines(&r.stdout);
        assert_eq!(
            tuples(&rows, &["n", "s"]),
            json!([[n, sum]]),
            "{p:?} -j {j}"
        );
        assert_eq!(parse_stats(&r.stderr).malformed, 1);
        let at = format!("at {}: byte 6", p.display());
        assert!(r.stderr.contains(&at), "{at} not in {}", r.stderr);
    }
}

/// CSV files whose headers name the same columns in other orders, or other
/// columns, are matched by name as DuckDB's `union_by_name` matches them; a
/// file without a header is an error that names it.
#[test]
fn csv_files_with_other_headers_are_matched_by_name_as_duckdb_does() {
    let t = scratch();
    let files: Vec<PathBuf> = [
        ("h1.csv", "a,b\n1,2\n3,4\n"),
        ("h2.csv", "b,a\n12,11\n14,13\n"),
        ("h3.csv", "a,c\n21,x\n"),
    ]
    .iter()
    .map(|(n, d)| {
        let p = t.path().join(n);
        std::fs::write(&p, d).unwrap();
        p
    })
    .collect();
    let q = "SELECT a, b, c FROM logs ORDER BY a";
    let want = json!([
        [1, 2, null],
        [3, 4, null],
        [11, 12, null],
        [13, 14, null],
        [21, null, "x"]
    ]);
    for (j, c) in [("1", "8M"), ("2", "7")] {
        let (rows, _) = sql_ok(&["--format", "csv", "-j", j, "--chunk-size", c], q, &files);
        assert_eq!(tuples(&rows, &["a", "b", "c"]), want, "-j {j}");
    }
    if let Some(py) = duckdb_python() {
        let list: Vec<String> = files.iter().map(|p| sql_string(p)).collect();
        let duck = duckdb(
            &py,
            &format!(
                "SELECT a, b, c FROM read_csv([{}], union_by_name=true) ORDER BY a",
                list.join(", ")
            ),
            None,
        );
        assert_eq!(Value::Array(duck), want);
    }
    let bare = t.path().join("bare.csv");
    std::fs::write(&bare, "5,6\n7,8\n").unwrap();
    let r = wf_sql(&["--format", "csv"], q, &[files[0].clone(), bare.clone()]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains(bare.to_str().unwrap()) && r.stderr.contains("h1.csv"),
        "{}",
        r.stderr
    );
}

/// Python's sum of column `a` of a CSV file, the values that are no numbers left out.
const PY_SUM_A: &str = "import csv, sys, json\n\
    def num(v):\n    try: return float(v)\n    except ValueError: return None\n\
    r = [num(x['a']) for x in csv.DictReader(open(sys.argv[1], newline=''))]\n\
    print(json.dumps([sum(v for v in r if v is not None)]))";

/// A value that does not fit the type inferred from the first 1000 records
/// stops the query, naming its file, line and value and the --schema that
/// reads it (as DuckDB fails such a query), never a sum with it left out and
/// exit status 0; with that --schema the sum is Python's and DuckDB's, and
/// with --strict a value that does not fit a declared type stops it too.
#[test]
fn a_late_value_not_of_the_inferred_type_stops_the_query() {
    let t = scratch();
    let p = t.path().join("late.csv");
    let mut s = String::from("id,a\n");
    for i in 0..3000 {
        s += &match i {
            2000 => format!("{i},1.5\n"),
            2500 => format!("{i},N/A\n"),
            _ => format!("{i},{}\n", i % 7),
        };
    }
    std::fs::write(&p, &s).unwrap();
    let q = "SELECT sum(a) AS s FROM logs";
    let r = wf_sql(&["--format", "csv", "-j", "1"], q, std::slice::from_ref(&p));
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    for part in [
        "late.csv: line 2002 (byte ",
        "column a: \"1.5\"",
        "--schema 'id:int,a:float'",
    ] {
        assert!(r.stderr.contains(part), "{part:?} not in {}", r.stderr);
    }
    assert!(r.stdout.is_empty() || !String::from_utf8_lossy(&r.stdout).contains("4998"));
    let r = wf_sql(
        &["--format", "csv", "-j", "3", "--chunk-size", "1K"],
        q,
        std::slice::from_ref(&p),
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("is not of its type int"), "{}", r.stderr);

    let schema = ["--format", "csv", "--schema", "id:int,a:float"];
    let (rows, stats) = sql_ok(&schema, q, std::slice::from_ref(&p));
    let want = python_json(PY_SUM_A, &p);
    assert_eq!(tuples(&rows, &["s"]), json!([want]));
    assert_eq!(stats.bad_values, 1);
    if let Some(py) = duckdb_python() {
        let duck = duckdb(
            &py,
            &format!(
                "SELECT sum(TRY_CAST(a AS DOUBLE)) FROM read_csv({}, all_varchar=true)",
                sql_string(&p)
            ),
            None,
        );
        assert_eq!(Value::Array(duck), json!([want]));
    }
    let r = wf_sql(
        &[&schema[..], &["--strict"]].concat(),
        q,
        std::slice::from_ref(&p),
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("line 2502 (byte ") && r.stderr.contains("\"N/A\""),
        "{}",
        r.stderr
    );
}

/// Invalid UTF-8 in CSV text is replaced and counted, and under --strict it
/// stops the query, naming the line (issue 36, item 6).
#[test]
fn invalid_utf8_in_csv_fails_under_strict() {
    let t = scratch();
    let p = t.path().join("u.csv");
    std::fs::write(&p, b"name,n\nok,1\nb\xffd,2\n").unwrap();
    let (_, stats) = sql_ok(
        &["--format", "csv"],
        "SELECT name FROM logs",
        std::slice::from_ref(&p),
    );
    assert_eq!(stats.invalid_utf8, 1);
    let r = wf_sql(
        &["--format", "csv", "--strict"],
        "SELECT name FROM logs",
        &[p],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("u.csv: line 3 (byte 12): invalid UTF-8"),
        "{}",
        r.stderr
    );
}

/// A logfmt key that is not valid UTF-8 keeps its values (its column's name
/// has U+FFFD), and they are counted as invalid UTF-8.
#[test]
fn logfmt_keys_not_utf8_keep_their_values() {
    let t = scratch();
    let p = t.path().join("k.logfmt");
    std::fs::write(&p, b"k\xff=5 x=1\nk\xff=6 x=2\nk\xff=7 x=3\n").unwrap();
    let (rows, stats) = sql_ok(
        &["--format", "logfmt"],
        "SELECT sum(\"k\u{fffd}\") AS s, sum(x) AS x FROM logs",
        &[p],
    );
    assert_eq!(tuples(&rows, &["s", "x"]), json!([[18, 6]]));
    assert_eq!(stats.invalid_utf8, 3);
}

/// JSON integers beyond 2^53 in a number column: the column is decimal(38,0)
/// (text when it has fractions too), so no digit is lost, and --stats says so.
#[test]
fn json_integers_beyond_2_53_keep_every_digit() {
    let t = scratch();
    let p = t.path().join("big.jsonl");
    std::fs::write(
        &p,
        "{\"n\":9007199254740993,\"m\":9007199254740993}\n\
         {\"n\":18446744073709551615,\"m\":0.5}\n{\"n\":1,\"m\":1}\n",
    )
    .unwrap();
    let r = wf_sql(
        &["--format", "jsonl", "--json", "--stats"],
        "SELECT CAST(sum(n) AS VARCHAR) AS s, max(m) AS m FROM logs",
        std::slice::from_ref(&p),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let rows = json_lines(&r.stdout);
    // 9007199254740993 + 18446744073709551615 + 1, as Python adds them.
    assert_eq!(
        tuples(&rows, &["s", "m"]),
        json!([["18455751272964292609", "9007199254740993"]])
    );
    assert!(
        r.stderr.contains("column n: integers beyond 2^53"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("typed decimal(38,0)"), "{}", r.stderr);
}

/// A CSV header that names a column twice, or names one `_file`, is renamed
/// as DuckDB renames it (`a`, `a_1`), and the file can be queried. A column
/// named as a virtual one is said on stderr: `SELECT _line` of a file with
/// a `_line` column (wf's own `SELECT * -o` writes one) read wf's line
/// numbers, exit 0, nothing said. So is a JSON key's.
#[test]
fn repeated_csv_header_names_are_renamed() {
    let t = scratch();
    let p = t.path().join("dup.csv");
    std::fs::write(&p, "a,a,_file,b\n1,2,3,4\n").unwrap();
    let r = wf_sql(
        &["--format", "csv", "--json"],
        "SELECT a, a_1, _file_1, b, _file FROM logs",
        std::slice::from_ref(&p),
    );
    assert_eq!(
        tuples(
            &json_lines(&r.stdout),
            &["a", "a_1", "_file_1", "b", "_file"]
        ),
        json!([[1, 2, 3, 4, p.to_str().unwrap()]])
    );
    let said = "column \"_file\" is named \"_file_1\" (its name was taken)";
    assert!(r.stderr.contains(said), "{}", r.stderr);
    // A later file's header (matched by name), said once.
    let later = t.path().join("later.csv");
    std::fs::write(&later, "b,_offset,a\n5,6,7\n").unwrap();
    let r = wf_sql(
        &["--format", "csv", "--json"],
        "SELECT a, _offset_1 FROM logs ORDER BY a",
        &[p.clone(), later],
    );
    assert_eq!(
        tuples(&json_lines(&r.stdout), &["a", "_offset_1"]),
        json!([[1, null], [7, 6]])
    );
    let said = "column \"_offset\" is named \"_offset_1\" (its name was taken)";
    assert_eq!(r.stderr.matches(said).count(), 1, "{}", r.stderr);
    let j = t.path().join("virtual.jsonl");
    std::fs::write(&j, "{\"_line\":99,\"x\":1}\n").unwrap();
    let r = wf_sql(
        &["--format", "jsonl", "--json"],
        "SELECT _line_1, _line, x FROM logs",
        std::slice::from_ref(&j),
    );
    assert_eq!(
        tuples(&json_lines(&r.stdout), &["_line_1", "_line", "x"]),
        json!([[99, 1, 1]])
    );
    let said = "column \"_line\" is named \"_line_1\" (its name was taken)";
    assert!(r.stderr.contains(said), "{}", r.stderr);
}

/// A log read in a format not its own says so on stderr without `--stats`
/// (the answer stays what the rules give): a common log read as combined
/// has no row, which fails the run (exit 2, the file and first offset
/// named), a combined one read as common a NULL size in each (exit 0);
/// read in its own format, nothing is said.
#[test]
fn a_log_in_another_format_is_said_on_stderr() {
    let t = tempfile::tempdir().unwrap();
    let line = |tail: &str| {
        format!("1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 12{tail}\n")
    };
    let (common, combined) = (t.path().join("common.log"), t.path().join("combined.log"));
    std::fs::write(&common, line("").repeat(5)).unwrap();
    std::fs::write(&combined, line(" \"-\" \"curl/8\"").repeat(5)).unwrap();
    let q = "SELECT count(*) AS n, sum(bytes) AS b FROM logs";
    for (format, f, said) in [
        (
            "combined",
            &common,
            "none of 5 lines parse as combined (the first at byte 0)",
        ),
        (
            "common",
            &combined,
            "5 values in 5 rows are not of their column's type",
        ),
        ("common", &common, ""),
        ("combined", &combined, ""),
    ] {
        let r = wf_sql(&["--format", format, "--csv"], q, std::slice::from_ref(f));
        let none = format == "combined" && f == &common;
        assert_eq!(r.code, Some(if none { 2 } else { 0 }), "{}", r.stderr);
        if none {
            let out = String::from_utf8_lossy(&r.stdout);
            assert!(out.contains("0,"), "the answer is printed: {out}");
            assert!(r.stderr.contains(f.to_str().unwrap()), "{}", r.stderr);
        }
        match said {
            "" => assert!(r.stderr.is_empty(), "{format}: {}", r.stderr),
            s => assert!(r.stderr.contains(s), "{format}: {}", r.stderr),
        }
    }
    // A common log beside a combined one, none of its lines a row: that file
    // is named, exit 2, the combined one's rows counted (it was one warning
    // of the table's total, exit 0). The same at -j 1 and small chunks.
    let both = [combined.clone(), common.clone()];
    for j in ["-j1", "-j2"] {
        let r = wf_sql(
            &["--format", "combined", "--csv", j, "--chunk-size", "4K"],
            q,
            &both,
        );
        assert_eq!(r.code, Some(2), "{}", r.stderr);
        assert_eq!(String::from_utf8_lossy(&r.stdout), "n,b\n5,60\n");
        let named = format!("{}: table logs: none of 5 lines parse", common.display());
        assert!(r.stderr.contains(&named), "{}", r.stderr);
        let combined = format!("{}:", combined.display());
        assert!(!r.stderr.contains(&combined), "{}", r.stderr);
    }
}

/// CSV output (`--csv`, `-o x.csv`, `-o x.tsv`) writes `''` as `""` and NULL
/// as nothing, so that wf reads each back as it was (both were nothing:
/// `''` came back NULL).
#[test]
fn csv_output_keeps_empty_text_apart_from_null() {
    let t = tempfile::tempdir().unwrap();
    let csv = t.path().join("e.csv");
    std::fs::write(&csv, "a,b\n1,\n2,x\n3,\"\"\n").unwrap();
    let q = "SELECT a, b, b IS NULL AS none FROM logs ORDER BY a";
    let r = wf_sql(&["--csv"], q, std::slice::from_ref(&csv));
    let want = "a,b,none\n1,,true\n2,x,false\n3,\"\",false\n";
    assert_eq!(
        (r.code, String::from_utf8_lossy(&r.stdout).as_ref()),
        (Some(0), want)
    );
    for ext in ["csv", "tsv"] {
        let out = t.path().join(format!("out.{ext}"));
        let r = wf_sql(
            &["-o", out.to_str().unwrap()],
            q,
            std::slice::from_ref(&csv),
        );
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let (rows, _) = sql_ok(
            &["--format", ext],
            "SELECT a, b, b IS NULL AS n FROM logs ORDER BY a",
            std::slice::from_ref(&out),
        );
        assert_eq!(
            tuples(&rows, &["a", "b", "n"]),
            json!([[1, null, true], [2, "x", false], [3, "", false]]),
            "{ext}"
        );
    }
}

/// `--json` and `-o x.json` write every column of every row, a NULL as
/// `null`, as DuckDB does (Arrow's writer left a NULL's key out: a row's keys
/// changed with its values, and a column of NULLs was nowhere); an empty
/// CSV field is NULL, a quoted one the empty string in a text column.
#[test]
fn json_lines_write_nulls() {
    let t = tempfile::tempdir().unwrap();
    let csv = t.path().join("e.csv");
    std::fs::write(&csv, "a,b\n1,\n2,x\n3,\"\"\n,y\n").unwrap();
    let q = "SELECT a, b, NULL AS none FROM logs ORDER BY a NULLS LAST";
    let want = "{\"a\":1,\"b\":null,\"none\":null}\n{\"a\":2,\"b\":\"x\",\"none\":null}\n\
                {\"a\":3,\"b\":\"\",\"none\":null}\n{\"a\":null,\"b\":\"y\",\"none\":null}\n";
    let r = wf_sql(&["--json"], q, std::slice::from_ref(&csv));
    assert_eq!(
        (r.code, String::from_utf8_lossy(&r.stdout).as_ref()),
        (Some(0), want)
    );
    let out = t.path().join("out.json");
    let r = wf_sql(
        &["-o", out.to_str().unwrap()],
        q,
        std::slice::from_ref(&csv),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), want);
    // JSON has no inf or NaN: null, and stderr says so (DuckDB writes
    // `Infinity`, which no JSON reader takes).
    let q = "SELECT sum(x) AS s, 1.5 AS ok FROM (VALUES (1.7976931348623157e308), (1e308)) t(x)";
    let r = wf_sql(&["--json"], q, std::slice::from_ref(&csv));
    assert_eq!(
        String::from_utf8_lossy(&r.stdout),
        "{\"s\":null,\"ok\":1.5}\n"
    );
    assert!(
        r.stderr
            .contains("1 float values (inf, -inf or NaN) written as null"),
        "{}",
        r.stderr
    );
}

/// The table (for a terminal) shows a value's control characters as
/// `\xHH`: an escape sequence from a log acted on the terminal, and a
/// quoted line break broke the table's rows; `--csv` keeps the bytes.
#[test]
fn the_table_shows_control_characters_as_escapes() {
    let t = tempfile::tempdir().unwrap();
    let csv = t.path().join("c.csv");
    std::fs::write(&csv, "a,b\n1,\"x\ny\"\n2,\"\x1b]0;t\x07\"\n").unwrap();
    let q = "SELECT a, b FROM logs ORDER BY a";
    let r = wf_sql(&["--format", "csv"], q, std::slice::from_ref(&csv));
    let out = String::from_utf8(r.stdout).unwrap();
    assert!(out.contains(r"| 1 | x\x0ay       |"), "{out}");
    assert!(out.contains(r"| 2 | \x1b]0;t\x07 |"), "{out}");
    let r = wf_sql(&["--format", "csv", "--csv"], q, std::slice::from_ref(&csv));
    assert_eq!(r.stdout, b"a,b\n1,\"x\ny\"\n2,\x1b]0;t\x07\n");
    // A right-to-left override alone in its column (made `/exe.png`), and
    // in a column's name.
    let bidi = t.path().join("bidi.csv");
    std::fs::write(&bidi, "p\u{202e}q,x\n/\u{202e}gnp.exe,1\n").unwrap();
    let r = wf_sql(&["--format", "csv"], "SELECT * FROM logs", &[bidi]);
    let out = String::from_utf8(r.stdout).unwrap();
    assert!(out.contains(r"/\u{202e}gnp.exe"), "{out}");
    assert!(out.contains(r"p\u{202e}q"), "{out}");
    assert!(!out.contains('\u{202e}'), "{out}");
}

/// Options before the query as `make` and `cargo` take them (`-j1`, once read
/// as the query itself), and a query that starts with a `--` comment, before
/// or after `--`.
#[test]
fn short_options_before_the_query_and_a_commented_query() {
    let t = tempfile::tempdir().unwrap();
    let log = t.path().join("a.log");
    std::fs::write(&log, "x y\nz w\n").unwrap();
    let q = "SELECT count(*) AS n FROM logs";
    let r = wf_sql(&["-j1", "--csv"], q, std::slice::from_ref(&log));
    assert_eq!(
        (r.code, String::from_utf8_lossy(&r.stdout).as_ref()),
        (Some(0), "n\n2\n")
    );
    let commented = format!("-- how many\n{q}");
    let r = wf_sql(&["--csv", "--"], &commented, std::slice::from_ref(&log));
    assert_eq!(
        (r.code, String::from_utf8_lossy(&r.stdout).as_ref()),
        (Some(0), "n\n2\n")
    );
    let r = wf_sql(&["--csv"], &commented, std::slice::from_ref(&log));
    assert_eq!(
        (r.code, String::from_utf8_lossy(&r.stdout).as_ref()),
        (Some(0), "n\n2\n")
    );
    let r = wf_sql(
        &["-j1", "--csv"],
        "--\tnothing else",
        std::slice::from_ref(&log),
    );
    assert_eq!(r.code, Some(2));
}

/// A quoted field with line breaks that runs past the end of the sample
/// (a file's 256 KiB, or where a pipe paused): the sample is read on until
/// it closes, as DuckDB's sample is of records. Before, its lines were read
/// as the sample's records: quoting was turned off for the whole file
/// (60,012 rows of 12, exit 0), or the columns typed from them (`max(id)`
/// 9 of 1..12, compared as text).
#[test]
fn a_quoted_field_past_the_sample_end_is_sampled_whole() {
    let t = scratch();
    let long = t.path().join("long.csv");
    let mut text = String::from("id,txt\n1,\"x0\n");
    for i in 0..60_000 {
        text.push_str(&format!("a{i},b\n"));
    }
    text.push_str("end\"\n");
    for i in 2..13 {
        text.push_str(&format!("{i},b\n"));
    }
    std::fs::write(&long, &text).unwrap();
    let q = "SELECT count(*) AS n, max(id) AS m, min(id) AS lo FROM logs";
    let (rows, _) = sql_ok(&[], q, std::slice::from_ref(&long));
    assert_eq!(tuples(&rows, &["n", "m", "lo"]), json!([[12, 12, 1]]));
    // The same from stdin.
    let mut c = wf();
    c.args(["sql", "--no-progress", "--json", "--format", "csv", q]);
    let out = ok_with(c, Some(text.as_bytes()));
    assert_eq!(
        tuples(&json_lines(out.as_bytes()), &["n", "m", "lo"]),
        json!([[12, 12, 1]])
    );
    // A pipe that pauses inside the quoted field, longer than a stream's
    // quiet spell (250 ms): the row is whole, not cut at its line break.
    let wf_path = wf().get_program().to_owned();
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(
            "(printf 'id,t\\n1,\"a\\n'; sleep 0.6; printf 'b\"\\n2,c\\n') | \
             \"$0\" sql --no-progress --json --format csv 'SELECT id, t FROM logs ORDER BY id'",
        )
        .arg(&wf_path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        tuples(&json_lines(&o.stdout), &["id", "t"]),
        json!([[1, "a\nb"], [2, "c"]])
    );
    // A quote that never closes in the whole file is data, as before: the
    // columns keep their types (the review found them typed text).
    let open = t.path().join("open.csv");
    std::fs::write(&open, "id,name,n\n1,\"oops,5\n2,b,6\n3,c,7\n4,d,8\n").unwrap();
    let (rows, _) = sql_ok(
        &[],
        "SELECT sum(n) AS s FROM logs",
        std::slice::from_ref(&open),
    );
    assert_eq!(tuples(&rows, &["s"]), json!([[26]]));
    // A whole file of 256 KiB or more whose quote never closes: the quote
    // is data there too (judged by the sample's length, such a file's
    // columns were typed text: max(n) 9998 of 0..79998, exit 0).
    for size in [262_144, 543_000] {
        let p = t.path().join(format!("open{size}.csv"));
        let mut text = String::from("id,n,s\n0,5,\"abc\n");
        let mut i = 1;
        while text.len() < size - 20 {
            text.push_str(&format!("{i},{},x\n", 2 * i));
            i += 1;
        }
        std::fs::write(&p, &text).unwrap();
        let want = 2 * (i - 1);
        let q = "SELECT max(n) AS m FROM logs";
        let (rows, _) = sql_ok(&[], q, std::slice::from_ref(&p));
        assert_eq!(tuples(&rows, &["m"]), json!([[want]]), "{size}");
        let mut c = wf();
        c.args(["sql", "--no-progress", "--json", "--format", "csv", q]);
        let out = ok_with(c, Some(text.as_bytes()));
        assert_eq!(
            tuples(&json_lines(out.as_bytes()), &["m"]),
            json!([[want]]),
            "{size} stdin"
        );
    }
    // A later file's sample (matched by header name) that ends inside a
    // quoted field: its lines are not the sample's records (they typed n
    // as text, and sum(n) failed).
    let d = t.path().join("two");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(d.join("a.csv"), "id,n\n1,2\n3,4\n").unwrap();
    let lines = "abc,def,ghi\n".repeat(300_000);
    let b = format!("n,id,note\n5,1,\"start\n{lines}end\"\n7,2,ok\n");
    std::fs::write(d.join("b.csv"), b).unwrap();
    let q = "SELECT sum(n) AS s, sum(id) AS i, count(*) AS c FROM logs";
    let (rows, _) = sql_ok(&[], q, &[d.join("a.csv"), d.join("b.csv")]);
    assert_eq!(tuples(&rows, &["s", "i", "c"]), json!([[18, 7, 4]]));
}

/// A CSV piped in, or gzipped, whose last record has no line break is
/// sniffed with that record, as the same file named is: its stream ended
/// while the sample was taken, so the sample is all of it (`3,x` typed
/// column `b` int, and the query failed on it, exit 2).
#[test]
fn a_csv_stream_read_to_its_end_is_sniffed_whole() {
    let t = scratch();
    let data = b"a,b\n1,2\n3,x";
    let gz = t.path().join("t.csv.gz");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut e, data).unwrap();
    std::fs::write(&gz, e.finish().unwrap()).unwrap();
    let query = "SELECT b, arrow_typeof(b) AS t FROM logs ORDER BY b";
    let mut piped = wf();
    piped.args(["sql", "--no-progress", "--format", "csv", "--csv", query]);
    let mut gzipped = wf();
    gzipped.args(["sql", "--no-progress", "--format", "csv", "--csv", query]);
    gzipped.arg(&gz);
    for (what, c, stdin) in [("pipe", piped, Some(&data[..])), ("gz", gzipped, None)] {
        let o = run(c, stdin);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{what}: {err}");
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "b,t\n2,Utf8View\nx,Utf8View\n",
            "{what}"
        );
    }
}
