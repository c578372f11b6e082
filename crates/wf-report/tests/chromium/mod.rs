//! Headless Chromium (Debian's `chromium`) for the tests of the HTML page,
//! shared by wf-report's `tests/page.rs` and the `wf` crate's
//! `tests/report.rs` (there through `#[path]`): the DOM after the page's
//! scripts ran, its console messages, and a screenshot to look at.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The browser on `PATH`, if any (the tests skip without one).
pub fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
        .find(|p| p.is_file())
}

/// What headless Chromium made of a page: the DOM after its scripts ran,
/// and the page's console messages (errors, and the refusals of its
/// Content-Security-Policy, which would name any request it tried).
pub struct Loaded {
    pub dom: String,
    pub console: Vec<String>,
}

/// Loads `page` (a file) with `extra` arguments (`--dump-dom`,
/// `--screenshot=...`), a profile of its own, and a time budget for the
/// page's scripts; fails the test after 120 s.
fn run(chromium: &Path, page: &Path, extra: &[String]) -> Loaded {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args([
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
        ])
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    // Read while it runs: the DOM (uPlot's source included) overflows a pipe.
    let out = reader(child.stdout.take().unwrap());
    let err = reader(child.stderr.take().unwrap());
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("chromium did not finish in 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let console = err.join().unwrap();
    let console = console
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_owned)
        .collect();
    Loaded {
        dom: out.join().unwrap(),
        console,
    }
}

/// The page's DOM and console, at 1200 x 900.
pub fn load(chromium: &Path, page: &Path) -> Loaded {
    let extra = ["--window-size=1200,900".to_string(), "--dump-dom".into()];
    run(chromium, page, &extra)
}

/// A PNG of the page's top `height` pixels at 1200 wide, written to `png`.
pub fn screenshot(chromium: &Path, page: &Path, png: &Path, height: u32) {
    let extra = [
        format!("--window-size=1200,{height}"),
        format!("--screenshot={}", png.display()),
    ];
    run(chromium, page, &extra);
    assert!(png.is_file(), "chromium wrote no screenshot");
}

fn reader(mut from: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        from.read_to_end(&mut bytes).unwrap();
        String::from_utf8_lossy(&bytes).into_owned()
    })
}
