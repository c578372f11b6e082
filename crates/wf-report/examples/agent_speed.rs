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

/// Runs `f` five times; the median of its time per item.
fn per_item(items: usize, scale: f64, mut f: impl FnMut()) -> f64 {
    let runs = (0..5).map(|_| {
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64() * scale / items as f64
    });
    median(runs.collect())
}

fn main() {
    let t = Instant::now();
    parsers();
    let compile = t.elapsed().as_secs_f64() * 1e3;
    println!("compile the rules: {compile:.0} ms");
    // The agents are read where they lie in the log's bytes, as in a scan's chunk.
    let log: Vec<u8> = match std::env::args().nth(1) {
        Some(path) => std::fs::read(&path).expect("read the log"),
        None => Bots::examples()
            .into_iter()
            .flat_map(|(_, ua)| format!("- \"{ua}\"\n").into_bytes())
            .collect(),
    };
    let lines: Vec<&[u8]> = log
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(agent_of)
        .collect();
    let mut distinct = lines.clone();
    distinct.sort();
    distinct.dedup();
    println!("{} lines, {} distinct agents", lines.len(), distinct.len());
    let uncached = per_item(distinct.len(), 1e6, || {
        distinct
            .iter()
            .for_each(|ua| drop(std::hint::black_box(parse(ua))));
    });
    println!("uncached parse: {uncached:.1} us per distinct agent");
    let mut cache = AgentCache::new();
    distinct.iter().for_each(|ua| {
        cache.get(ua);
    });
    let cached = per_item(lines.len(), 1e9, || {
        lines.iter().for_each(|ua| {
            std::hint::black_box(cache.get(ua));
        });
    });
    println!("cached lookup: {cached:.1} ns per line, all hits");
}
