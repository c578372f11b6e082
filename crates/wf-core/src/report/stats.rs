//! `--stats` and the progress bar: what a run cost, so a cold run can be told from
//! a warm one (bytes really read from storage, major faults) and a CPU-bound run
//! from an I/O-bound one (CPU utilisation).

use std::io::IsTerminal;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::scan::Progress;

/// Process resource counters at one moment.
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    pub user: f64,
    pub system: f64,
    pub major_faults: u64,
    /// Bytes this process caused to be fetched from storage (`/proc/self/io`
    /// `read_bytes`); `None` where the kernel does not report it.
    pub storage_read: Option<u64>,
}

fn tv(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 / 1e6
}

impl Usage {
    pub fn now() -> Usage {
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        Usage {
            user: tv(ru.ru_utime),
            system: tv(ru.ru_stime),
            major_faults: ru.ru_majflt as u64,
            storage_read: proc_read_bytes(),
        }
    }
}

fn proc_read_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/io").ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("read_bytes:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Throughput: `bytes` in `wall` seconds, in 10^6 bytes per second (0 for no
/// time). The one place this is computed (`--stats`, `wf bench`).
pub fn mb_per_s(bytes: u64, wall: f64) -> f64 {
    if wall > 0.0 {
        bytes as f64 / 1e6 / wall
    } else {
        0.0
    }
}

/// `cpu` seconds over `wall` seconds (2.0 = two cores busy; 0 for no time).
pub fn cpu_utilisation(cpu: f64, wall: f64) -> f64 {
    if wall > 0.0 {
        cpu / wall
    } else {
        0.0
    }
}

/// A finished run's measurements.
#[derive(Debug, Clone, Default)]
pub struct RunStats {
    pub wall: f64,
    pub bytes: u64,
    pub records: Option<u64>,
    pub user: f64,
    pub system: f64,
    pub major_faults: u64,
    pub storage_read: Option<u64>,
    pub threads: usize,
    /// Job-specific counters (name, value), e.g. malformed lines.
    pub extra: Vec<(String, u64)>,
    /// The decoding of compressed inputs (none: all zero).
    pub decoded: crate::scan::Decoded,
}

impl RunStats {
    pub fn between(a: &Usage, b: &Usage, wall: Duration, bytes: u64, threads: usize) -> RunStats {
        RunStats {
            wall: wall.as_secs_f64(),
            bytes,
            records: None,
            user: b.user - a.user,
            system: b.system - a.system,
            major_faults: b.major_faults - a.major_faults,
            storage_read: match (a.storage_read, b.storage_read) {
                (Some(x), Some(y)) => Some(y.saturating_sub(x)),
                _ => None,
            },
            threads,
            extra: Vec::new(),
            decoded: Default::default(),
        }
    }

    pub fn mb_per_s(&self) -> f64 {
        mb_per_s(self.bytes, self.wall)
    }

    /// CPU seconds over wall seconds (2.0 = two cores busy).
    pub fn cpu_utilisation(&self) -> f64 {
        cpu_utilisation(self.user + self.system, self.wall)
    }

    /// The `--stats` lines on compressed inputs, if any were decoded.
    fn decoded_text(&self) -> String {
        let d = &self.decoded;
        if d.compressed == 0 && d.decoded == 0 {
            return String::new();
        }
        let cpu = self.user + self.system;
        let share = if cpu > 0.0 {
            d.seconds / cpu * 100.0
        } else {
            0.0
        };
        format!(
            "compressed:     {} bytes, decoded to {} bytes ({:.1}x)\n\
             decoding:       {:.3} s over all threads, {:.0}% of the cpu time\n",
            d.compressed,
            d.decoded,
            d.decoded as f64 / d.compressed.max(1) as f64,
            d.seconds,
            share.min(100.0)
        )
    }

    /// The human `--stats` block, for stderr.
    pub fn text(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!("wall time:      {:.3} s\n", self.wall));
        s.push_str(&format!("bytes:          {}\n", self.bytes));
        if let Some(r) = self.records {
            s.push_str(&format!("records:        {r}\n"));
        }
        s.push_str(&format!("throughput:     {:.1} MB/s\n", self.mb_per_s()));
        s.push_str(&format!(
            "cpu:            {:.3} s user, {:.3} s system, {:.0}% of one core ({} thread{})\n",
            self.user,
            self.system,
            self.cpu_utilisation() * 100.0,
            self.threads,
            if self.threads == 1 { "" } else { "s" }
        ));
        match self.storage_read {
            Some(b) => s.push_str(&format!("read from storage: {b} bytes\n")),
            None => s.push_str("read from storage: unknown (no /proc/self/io)\n"),
        }
        s.push_str(&format!("major faults:   {}\n", self.major_faults));
        s.push_str(&self.decoded_text());
        for (k, v) in &self.extra {
            s.push_str(&format!("{k}: {v}\n"));
        }
        s
    }
}

/// Whether to draw a progress bar: forced on or off, else only on a terminal.
pub fn want_progress(force_on: bool, force_off: bool) -> bool {
    if force_off {
        false
    } else {
        force_on || std::io::stderr().is_terminal()
    }
}

/// Draw a progress bar on stderr from the engine's counters until `stop` is set.
pub fn progress_bar<'a>(
    scope: &'a std::thread::Scope<'a, '_>,
    p: &'a Progress,
    stop: &'a std::sync::atomic::AtomicBool,
) -> std::thread::ScopedJoinHandle<'a, ()> {
    scope.spawn(move || {
        // indicatif hides a stderr target that is not a terminal; `--progress` forces
        // the bar there too, through a target that is never hidden.
        let target = if std::io::stderr().is_terminal() {
            indicatif::ProgressDrawTarget::stderr_with_hz(10)
        } else {
            indicatif::ProgressDrawTarget::term_like_with_hz(Box::new(console::Term::stderr()), 10)
        };
        let bar = indicatif::ProgressBar::with_draw_target(Some(0), target);
        // With a known total (regular files): bar, bytes of total, rate, ETA.
        // Streams only: no total, so a spinner with bytes and rate. Decimal units
        // (MB, MB/s), like --stats.
        let sized = indicatif::ProgressStyle::with_template(
            "{bar:30} {decimal_bytes}/{decimal_total_bytes} {decimal_bytes_per_sec} ETA {eta}",
        )
        .expect("valid template");
        let streaming = indicatif::ProgressStyle::with_template(
            "{spinner} {decimal_bytes} {decimal_bytes_per_sec} {elapsed}",
        )
        .expect("valid template");
        let mut has_total = None;
        while !stop.load(Ordering::Relaxed) {
            let total = p.total.load(Ordering::Relaxed);
            let done = p.done.load(Ordering::Relaxed);
            let now = total > 0 && done <= total;
            if has_total != Some(now) {
                bar.set_style(if now {
                    sized.clone()
                } else {
                    streaming.clone()
                });
                has_total = Some(now);
            }
            bar.set_length(total.max(done));
            bar.set_position(done);
            std::thread::sleep(Duration::from_millis(100));
        }
        bar.finish_and_clear();
    })
}
