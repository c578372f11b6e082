//! What classifying user agents costs: the rules' compile time, one
//! uncached parse per distinct agent, and the cached cost per log line.
//!
//! `cargo run --profile ci -p wf-report --example agent_speed -- access.log`
//! (a combined-format log: the agent is the last quoted field). Without a
//! log it uses the crawler list's examples. Prints medians of 5 rounds.

use std::time::Instant;
use wf_report::agent::{parse, parsers, AgentCache};
use wf_report::bots::Bots;

fn agent_of(line: &[u8]) -> &[u8] {
    let end = line.iter().rposition(|&b| b == b'"').unwrap_or(0);
    let start = line[..end]
        .iter()
        .rposition(|&b| b == b'"')
        .map_or(end, |s| s + 1);
    &line[start..end]
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let t = Instant::now();
    parsers();
    println!(
        "compile the rules: {:.0} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let lines: Vec<Vec<u8>> = match std::env::args().nth(1) {
        Some(path) => {
            let data = std::fs::read(&path).expect("read the log");
            data.split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .map(|l| agent_of(l).to_vec())
                .collect()
        }
        None => Bots::examples()
            .into_iter()
            .map(|(_, ua)| ua.into_bytes())
            .collect(),
    };
    let mut distinct = lines.clone();
    distinct.sort();
    distinct.dedup();
    let uncached: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            distinct
                .iter()
                .for_each(|ua| drop(std::hint::black_box(parse(ua))));
            t.elapsed().as_secs_f64() * 1e6 / distinct.len() as f64
        })
        .collect();
    let cached: Vec<f64> = (0..5)
        .map(|_| {
            let mut cache = AgentCache::new();
            distinct.iter().for_each(|ua| {
                cache.get(ua);
            });
            let t = Instant::now();
            lines.iter().for_each(|ua| {
                std::hint::black_box(cache.get(ua));
            });
            t.elapsed().as_secs_f64() * 1e9 / lines.len() as f64
        })
        .collect();
    println!("{} lines, {} distinct agents", lines.len(), distinct.len());
    println!(
        "uncached parse: {:.1} us per distinct agent (median of 5)",
        median(uncached)
    );
    println!(
        "cached lookup: {:.1} ns per line, all hits (median of 5)",
        median(cached)
    );
}
