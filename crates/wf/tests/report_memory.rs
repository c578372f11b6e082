//! `wf report --memory`: counts spilled to disk give the same report as
//! counts kept in memory, at every thread count and chunk size, and the
//! spill files are gone afterwards.
//!
//! The log has many distinct clients (IPv4, IPv6, host names) over several
//! days, statuses with and without a bit of their own (299, 404), static
//! files, referrers and bots, so that every panel's rows are split across
//! the spill's partitions and added up again.

mod common;

use std::fmt::Write as _;
use std::path::Path;

use common::{generated_log, names, run, wf};
use serde_json::Value;

/// A log of `n` lines whose clients are mostly distinct (two lines each).
fn many_clients(n: usize) -> String {
    let agents = [
        "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0",
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "curl/8.5.0",
    ];
    let statuses = [200, 299, 404, 304, 500, 301, 200];
    let mut s = String::new();
    for i in 0..n {
        let c = i / 2;
        let client = match c % 3 {
            0 => format!("10.{}.{}.{}", c >> 16 & 255, c >> 8 & 255, c & 255),
            1 => format!("2001:db8::{c:x}"),
            _ => format!("host{c}.example.org"),
        };
        let url = match i % 5 {
            0 => format!("/img/{}.png", i % 301),
            _ => format!("/p/{}?q={}", i % 997, i % 7),
        };
        writeln!(
            s,
            "{client} - - [{:02}/Jun/2007:{:02}:{:02}:00 -0700] \"GET {url} HTTP/1.1\" {} {} \"http://r{}.org/x\" \"{}\"",
            17 + i % 4,
            i % 24,
            i % 60,
            statuses[i % statuses.len()],
            i % 5000,
            i % 53,
            agents[i % agents.len()],
        )
        .unwrap();
    }
    s
}

/// `wf report --json` with `args`, TMPDIR `tmp`; the JSON (without the
/// log's path) and stderr.
fn report(args: &[&str], log: &Path, tmp: &Path) -> (Value, String) {
    let mut c = wf();
    c.env("TMPDIR", tmp)
        .args(["report", "--json", "--stats"])
        .args(args)
        .arg(log);
    let o = run(c, None);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{args:?}: {err}");
    let mut j: Value = serde_json::from_slice(&o.stdout).expect("report JSON");
    j["general"]["log_path"] = Value::Null;
    (j, err)
}

#[test]
fn tiny_memory_spills_and_gives_the_same_report() {
    let d = tempfile::tempdir().unwrap();
    let log = generated_log(d.path(), "1M", "0.05", 5);
    let mut data = std::fs::read(&log).unwrap();
    data.extend_from_slice(many_clients(12_000).as_bytes());
    std::fs::write(&log, data).unwrap();
    let tmp = d.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // Every row, then the top 7 of each panel (hosts, requests and
    // referrers are cut to their top rows a partition at a time).
    for (max, runs) in [
        (
            "100000",
            &[
                &["-j", "1", "--memory", "64K"][..],
                &["-j", "3", "--memory", "100K", "--chunk-size", "4K"],
            ][..],
        ),
        (
            "7",
            &[&["-j", "2", "--memory", "1M", "--chunk-size", "64K"]],
        ),
    ] {
        let rows = ["--max-rows", max];
        let (want, err) = report(&[&rows[..], &["-j", "1"]].concat(), &log, &tmp);
        assert!(
            !err.contains("spilled"),
            "spilled at the default --memory: {err}"
        );
        for args in runs {
            let (got, err) = report(&[&rows[..], args].concat(), &log, &tmp);
            assert!(err.contains("spilled to disk"), "{args:?}: no spill: {err}");
            assert!(
                got == want,
                "{args:?} --max-rows {max}: not the same report"
            );
        }
    }
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    assert!(left.is_empty(), "spill files left: {left:?}");
}

#[test]
fn memory_is_refused_with_state() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("a.log");
    std::fs::write(&log, many_clients(10)).unwrap();
    let mut c = wf();
    c.args(["report", "--json", "--memory", "1M", "--state"])
        .arg(d.path().join("s.wfps"))
        .arg(&log);
    let o = run(c, None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("--memory cannot be used with --state"),
        "{err}"
    );
}

/// SIGTERM or SIGINT while a report spills (its input a pipe kept open, so
/// the run is caught mid-way): wf dies of the signal and its spill directory
/// is gone; a spill directory left by a dead wf is removed by the next spill.
#[test]
fn a_signal_removes_the_spill_directory() {
    use std::io::Write;
    use std::process::Stdio;
    let d = tempfile::tempdir().unwrap();
    let tmp = d.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // pid 2^22 + 1 is above Linux's pid_max: never alive.
    let stale = tmp.join(format!("wf-spill-{}-left", (1 << 22) + 1));
    std::fs::create_dir(&stale).unwrap();
    let lines = many_clients(4_000);
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let mut c = wf();
        c.env("TMPDIR", &tmp)
            .args(["report", "--json", "-j", "1", "--memory", "64K", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let spill = |tmp: &Path| {
            std::fs::read_dir(tmp)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .find(|p| p != &stale && p.is_dir())
        };
        let t = std::time::Instant::now();
        let dir = loop {
            stdin.write_all(lines.as_bytes()).unwrap();
            if let Some(p) = spill(&tmp) {
                break p;
            }
            assert!(t.elapsed().as_secs() < 60, "no spill directory");
        };
        assert!(!stale.exists(), "the dead wf's spill directory is kept");
        unsafe { libc::kill(child.id() as i32, sig) };
        let status = child.wait().unwrap();
        drop(stdin);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(sig), "{status:?}");
        assert!(!dir.exists(), "{} left after signal {sig}", dir.display());
    }
}

/// A log of `n` lines whose user agents are mostly distinct (a fifth are
/// three common ones: a browser, another, a bot).
fn many_agents(n: usize) -> String {
    let common = [
        "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0",
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15",
    ];
    let mut s = String::new();
    for i in 0..n {
        let c = i % 701;
        let ua = match i % 5 {
            0 => common[i % 3].to_string(),
            1 => format!("Mozilla/5.0 (compatible; Bot{i}/1.0; +http://b{i}.example/)"),
            _ => format!(
                "Mozilla/5.0 (Windows NT 10.0) Chrome/{}.0.{i}.0 Safari/537.36",
                100 + i % 30
            ),
        };
        writeln!(
            s,
            "10.0.{}.{} - - [{:02}/Jun/2007:{:02}:00:00 -0700] \"GET /p/{} HTTP/1.1\" {} {} \"-\" \"{ua}\"",
            c >> 8,
            c & 255,
            17 + i % 3,
            i % 24,
            i % 97,
            [200, 404, 304][i % 3],
            i % 5000,
        )
        .unwrap();
    }
    s
}

#[test]
fn many_distinct_agents_spilled_give_the_same_report() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("agents.log");
    std::fs::write(&log, many_agents(20_000)).unwrap();
    let tmp = d.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let rows = ["--max-rows", "100000"];
    let (want, err) = report(&[&rows[..], &["-j", "1"]].concat(), &log, &tmp);
    assert!(!err.contains("spilled"), "spilled at the default: {err}");
    for args in [
        &["-j", "1", "--memory", "64K"][..],
        &["-j", "2", "--memory", "200K", "--chunk-size", "16K"],
        &["-j", "2", "--memory", "200K", "--bots", "exclude"],
    ] {
        let (got, err) = report(&[&rows[..], args].concat(), &log, &tmp);
        assert!(err.contains("spilled to disk"), "{args:?}: no spill: {err}");
        if args.contains(&"--bots") {
            let (w, _) = report(&[&rows[..], &["--bots", "exclude"]].concat(), &log, &tmp);
            assert!(got == w, "{args:?}: not the same report");
        } else {
            assert!(got == want, "{args:?}: not the same report");
        }
    }
    assert_eq!(names(&tmp), Vec::<String>::new(), "spill files left");
}
