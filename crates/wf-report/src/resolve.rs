//! `wf report --resolve`: the reverse-DNS names of the hosts panel's shown
//! rows (issue 38: "visitor hosts (IP), and with `--resolve` nothing else:
//! no DNS lookups by default").
//!
//! Why so shaped: a log has millions of clients, so only the rows the report
//! shows (`--max-rows`) are looked up, never every client. The lookup is the
//! system resolver's (`getnameinfo` through the `dns-lookup` crate: the hosts
//! file, nsswitch, then the DNS, as every other tool on the machine sees
//! names), which blocks and has no timeout of its own; so the lookups run on
//! a bounded pool of threads and the whole is bounded by a deadline: a name
//! not back by then, or not found, is left empty (`""`). A thread still
//! blocked at the deadline is left to finish on its own; its answer is
//! dropped. A [`Resolver`] keeps the answers it got, so `--follow` looks up
//! only the rows it has not seen before.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use crate::report::Panel;

/// Lookups at once.
const THREADS: usize = 16;
/// The longest a report waits for its names.
const DEADLINE: Duration = Duration::from_secs(5);

/// Reverse-DNS names, with the answers already had.
pub struct Resolver {
    /// Address -> its name (`None`: it has none, or is no IP address).
    known: HashMap<String, Option<String>>,
    threads: usize,
    deadline: Duration,
}

impl Default for Resolver {
    fn default() -> Self {
        Resolver::new(THREADS, DEADLINE)
    }
}

impl Resolver {
    /// At most `threads` lookups at once, all done within `deadline`.
    pub fn new(threads: usize, deadline: Duration) -> Resolver {
        Resolver {
            known: HashMap::new(),
            threads: threads.max(1),
            deadline,
        }
    }

    /// Give the first `shown` rows of `panel` (the hosts panel: its keys
    /// are client addresses) their `hostname`, empty when there is none or
    /// the lookup did not answer in time.
    pub fn fill(&mut self, panel: &mut Panel, shown: usize) {
        let new: Vec<String> = panel
            .data
            .iter()
            .take(shown)
            .filter(|r| !self.known.contains_key(&r.data))
            .map(|r| r.data.clone())
            .collect();
        for (addr, name) in lookup(new, self.threads, self.deadline) {
            self.known.insert(addr, name);
        }
        for r in panel.data.iter_mut().take(shown) {
            let name = self.known.get(&r.data).cloned().flatten();
            r.hostname = Some(name.unwrap_or_default());
        }
    }
}

/// The names of `addrs` that answered within `deadline` (a client that is no
/// IP address answers `None` at once), looked up on up to `threads` threads.
fn lookup(addrs: Vec<String>, threads: usize, deadline: Duration) -> Vec<(String, Option<String>)> {
    if addrs.is_empty() {
        return Vec::new();
    }
    let addrs = Arc::new(addrs);
    let next = Arc::new(AtomicUsize::new(0));
    let late = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    for _ in 0..threads.min(addrs.len()) {
        let (addrs, next, late, tx) = (addrs.clone(), next.clone(), late.clone(), tx.clone());
        std::thread::spawn(move || loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= addrs.len() || late.load(Ordering::Relaxed) {
                break;
            }
            let name = addrs[i]
                .parse::<IpAddr>()
                .ok()
                .and_then(|ip| dns_lookup::lookup_addr(&ip).ok())
                .filter(|n| n != &addrs[i]);
            if tx.send((i, name)).is_err() {
                break;
            }
        });
    }
    drop(tx);
    let end = Instant::now() + deadline;
    let mut got = Vec::new();
    while got.len() < addrs.len() {
        let left = end.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((i, name)) => got.push((addrs[i].clone(), name)),
            Err(_) => break,
        }
    }
    late.store(true, Ordering::Relaxed);
    got
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_localhost_and_a_non_address_has_no_name() {
        let got = lookup(vec!["127.0.0.1".into(), "not-an-ip".into()], 2, DEADLINE);
        let got: HashMap<_, _> = got.into_iter().collect();
        // /etc/hosts names 127.0.0.1: no network needed.
        assert_eq!(got["127.0.0.1"].as_deref(), Some("localhost"));
        assert_eq!(got["not-an-ip"], None);
    }
}
