//! `wf sql` must never lie and never destroy (issue 36), run as a real process:
//! `-o` onto an input refused (the input unchanged), `-o` atomic under a failing
//! query and SIGINT (the old target byte for byte, no temporary left), spill
//! directories gone after SIGINT and stale ones of dead processes removed,
//! read-only queries by default, integer sums that do not wrap (against
//! DuckDB), standard input named twice refused, the terminal table bounded by
//! `--max-rows` (peak RSS through a pty), `--strict` writing nothing, and a
//! `--memory` sort at `-j 2` that spills instead of failing.

mod common;
use common::*;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn sql(args: &[&str]) -> Command {
    let mut c = wf();
    c.arg("sql").args(args);
    c
}

fn write(p: &Path, s: &str) -> PathBuf {
    std::fs::write(p, s).unwrap();
    p.to_path_buf()
}

/// A CSV of `n` rows `a,g` (a = i, g = i % 3).
fn small_csv(dir: &Path, n: usize) -> PathBuf {
    let mut s = String::from("a,g\n");
    for i in 0..n {
        s.push_str(&format!("{i},{}\n", i % 3));
    }
    write(&dir.join("small.csv"), &s)
}

/// Every regular file under `dir`, at any depth.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Wait (up to a minute) until `pred` holds; false if it never did.
fn wait_until(mut pred: impl FnMut() -> bool) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(60) {
        if pred() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn stderr_of(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

// ------------------------------------------------------------- item 7: -o onto an input

#[test]
fn output_naming_an_input_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let input = small_csv(d.path(), 50);
    let before = std::fs::read(&input).unwrap();
    // The same file by another name: a path through `.` and a hard link.
    let link = d.path().join("link.csv");
    std::fs::hard_link(&input, &link).unwrap();
    let other = d.path().join(".").join("small.csv");
    for target in [&input, &link, &other] {
        let mut c = sql(&["SELECT * FROM logs"]);
        c.arg(&input).arg("-o").arg(target);
        let o = run(c, None);
        assert_eq!(o.status.code(), Some(2), "{target:?}: {}", stderr_of(&o));
        assert!(stderr_of(&o).contains("is the input"), "{}", stderr_of(&o));
        assert_eq!(std::fs::read(&input).unwrap(), before);
    }
    // Standard input redirected from the target.
    let mut c = sql(&["SELECT * FROM logs", "--format", "csv", "-", "-o"]);
    c.arg(&input)
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr_of(&o));
    assert_eq!(std::fs::read(&input).unwrap(), before);
    // Met in a directory walked for inputs, it is an input all the same:
    // refused, the file as it was. It was left out, its rows missing from
    // the answer, and written over, exit 0: a real input lost.
    let dir = d.path().join("logs");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("small.csv"), &before).unwrap();
    let out = dir.join("out.csv");
    let count_into_dir = || {
        let mut c = sql(&["SELECT count(*) AS n FROM logs", "--format", "csv"]);
        c.arg(&dir).arg("-o").arg(&out);
        run(c, None)
    };
    let first = count_into_dir();
    assert_eq!(first.status.code(), Some(0), "{}", stderr_of(&first));
    let written = std::fs::read(&out).unwrap();
    let second = count_into_dir();
    assert_eq!(second.status.code(), Some(2), "{}", stderr_of(&second));
    assert!(
        stderr_of(&second).contains("is the input"),
        "{}",
        stderr_of(&second)
    );
    assert_eq!(std::fs::read(&out).unwrap(), written);
}

// ------------------------------------------------------------------ item 8: atomic -o

#[test]
fn failing_query_leaves_the_target_as_it_was() {
    let d = tempfile::tempdir().unwrap();
    let input = small_csv(d.path(), 20_000);
    for ext in ["csv", "parquet", "jsonl", "arrow"] {
        let target = d.path().join(format!("out.{ext}"));
        std::fs::write(&target, b"the old result\n").unwrap();
        // Divide by zero at the last row, after batches were written.
        let q = "SELECT a, 10 / (19999 - a) AS x FROM logs";
        let mut c = sql(&[q, "-j", "2"]);
        c.arg(&input).arg("-o").arg(&target);
        let o = run(c, None);
        assert_eq!(o.status.code(), Some(2), "{}", stderr_of(&o));
        assert!(stderr_of(&o).contains("ivide by zero"), "{}", stderr_of(&o));
        assert_eq!(
            std::fs::read(&target).unwrap(),
            b"the old result\n",
            "{ext}"
        );
        let left: Vec<String> = names(d.path())
            .into_iter()
            .filter(|n| n.contains("wf-"))
            .collect();
        assert!(left.is_empty(), "temporaries left: {left:?}");
    }
    // A query that succeeds replaces it.
    let target = d.path().join("out.csv");
    let mut c = sql(&["SELECT count(*) AS n FROM logs"]);
    c.arg(&input).arg("-o").arg(&target);
    ok(c);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "n\n20000\n");
}

/// Start `wf` with `args`, wait until `ready` holds, send SIGINT, and return
/// how it ended.
fn interrupt(mut c: Command, ready: impl FnMut() -> bool) -> std::process::ExitStatus {
    c.stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let mut ready = ready;
    let started = wait_until(|| ready() || child.try_wait().unwrap().is_some());
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert!(started, "the query never reached the point to interrupt");
    status
}

#[test]
fn interrupted_output_leaves_the_target_as_it_was() {
    use std::os::unix::process::ExitStatusExt;
    let d = tempfile::tempdir().unwrap();
    let input = small_csv(d.path(), 10);
    let target = write(&d.path().join("out.parquet"), "the old result\n");
    // Slow, whatever the machine: a count over 10^15 generated rows.
    let mut c = sql(&["SELECT count(*) AS n FROM range(1000000000000000)"]);
    c.arg(&input).arg("-o").arg(&target);
    let dir = d.path().to_path_buf();
    let status = interrupt(c, || names(&dir).iter().any(|n| n.contains(".wf-")));
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
    assert_eq!(std::fs::read(&target).unwrap(), b"the old result\n");
    assert_eq!(names(d.path()), ["out.parquet", "small.csv"]);
}

// ----------------------------------------------------------------- item 9: spill files

#[test]
fn interrupted_spilling_sort_leaves_no_spill_files() {
    let d = tempfile::tempdir().unwrap();
    let log = generated_log(d.path(), "30M", "0.001", 7);
    let spill = d.path().join("spill");
    std::fs::create_dir(&spill).unwrap();
    let mut c = sql(&[
        "SELECT * FROM logs ORDER BY path, client",
        "--memory",
        "50M",
        "-j",
        "2",
        "--csv",
    ]);
    c.arg(&log).arg("--temp-dir").arg(&spill);
    let s = spill.clone();
    let status = interrupt(c, || !files_under(&s).is_empty());
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
    assert_eq!(names(&spill), Vec::<String>::new());
}

#[test]
fn spill_directories_of_dead_processes_are_removed() {
    let d = tempfile::tempdir().unwrap();
    let input = small_csv(d.path(), 10);
    let mut gone = Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    let stale = d.path().join(format!("wf-spill-{pid}-abcdef"));
    std::fs::create_dir_all(stale.join(".tmpXYZ")).unwrap();
    std::fs::write(stale.join(".tmpXYZ/spill.arrow"), b"x").unwrap();
    let mine = d
        .path()
        .join(format!("wf-spill-{}-abcdef", std::process::id()));
    std::fs::create_dir(&mine).unwrap();
    let mut c = sql(&["SELECT count(*) FROM logs", "--temp-dir"]);
    c.arg(d.path()).arg(&input);
    ok(c);
    assert!(!stale.exists(), "a dead process's spill directory is left");
    assert!(
        mine.exists(),
        "a live process's spill directory was removed"
    );
}

// -------------------------------------------------------------- item 13: read-only

#[test]
fn queries_are_read_only_unless_allowed() {
    let d = tempfile::tempdir().unwrap();
    let input = small_csv(d.path(), 10);
    let copied = d.path().join("copied.csv");
    let copy = format!("COPY (SELECT a, g FROM logs) TO '{}'", copied.display());
    let create = format!(
        "CREATE EXTERNAL TABLE t STORED AS CSV LOCATION '{}'",
        input.display()
    );
    for q in [&copy, &create] {
        let mut c = sql(&[q]);
        c.arg(&input);
        let o = run(c, None);
        assert_eq!(o.status.code(), Some(2), "{q}: {}", stderr_of(&o));
        assert!(stderr_of(&o).contains("read-only"), "{}", stderr_of(&o));
        assert!(!copied.exists());
    }
    for q in [&copy, &create] {
        let mut c = sql(&[q, "--allow-write"]);
        c.arg(&input);
        ok(c);
    }
    assert_eq!(
        std::fs::read_to_string(&copied).unwrap(),
        std::fs::read_to_string(&input).unwrap()
    );
}

// ------------------------------------------------------------ item 4: integer sums

/// DuckDB's answer as CSV lines (no header) for `q` over the CSV file as `logs`.
fn duckdb_csv(py: &str, csv: &Path, q: &str) -> String {
    let o = duckdb_output(py, csv, q);
    assert!(o.status.success(), "duckdb: {}", stderr_of(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// DuckDB run on `q` over the CSV file as `logs` ([`duckdb_csv`]'s process).
fn duckdb_output(py: &str, csv: &Path, q: &str) -> std::process::Output {
    let script = "import sys, duckdb\n\
        con = duckdb.connect()\n\
        path = sys.argv[1].replace(\"'\", \"''\")\n\
        con.execute(f\"CREATE VIEW logs AS SELECT * FROM read_csv('{path}')\")\n\
        for r in con.execute(sys.argv[2]).fetchall():\n    print(','.join(str(v) for v in r))\n";
    Command::new(py)
        .args(["-c", script])
        .arg(csv)
        .arg(q)
        .output()
        .unwrap()
}

/// DuckDB's answer to `q` (which reads its files itself), a row a line.
fn duckdb_rows(py: &str, q: &str) -> String {
    let script = "import sys, duckdb\n\
        for r in duckdb.connect().execute(sys.argv[1]).fetchall():\n    print(','.join(str(v) for v in r))\n";
    let o = Command::new(py).args(["-c", script, q]).output().unwrap();
    assert!(o.status.success(), "duckdb: {}", stderr_of(&o));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn integer_sums_do_not_wrap() {
    let d = tempfile::tempdir().unwrap();
    let max = i64::MAX;
    let min = i64::MIN;
    let csv = write(
        &d.path().join("edge.csv"),
        &format!("a,g,u\n{max},1,1\n{max},1,2\n{min},2,3\n{min},2,4\n7,3,5\n"),
    );
    let queries = [
        "SELECT sum(a) AS s FROM logs",
        "SELECT g, sum(a) AS s FROM logs GROUP BY g ORDER BY g",
        "SELECT u, sum(a) OVER (ORDER BY u) AS s FROM logs ORDER BY u",
        "SELECT sum(DISTINCT a) AS s FROM logs",
    ];
    let expected = [
        "5\n".to_string(),
        format!("1,{}\n2,{}\n3,7\n", 2 * max as i128, 2 * min as i128),
        format!(
            "1,{max}\n2,{}\n3,{}\n4,{}\n5,5\n",
            2 * max as i128,
            2 * max as i128 + min as i128,
            2 * max as i128 + 2 * min as i128
        ),
        format!("{}\n", max as i128 + min as i128 + 7),
    ];
    let duck = duckdb_python();
    for (q, want) in queries.iter().zip(&expected) {
        for j in ["1", "3"] {
            let mut c = sql(&[q, "--csv", "-j", j, "--chunk-size", "7"]);
            c.arg(&csv);
            let out = ok(c);
            let body = out.split_once('\n').unwrap().1;
            assert_eq!(body, want.as_str(), "{q} at -j {j}");
        }
        if let Some(py) = &duck {
            assert_eq!(duckdb_csv(py, &csv, q), *want, "DuckDB on {q}");
        }
    }
}

/// Integer `+`, `-` and `*` that overflow stop the query, naming the values,
/// as DuckDB's do (before: they wrapped, `x * y` of 9000000000000000000 and 2
/// was -446744073709551616, exit 0); in range the answers are DuckDB's.
#[test]
fn integer_arithmetic_that_overflows_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    let csv = write(
        &d.path().join("big.csv"),
        "x,y
9000000000000000000,2
-5,3
",
    );
    let duck = duckdb_python();
    for q in [
        "SELECT x * y FROM logs",
        "SELECT x + x FROM logs",
        "SELECT x - 9223372036854775807 FROM logs WHERE y = 3",
        "SELECT sum(x * y) FROM logs",
        "SELECT count(*) FROM logs WHERE x * y > 0",
    ] {
        for j in ["1", "3"] {
            let mut c = sql(&[q, "--csv", "-j", j]);
            c.arg(&csv);
            let o = run(c, None);
            let err = stderr_of(&o);
            assert_eq!(o.status.code(), Some(2), "{q} -j {j}: {err}");
            assert!(err.contains("overflow"), "{q} -j {j}: {err}");
        }
        if let Some(py) = &duck {
            let o = duckdb_output(py, &csv, q);
            assert!(!o.status.success(), "DuckDB answered {q}");
            assert!(stderr_of(&o).contains("Overflow"), "{}", stderr_of(&o));
        }
    }
    let q = "SELECT x - 1, y * 3, x + y FROM logs ORDER BY y";
    let want = "8999999999999999999,6,9000000000000000002\n-6,9,-2\n";
    answer_as_duckdb(duck.as_deref(), &csv, q, want);
}

/// The negation of the smallest integer stops the query, as DuckDB's does
/// (it wrapped to itself, exit 0). Sums of decimals of 38 digits are added
/// in 256 bits (they wrapped in 128: two such values summed to
/// -1402823669..., and 99999999999999999999999999999999999999 + 1 printed
/// 10^37): exact whatever the order of the rows or `-j` (DuckDB stops with
/// "Overflow in HUGEINT addition" on the way to 99...9 + 99...9 - 99...9),
/// and a total beyond 38 digits stops the query (DuckDB gives 10^38 as a
/// HUGEINT, and stops past 2^127). The type stays decimal(38,0).
#[test]
fn negation_and_wide_decimal_sums_do_not_wrap() {
    let d = tempfile::tempdir().unwrap();
    let duck = duckdb_python();
    let min = write(&d.path().join("min.csv"), "a\n-9223372036854775808\n5\n");
    let mut c = sql(&["SELECT -a FROM logs", "--csv"]);
    c.arg(&min);
    let o = run(c, None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr_of(&o));
    assert!(stderr_of(&o).contains("overflow"), "{}", stderr_of(&o));
    if let Some(py) = &duck {
        let o = duckdb_output(py, &min, "SELECT -a FROM logs");
        assert!(
            stderr_of(&o).contains("Overflow in negation"),
            "{}",
            stderr_of(&o)
        );
    }
    answer_as_duckdb(
        duck.as_deref(),
        &min,
        "SELECT -a FROM logs WHERE a > 0",
        "-5\n",
    );
    let nines = "9".repeat(38);
    let rows = format!("a,u\n{nines},1\n{nines},2\n-{nines},3\n");
    let three = write(&d.path().join("three.csv"), &rows);
    for (q, want) in [
        (
            "SELECT sum(a), arrow_typeof(sum(a)) FROM logs",
            format!("{nines},\"Decimal128(38, 0)\"\n"),
        ),
        (
            "SELECT 1 AS g, sum(a) FROM logs GROUP BY g",
            format!("1,{nines}\n"),
        ),
        (
            "SELECT DISTINCT sum(a) OVER () FROM logs",
            format!("{nines}\n"),
        ),
    ] {
        for j in ["1", "3"] {
            let mut c = sql(&[q, "--csv", "-j", j, "--chunk-size", "7"]);
            c.arg(&three);
            let out = ok(c);
            assert_eq!(out.split_once('\n').unwrap().1, want, "{q} -j {j}");
        }
    }
    for q in [
        "SELECT sum(a) FROM logs WHERE u < 3",
        "SELECT u, sum(a) OVER (ORDER BY u) FROM logs",
        "SELECT u = 3 AS g, sum(a) FROM logs GROUP BY g",
    ] {
        let mut c = sql(&[q, "--csv"]);
        c.arg(&three);
        let o = run(c, None);
        assert_eq!(o.status.code(), Some(2), "{q}: {}", stderr_of(&o));
        assert!(
            stderr_of(&o).contains("Overflow in sum"),
            "{}",
            stderr_of(&o)
        );
    }
}

/// A one-column `.csv` file is CSV, its header sniffed as DuckDB sniffs it
/// (before: `fields`, its header a row, `count(*)` one more, exit 0).
#[test]
fn one_column_csv_files_read_as_duckdb_reads_them() {
    let d = tempfile::tempdir().unwrap();
    let cases = [
        (
            "ids.csv",
            "n\n1\n2\n3\n",
            "SELECT count(*), sum(n) FROM logs",
            "3,6\n",
        ),
        (
            "words.csv",
            "a\nb\nc\n",
            "SELECT count(*), min(a) FROM logs",
            "2,b\n",
        ),
        ("nums.csv", "1\n2\n3\n", "SELECT count(*) FROM logs", "3\n"),
    ];
    let duck = duckdb_python();
    for (name, text, q, want) in cases {
        let csv = write(&d.path().join(name), text);
        answer_as_duckdb(duck.as_deref(), &csv, q, want);
    }
}

/// A CSV's first line is its header as DuckDB's sniffer decides: when a
/// value of it (not empty) is not of its column's type in the lines after
/// it. Before, a column of numbers under an empty header field (`a,,c` over
/// `1,2,3`) made the header a row: `count(*)` one more than DuckDB's, exit 0.
#[test]
fn csv_headers_are_found_as_duckdb_finds_them() {
    let d = tempfile::tempdir().unwrap();
    let duck = duckdb_python();
    for (i, (text, want)) in [
        ("a,,c\n1,2,3\n", "1\n"),
        ("id,2,name\n1,2,x\n", "1\n"),
        ("n,1.5\n2,2.5\n", "1\n"),
        (",,\n1,2,3\n", "1\n"),
        ("1,,3\n1,2,3\n", "2\n"),
        ("1,a\n2,b\n", "2\n"),
        ("1,x\n1.5,y\n", "2\n"),
        ("x,y\na,b\n", "1\n"),
    ]
    .into_iter()
    .enumerate()
    {
        let csv = write(&d.path().join(format!("h{i}.csv")), text);
        answer_as_duckdb(duck.as_deref(), &csv, "SELECT count(*) FROM logs", want);
    }
}

/// `wf sql --csv` of `q` over `csv` (its rows without the header) is `want`,
/// and so is DuckDB's when it is installed.
fn answer_as_duckdb(duck: Option<&str>, csv: &Path, q: &str, want: &str) {
    let mut c = sql(&[q, "--csv"]);
    c.arg(csv);
    let out = ok(c);
    assert_eq!(out.split_once('\n').unwrap().1, want, "{csv:?}: {q}");
    if let Some(py) = duck {
        assert_eq!(duckdb_csv(py, csv, q), want, "DuckDB on {csv:?}: {q}");
    }
}

/// CSV integers beyond 64 bits are exact (decimal(38,0); DuckDB: HUGEINT),
/// where they were read as floats: 9223372036854775809 was 9.223372036854776e18.
#[test]
fn csv_integers_beyond_64_bits_stay_exact() {
    let d = tempfile::tempdir().unwrap();
    let csv = write(
        &d.path().join("wide.csv"),
        "id,n\n9223372036854775809,1\n-99999999999999999999999999999999999999,2\n1,3\n",
    );
    let queries = [
        (
            "SELECT id FROM logs ORDER BY n",
            "9223372036854775809\n-99999999999999999999999999999999999999\n1\n",
        ),
        (
            "SELECT sum(id) FROM logs WHERE n <> 2",
            "9223372036854775810\n",
        ),
    ];
    let duck = duckdb_python();
    for (q, want) in queries {
        answer_as_duckdb(duck.as_deref(), &csv, q, want);
    }
}

/// Lines that are not rows are said on stderr however few (2 of 5 lines of
/// a TSV left every answer, exit 0, nothing said without --stats); so are
/// values read as NULL under --schema.
#[test]
fn a_few_lines_not_rows_are_said() {
    let d = tempfile::tempdir().unwrap();
    let csv = write(&d.path().join("r.csv"), "a,b\n1,2\n3,4,5\n6,7\n");
    let mut c = sql(&["SELECT count(*) FROM logs", "--csv", "--format", "csv"]);
    c.arg(&csv);
    let o = run(c, None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    assert!(String::from_utf8_lossy(&o.stdout).ends_with("\n2\n"));
    let said = "1 of 3 lines do not parse as csv and are not rows";
    assert!(stderr_of(&o).contains(said), "{}", stderr_of(&o));
    let csv = write(&d.path().join("n.csv"), "a,b\n1,x\n2,3\n4,5\n");
    let mut c = sql(&[
        "SELECT sum(b) FROM logs",
        "--csv",
        "--schema",
        "a:int,b:int",
    ]);
    c.arg(&csv);
    let o = run(c, None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    let said = "1 value in 3 rows is not of its column's type and is read as NULL";
    assert!(stderr_of(&o).contains(said), "{}", stderr_of(&o));
}

/// A TSV or CSV whose `"` is data, not quoting (`"Hello" she said`, `5" tall`,
/// `"open`: MySQL's and PostgreSQL's text exports) is read without quoting,
/// every line a row, as DuckDB's sniffer reads it; those lines were
/// malformed, 2 of 5 rows lost. A CSV whose quotes hold its delimiter keeps
/// them.
#[test]
fn quotes_that_are_data_are_read_as_data() {
    let d = tempfile::tempdir().unwrap();
    let tsv = write(
        &d.path().join("q.tsv"),
        "id\ttext\n1\t\"Hello\" she said\n2\tplain\n3\t5\" tall\n4\t\"open\n5\tlast\n",
    );
    let quoted = write(&d.path().join("k.csv"), "a,b\n1,\"x,y\"\n2,\"q\"\n");
    let duck = duckdb_python();
    for (file, q, want) in [
        (
            &tsv,
            "SELECT id, text FROM logs ORDER BY id",
            "1,\"Hello\" she said\n2,plain\n3,5\" tall\n4,\"open\n5,last\n",
        ),
        (&quoted, "SELECT a, b FROM logs ORDER BY a", "1,x,y\n2,q\n"),
    ] {
        let mut c = sql(&[q, "--json"]);
        c.arg(file);
        let out = ok(c);
        let rows: Vec<String> = out
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                let o = v.as_object().unwrap();
                let s = |x: &serde_json::Value| x.as_str().map_or(x.to_string(), str::to_string);
                o.values().map(s).collect::<Vec<_>>().join(",")
            })
            .collect();
        assert_eq!(rows.join("\n") + "\n", want, "{file:?}");
        if let Some(py) = &duck {
            assert_eq!(duckdb_csv(py, file, q), want, "DuckDB on {q}");
        }
    }
}

/// A JSON key first seen after the sample (an `err` only in failures) is
/// not a column: the answer of what is read stands (exit 0), and stderr
/// names the key, where `SELECT *` left it out unsaid. DuckDB stops there.
#[test]
fn json_keys_after_the_sample_are_said() {
    let d = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..3000 {
        match i {
            2500 => text.push_str(&format!("{{\"a\": {i}, \"err\": \"disk full\"}}\n")),
            _ => text.push_str(&format!("{{\"a\": {i}}}\n")),
        }
    }
    let input = write(&d.path().join("late.jsonl"), &text);
    for j in ["1", "2"] {
        let mut c = sql(&["SELECT count(*), sum(a) FROM logs", "--csv", "-j", j]);
        c.args(["--chunk-size", "4K"]).arg(&input);
        let o = run(c, None);
        assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
        assert!(String::from_utf8_lossy(&o.stdout).ends_with("3000,4498500\n"));
        let err = stderr_of(&o);
        assert!(
            err.contains("1 record has keys that are not its columns (err)"),
            "{err}"
        );
    }
    let mut c = sql(&["SELECT count(*) FROM logs", "--schema", "a:int,err:string"]);
    c.args(["--format", "jsonl"]).arg(&input);
    let o = run(c, None);
    assert!(
        !stderr_of(&o).contains("not its columns"),
        "{}",
        stderr_of(&o)
    );
}

// ----------------------------------------------------------- item 5: stdin twice

#[test]
fn standard_input_for_two_tables_is_refused() {
    // (Before: one table had both lines, the other none, exit 0.)
    let c = sql(&[
        "SELECT (SELECT count(*) FROM logs) AS l, (SELECT count(*) FROM u) AS n",
        "--format",
        "fields",
        "--table",
        "u=-",
        "-",
    ]);
    let o = run(c, Some(b"a b\n1 2\n"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr_of(&o));
    assert!(
        stderr_of(&o).contains("more than one table"),
        "{}",
        stderr_of(&o)
    );
}

// ------------------------------------------------------ item 10: the terminal table

#[test]
fn the_table_shows_max_rows_and_counts_the_rest() {
    let d = tempfile::tempdir().unwrap();
    let csv = small_csv(d.path(), 100);
    let data_lines = |s: &str| s.lines().filter(|l| l.starts_with("| ")).count() - 1;
    let mut c = sql(&["SELECT * FROM logs ORDER BY a"]);
    c.arg(&csv);
    let out = ok(c);
    assert_eq!(data_lines(&out), 40, "{out}");
    assert!(out.ends_with("100 rows, 40 shown (--max-rows 0 shows all, --csv prints all)\n"));
    assert!(out.contains("| 39 |") && !out.contains("| 40 |"), "{out}");
    let mut c = sql(&["SELECT * FROM logs", "--max-rows", "0"]);
    c.arg(&csv);
    let out = ok(c);
    assert_eq!(data_lines(&out), 100);
    assert!(out.ends_with("\n100 rows\n"), "{out}");
    let mut c = sql(&["SELECT * FROM logs", "--csv"]);
    c.arg(&csv);
    assert_eq!(ok(c).lines().count(), 101);
}

/// Run `cmd` with its stdout and stderr on a new pty, reading (and dropping)
/// what it prints; its peak RSS in bytes.
fn peak_rss_on_a_pty(mut cmd: Command) -> u64 {
    use std::io::Read;
    use std::os::fd::FromRawFd;
    let (mut master, mut slave) = (0, 0);
    let r = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(r, 0, "openpty");
    let (out, err) = unsafe {
        (
            Stdio::from_raw_fd(slave),
            Stdio::from_raw_fd(libc::dup(slave)),
        )
    };
    cmd.stdout(out).stderr(err).stdin(Stdio::null());
    // Reaped by wait4 below, for its rusage.
    #[allow(clippy::zombie_processes)]
    let child = cmd.spawn().unwrap();
    drop(cmd); // closes our copies of the slave
    let reader = std::thread::spawn(move || {
        let mut f = unsafe { std::fs::File::from_raw_fd(master) };
        let mut buf = vec![0u8; 1 << 16];
        // EIO once the last writer is gone.
        while matches!(f.read(&mut buf), Ok(n) if n > 0) {}
    });
    let mut status = 0;
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    assert_eq!(pid, child.id() as i32);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{status}"
    );
    reader.join().unwrap();
    ru.ru_maxrss as u64 * 1024
}

#[test]
fn select_star_to_a_terminal_holds_little() {
    // The peak of a table of every row grew with the input (32 bytes for each
    // byte of a 300 MB log); bounded, it is DataFusion's and the scan's buffers.
    let d = tempfile::tempdir().unwrap();
    let log = generated_log(d.path(), "40M", "0.001", 3);
    let mut c = sql(&["SELECT * FROM logs", "-j", "2"]);
    c.arg(&log);
    let peak = peak_rss_on_a_pty(c);
    assert!(peak < 250 << 20, "peak RSS {} MiB", peak >> 20);
}

// ------------------------------------------------------------- item 14: --strict

#[test]
fn strict_writes_nothing_when_it_fails() {
    let d = tempfile::tempdir().unwrap();
    let mut s = String::from("a,b\n");
    for i in 0..5000 {
        s.push_str(&format!("{i},x\n"));
    }
    s.push_str("1,2,3,4,5\n\"unterminated\n"); // malformed at the end
    let csv = write(&d.path().join("bad.csv"), &s);
    for fmt in [&["--csv"][..], &["--json"], &[]] {
        let mut c = sql(&["SELECT * FROM logs", "--strict", "--format", "csv"]);
        c.args(fmt).arg(&csv);
        let o = run(c, None);
        assert_eq!(o.status.code(), Some(2), "{}", stderr_of(&o));
        assert!(
            o.stdout.is_empty(),
            "{fmt:?} printed {} bytes",
            o.stdout.len()
        );
        assert!(stderr_of(&o).contains("bad.csv"), "{}", stderr_of(&o));
    }
    let target = write(&d.path().join("out.csv"), "old\n");
    let mut c = sql(&["SELECT * FROM logs", "--strict", "--format", "csv", "-o"]);
    c.arg(&target).arg(&csv);
    let o = run(c, None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr_of(&o));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "old\n");
    assert_eq!(names(d.path()), ["bad.csv", "out.csv"]);
    // Clean input under --strict: everything printed.
    let clean = small_csv(d.path(), 3000);
    let mut c = sql(&["SELECT * FROM logs", "--strict", "--csv"]);
    c.arg(&clean);
    assert_eq!(ok(c).lines().count(), 3001);
}

// ------------------------------------------------- item 11: --memory at -j 2 spills

#[test]
fn memory_bounded_sort_spills_at_two_threads() {
    // 60 MB of log sorts in far more than 200M as Arrow rows: it must spill.
    let d = tempfile::tempdir().unwrap();
    let log = generated_log(d.path(), "60M", "0", 5);
    let spill = d.path().join("spill");
    std::fs::create_dir(&spill).unwrap();
    let q = "SELECT * FROM logs ORDER BY path, client";
    let mut c = sql(&[q, "--memory", "200M", "-j", "2", "--json"]);
    c.arg(&log).arg("--temp-dir").arg(&spill);
    let out = ok(c);
    let key = |l: &str| {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        (
            v["path"].as_str().map(String::from),
            v["client"].as_str().map(String::from),
        )
    };
    let keys: Vec<_> = out.lines().map(key).collect();
    let mut c = sql(&["SELECT count(*) AS n FROM logs", "--csv"]);
    c.arg(&log);
    let n: usize = ok(c).lines().nth(1).unwrap().parse().unwrap();
    assert_eq!(keys.len(), n);
    assert!(keys.windows(2).all(|w| w[0] <= w[1]), "not sorted");
    assert_eq!(names(&spill), Vec::<String>::new());
}

// ------------------------------------------- item 12: LIMIT over an open stream

/// `n` lines of the `fields` format: `i x{i}`.
fn numbered(n: usize) -> String {
    (0..n).map(|i| format!("{i} x{i}\n")).collect()
}

/// A FIFO `name` in `dir`, opened to read and write: it has a writer at once,
/// kept until the returned file is dropped.
fn open_fifo(dir: &std::path::Path, name: &str) -> (std::path::PathBuf, std::fs::File) {
    use std::os::unix::ffi::OsStrExt;
    let fifo = dir.join(name);
    let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let w = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    (fifo, w)
}

/// The child's output once it exits; killed and failed if it still runs after
/// 20 s (a guard against a hang, not a measure of speed: before the fix the
/// query waited for the stream's end, which never came).
fn output_within_20s(mut child: std::process::Child, what: &str) -> std::process::Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            panic!("{what}: still running after 20 s, killed; stderr: {err}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Three rows of a LIMIT 3 query: exit 0, a header and three of the lines.
fn assert_three_rows(o: &std::process::Output, sent: &str, what: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{what}: {err}");
    let out = String::from_utf8_lossy(&o.stdout);
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(rows.len(), 3, "{what}: {out}");
    for r in rows {
        assert!(
            sent.contains(&format!("{}\n", r.replace(',', " "))),
            "{what}: {r}"
        );
    }
}

/// `LIMIT 3` over a FIFO whose writer wrote ten lines and never closes it
/// returns those rows (issue 36 item 12): the stream is read as it comes, and
/// the scan stops once the query has its rows.
#[test]
fn limit_over_a_fifo_that_stays_open_returns() {
    use std::io::Write;
    let t = tempfile::tempdir().unwrap();
    let (fifo, mut w) = open_fifo(t.path(), "live");
    let sent = numbered(10);
    w.write_all(sent.as_bytes()).unwrap();
    let q = "SELECT c1, c2 FROM logs LIMIT 3";
    let child = sql(&["--format", "fields", "--csv", "--no-progress", q])
        .arg(&fifo)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = output_within_20s(child, "LIMIT 3 over an open FIFO");
    assert_three_rows(&o, &sent, "FIFO");
    drop(w);
}

/// The same for CSV whose quoted fields hold line breaks (its streams were
/// copied whole first, so that their records could be cut quote-aware: the
/// query waited for an end that never came). The rows are the file's, line
/// breaks in quotes kept.
#[test]
fn limit_over_a_csv_fifo_that_stays_open_returns() {
    use std::io::Write;
    let t = tempfile::tempdir().unwrap();
    let (fifo, mut w) = open_fifo(t.path(), "live.csv");
    let sent = "id,note\n1,\"a\nb\"\n2,plain\n3,\"c,\nd\n\"\n4,e\n";
    w.write_all(sent.as_bytes()).unwrap();
    let q = "SELECT id, note FROM logs LIMIT 3";
    let child = sql(&["--format", "csv", "--json", "--no-progress", q])
        .arg(&fifo)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = output_within_20s(child, "LIMIT 3 over an open CSV FIFO");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    let rows = [
        r#"{"id":1,"note":"a\nb"}"#,
        r#"{"id":2,"note":"plain"}"#,
        r#"{"id":3,"note":"c,\nd\n"}"#,
        r#"{"id":4,"note":"e"}"#,
    ];
    let got: Vec<&str> = out.lines().collect();
    assert_eq!(got.len(), 3, "{out}");
    assert!(got.iter().all(|r| rows.contains(r)), "{out}");
    drop(w);
}

/// The same through standard input, a pipe the test keeps open; `--stats`
/// then says the counts are of what was read.
#[test]
fn limit_over_stdin_that_stays_open_returns() {
    use std::io::Write;
    let q = "SELECT c1, c2 FROM logs LIMIT 3";
    let mut child = sql(&[
        "--format",
        "fields",
        "--csv",
        "--stats",
        "--no-progress",
        q,
        "-",
    ])
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let sent = numbered(10);
    stdin.write_all(sent.as_bytes()).unwrap();
    let o = output_within_20s(child, "LIMIT 3 over an open stdin");
    assert_three_rows(&o, &sent, "stdin");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("stopped the scan early"), "{err}");
    drop(stdin);
}

/// A query that cannot run in `--memory` says so and what would do (a sort
/// reserves 10 MB per thread for its merge, which cannot spill): exit 2.
#[test]
fn too_little_memory_says_what_would_do() {
    let d = tempfile::tempdir().unwrap();
    let csv = small_csv(d.path(), 20_000);
    let q = "SELECT * FROM logs ORDER BY g, a";
    let mut c = sql(&[q, "--memory", "1M", "-j", "2", "--csv", "--no-progress"]);
    c.arg(&csv);
    let o = run(c, None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("Resources exhausted"), "{err}");
    assert!(
        err.contains("--memory 1M at -j 2 is less than this query needs"),
        "{err}"
    );
}

/// A column with no value in the first 1000 records is typed by more of
/// the sample (DuckDB's 20,480 records), and a first file of a header only
/// types nothing: both made the column text, so `max` of 5 and 40 was 5 and
/// of 3, 100 and 25 was 3, exit 0 (DuckDB: 40 and 100).
#[test]
fn columns_without_a_value_in_the_first_records_are_typed_by_later_ones() {
    let d = tempfile::tempdir().unwrap();
    let duck = duckdb_python();
    let empty: String = (0..1500).map(|i| format!("{i},\n")).collect();
    let csv = write(
        &d.path().join("s.csv"),
        &format!("id,x\n{empty}1,5\n2,40\n"),
    );
    answer_as_duckdb(duck.as_deref(), &csv, "SELECT max(x) FROM logs", "40\n");
    let q = "SELECT x FROM logs WHERE x IS NOT NULL ORDER BY x DESC";
    answer_as_duckdb(duck.as_deref(), &csv, q, "40\n5\n");
    let nulls: String = (0..1500)
        .map(|i| format!("{{\"id\":{i},\"x\":null}}\n"))
        .collect();
    let json = write(
        &d.path().join("s.jsonl"),
        &format!("{nulls}{{\"id\":1,\"x\":5}}\n{{\"id\":2,\"x\":40}}\n"),
    );
    let mut c = sql(&["SELECT max(x) FROM logs", "--csv"]);
    c.arg(&json);
    assert_eq!(ok(c), "max(logs.x)\n40\n");
    let dir = d.path().join("days");
    std::fs::create_dir(&dir).unwrap();
    write(&dir.join("2026-01-01.csv"), "a,b\n");
    write(&dir.join("2026-01-02.csv"), "a,b\n3,x\n100,y\n25,z\n");
    let mut c = sql(&["SELECT max(a) FROM logs", "--csv"]);
    c.arg(&dir);
    assert_eq!(ok(c), "max(logs.a)\n100\n");
    if let Some(py) = duck.as_deref() {
        let glob = dir.join("*.csv");
        assert_eq!(duckdb_csv(py, &glob, "SELECT max(a) FROM logs"), "100\n");
    }
}

/// A file whose lines end in `\r` alone (classic Mac OS) was one line: a
/// CSV of a header and two rows gave `count(*)` 0, exit 0 (DuckDB: 2). It
/// is now an error naming the file and the way to convert it.
#[test]
fn lines_ended_by_a_carriage_return_alone_are_an_error() {
    let d = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("cr.csv", "a,b\r1,2\r3,4\r"),
        ("cr.jsonl", "{\"a\":1}\r{\"a\":2}\r"),
    ] {
        let p = write(&d.path().join(name), text);
        let mut c = sql(&["SELECT count(*) FROM logs", "--csv"]);
        c.arg(&p);
        let o = run(c, None);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr_of(&o));
        assert!(
            stderr_of(&o).contains("carriage return alone"),
            "{}",
            stderr_of(&o)
        );
    }
    // A CR before a LF, or at the very end of a one-line file, is not that.
    let p = write(&d.path().join("crlf.csv"), "a,b\r\n1,2\r\n");
    let mut c = sql(&["SELECT count(*) FROM logs", "--csv"]);
    c.arg(&p);
    assert_eq!(ok(c), "count(*)\n1\n");
}

/// `_file` is the path itself, and a format is known by the path's own
/// extension: a file named `new<newline>line.csv` had `_file`
/// `"…/new\nline.csv"` (quotes and a backslash, the form messages show)
/// and was read as `fields`, its header a row.
#[test]
fn file_column_of_a_path_with_a_newline_is_the_path() {
    let d = tempfile::tempdir().unwrap();
    let p = write(&d.path().join("new\nline.csv"), "a\n1\n2\n");
    let mut c = sql(&[
        "SELECT _file AS f, sum(a) AS s FROM logs GROUP BY f",
        "--json",
    ]);
    c.arg(&p);
    let out = ok(c);
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(v["f"], p.to_str().unwrap(), "{out}");
    assert_eq!(v["s"], 3, "{out}");
    // Messages still show it escaped (a newline in a name would cut them).
    let bad = write(&d.path().join("bad\nx.csv"), "a\n1\nx\n");
    let mut c = sql(&["SELECT sum(a) FROM logs", "--schema", "a:int", "--strict"]);
    c.arg(&bad);
    let o = run(c, None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr_of(&o));
    assert!(
        stderr_of(&o).contains(&format!("{bad:?}")),
        "{}",
        stderr_of(&o)
    );
    // stdin, spooled to be read twice, is `<stdin>`, not /proc/self/fd/N.
    let q = "SELECT DISTINCT _file FROM (SELECT _file FROM logs UNION ALL SELECT _file FROM logs)";
    let c = sql(&[q, "--csv", "--format", "csv"]);
    assert_eq!(ok_bytes(c, Some(b"a\n1\n")), b"_file\n<stdin>\n");
}

/// A blank line of a CSV file of one column is a row whose value is NULL,
/// as DuckDB reads it (it was skipped: `count(*)` 2 where DuckDB gives 3);
/// in a file of more columns a blank line is still no row, as in DuckDB.
#[test]
fn a_blank_line_of_a_one_column_csv_is_a_null_row() {
    let d = tempfile::tempdir().unwrap();
    let duck = duckdb_python();
    let q = "SELECT count(*), count(x) FROM logs";
    for (name, text, want) in [
        ("mid.csv", "x\n1\n\n3\n", "3,2\n"),
        ("ends.csv", "x\n1\n\n\n", "3,1\n"),
        ("lead.csv", "x\n\n1\n", "2,1\n"),
        ("crlf.csv", "x\r\n1\r\n\r\n3\r\n", "3,2\n"),
        ("two.csv", "x,y\n1,2\n\n3,4\n", "2,2\n"),
    ] {
        let csv = write(&d.path().join(name), text);
        answer_as_duckdb(duck.as_deref(), &csv, q, want);
    }
    // Blank lines before the first record are no rows (DuckDB, header=false:
    // 3,2), however many chunks they fill.
    let csv = write(&d.path().join("nohead.csv"), "\n1\n\n3\n");
    let long = write(
        &d.path().join("long.csv"),
        &format!("{}1\n\n3\n", "\n".repeat(300)),
    );
    let q = "SELECT count(*), count(c1) FROM logs";
    for (p, more) in [
        (&csv, &[][..]),
        (&long, &["-j", "2", "--chunk-size", "16"][..]),
    ] {
        let mut c = sql(&[q, "--csv", "--format", "csv", "--no-header"]);
        c.args(more).arg(p);
        assert_eq!(ok(c), "count(*),count(logs.c1)\n3,2\n", "{p:?} {more:?}");
    }
}

/// Only a first file of a header alone lends a later file's types: one
/// with rows whose values come past its sample keeps the column text, as
/// DuckDB (which sniffs the first file) does; typed by the second file, the
/// query stopped at the first file's later "abc" (exit 2). And every CSV
/// file's sample is checked for lines ended by `\r` alone.
#[test]
fn a_later_file_types_only_after_a_first_of_a_header_alone() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("m");
    std::fs::create_dir(&dir).unwrap();
    let empty = ",x\n".repeat(30_000);
    write(&dir.join("f1.csv"), &format!("a,b\n{empty}abc,x\n"));
    write(&dir.join("f2.csv"), "a,b\n3,y\n100,z\n");
    let mut c = sql(&["SELECT max(a), count(*) FROM logs", "--csv"]);
    c.arg(&dir);
    assert_eq!(ok(c), "max(logs.a),count(*)\nabc,30003\n");
    let unix = write(&d.path().join("unix.csv"), "a,b\n5,6\n");
    let mac = write(&d.path().join("mac.csv"), "a,b\r1,2\r3,4\r");
    let mut c = sql(&["SELECT count(*) FROM logs", "--csv"]);
    c.arg(&unix).arg(&mac);
    let o = run(c, None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr_of(&o));
    assert!(stderr_of(&o).contains("mac.csv: its lines end in a carriage return"));
}

/// A column with no value in the first 1000 rows is typed by up to 20,480
/// lines of the file (the header among them, as DuckDB counts), however
/// many bytes they are: a sample of 256 KiB left a column empty for 5,000
/// rows of 100 bytes text (max 98 of 70..133). If those lines are the whole
/// first file, a later file's values type it (CSV and JSON lines, as
/// DuckDB; max was 9 of 9 and 100); if not, it stays text, as in DuckDB.
#[test]
fn a_column_empty_at_first_is_typed_as_duckdb_types_it() {
    let d = tempfile::tempdir().unwrap();
    let duck = duckdb_python();
    let rows = |n: usize, tail: &str| -> String {
        let empty: String = (0..n).map(|i| format!("{i},\n")).collect();
        format!("id,v\n{empty}{tail}")
    };
    let pad = "x".repeat(100);
    let mut late = "id,pad,v\n".to_string();
    late.extend((0..5000).map(|i| format!("{i},{pad},\n")));
    late.extend((0..10).map(|i| format!("{i},{pad},{}\n", 70 + 7 * i)));
    let gz = gzip(late.as_bytes());
    let late = write(&d.path().join("late.csv"), &late);
    let q = "SELECT max(v), min(v) FROM logs";
    answer_as_duckdb(duck.as_deref(), &late, q, "133,70\n");
    // Gzipped, and from stdin: sampled as far.
    let late_gz = d.path().join("late.csv.gz");
    std::fs::write(&late_gz, &gz).unwrap();
    let mut c = sql(&[q, "--csv"]);
    c.arg(&late_gz);
    assert_eq!(ok(c), "max(logs.v),min(logs.v)\n133,70\n");
    let c = sql(&[q, "--csv", "--format", "csv"]);
    let piped = ok_bytes(c, Some(&std::fs::read(&late).unwrap()));
    assert_eq!(piped, b"max(logs.v),min(logs.v)\n133,70\n");
    // 10 on data line 20,479 is sampled: a number; on 20,480 it is not.
    let q = "SELECT max(v) FROM logs";
    let inside = write(&d.path().join("in.csv"), &rows(20_477, "a,10\nb,7\n"));
    answer_as_duckdb(duck.as_deref(), &inside, q, "10\n");
    let outside = write(&d.path().join("out.csv"), &rows(20_479, "a,10\nb,7\n"));
    answer_as_duckdb(duck.as_deref(), &outside, q, "7\n");
    // Several files: the first whole (two rows), or not (30,000 rows of
    // 200 KB, sampled whole by bytes but not by lines).
    for (first, want) in [(rows(2, ""), "100\n"), (rows(30_000, ""), "9\n")] {
        let dir = tempfile::tempdir_in(d.path()).unwrap();
        write(&dir.path().join("1.csv"), &first);
        write(&dir.path().join("2.csv"), "id,v\n3,9\n4,100\n");
        let mut c = sql(&[q, "--csv"]);
        c.arg(dir.path());
        assert_eq!(ok(c), format!("max(logs.v)\n{want}"), "{:?}", &first[..20]);
        if let Some(py) = duck.as_deref() {
            let glob = dir.path().join("*.csv");
            let dq = format!("SELECT max(v) FROM read_csv('{}')", glob.display());
            assert_eq!(duckdb_rows(py, &dq), want, "DuckDB: {dq}");
        }
    }
    // A gzipped first file of a header alone lends a later file's types.
    let dir = tempfile::tempdir_in(d.path()).unwrap();
    std::fs::write(dir.path().join("1.csv.gz"), gzip(b"id,v\n")).unwrap();
    write(&dir.path().join("2.csv"), "id,v\n3,9\n4,100\n");
    let mut c = sql(&[q, "--csv"]);
    c.arg(dir.path());
    assert_eq!(ok(c), "max(logs.v)\n100\n");
    // JSON lines: a key of nulls, or none, in the first file.
    for first in ["{\"id\":1,\"v\":null}\n", "{\"id\":1}\n"] {
        let dir = tempfile::tempdir_in(d.path()).unwrap();
        write(&dir.path().join("1.jsonl"), first);
        write(
            &dir.path().join("2.jsonl"),
            "{\"id\":3,\"v\":9}\n{\"id\":4,\"v\":100}\n",
        );
        let mut c = sql(&[q, "--csv"]);
        c.arg(dir.path());
        assert_eq!(ok(c), "max(logs.v)\n100\n", "{first}");
        if let Some(py) = duck.as_deref() {
            let glob = dir.path().join("*.jsonl");
            let dq = format!("SELECT max(v) FROM read_json('{}')", glob.display());
            assert_eq!(duckdb_rows(py, &dq), "100\n", "DuckDB: {dq}");
        }
    }
}

/// Numbers with spaces or tabs around them, and `NaN`, `inf`, `Infinity`
/// in a column of floats, are numbers, as DuckDB reads them: they made the
/// column text (`max` ' 9' of 9, 10 and 100; `min` 10.25 of 9.5, NaN and
/// 10.25). Text keeps its spaces, and a value of spaces alone is text.
#[test]
fn numbers_with_spaces_and_nan_are_numbers() {
    let d = tempfile::tempdir().unwrap();
    let duck = duckdb_python();
    for (name, text, q, want) in [
        (
            "sp.csv",
            "id,v\n1, 9\n2,\t10 \n3, 100\n",
            "SELECT max(v), sum(v) FROM logs",
            "100,119\n",
        ),
        (
            "quoted.csv",
            "x,y\n\" 5\",a \n6,\tb\n",
            "SELECT sum(x), max(y) FROM logs",
            "11,a \n",
        ),
        (
            "float.csv",
            "id,x\n1, 1.5\n2,2.25\n",
            "SELECT sum(x) FROM logs",
            "3.75\n",
        ),
        (
            "blank.csv",
            "x\n1\n  \n2\n",
            "SELECT max(x), count(*) FROM logs",
            "2,3\n",
        ),
        ("inner.csv", "x\n1 2\n3\n", "SELECT max(x) FROM logs", "3\n"),
        (
            "nan.csv",
            "x\n9.5\nNaN\n10.25\nnan\n",
            "SELECT min(x), sum(CASE WHEN isnan(x) THEN 1 ELSE 0 END) FROM logs",
            "9.5,2\n",
        ),
        (
            "inf.csv",
            "x\n1\ninf\n-Infinity\n2\n",
            "SELECT count(*) FILTER (WHERE x > 1e308), count(*) FILTER (WHERE x < -1e308), \
             max(x) FILTER (WHERE x < 100) FROM logs",
            "1,1,2.0\n",
        ),
    ] {
        let csv = write(&d.path().join(name), text);
        answer_as_duckdb(duck.as_deref(), &csv, q, want);
    }
    // DuckDB 2.0 reads a float with spaces after it as text (`2.25 `), an
    // integer with them as a number (`2 `); here both are numbers.
    let csv = write(&d.path().join("after.csv"), "id,x\n1, 1.5\n2,2.25 \n");
    answer_as_duckdb(None, &csv, "SELECT sum(x) FROM logs", "3.75\n");
}

/// `data` gzipped.
fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}
