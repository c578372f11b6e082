//! The `regex:'...'` format against `regex::bytes::Regex` captures taken
//! directly: a record is a row exactly when the pattern matches it, each
//! named group is its column (text, invalid UTF-8 replaced and counted; NULL
//! where the group took no part), and the three ways through the parser
//! agree. Patterns: a few fixed ones, or one made from the input's first line
//! when it compiles and names a group.
//!
//! Input: byte 0 picks the pattern (values past the fixed list: the first
//! line of the rest is the pattern); the rest are the records.
#![no_main]

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use wf_formats::{Format, FormatOptions};
use wf_fuzz::drive::{self, How, V};

const PATTERNS: [&str; 6] = [
    r"^(?P<a>[a-z]+) (?P<n>[0-9]+)",
    r"(?P<x>\w+)=(?P<y>\S*)|(?P<z>\d+)",
    r"^(?P<all>.*)$",
    r"(?P<e>)",
    r"(?-u)(?P<raw>[\x80-\xff]+)(?P<opt>-)?",
    r"(?P<q>[^ ]*) (?:(?P<b>\[[^\]]*\])|-) (?P<r>.*)",
];

fuzz_target!(|input: &[u8]| {
    let Some((&pick, rest)) = input.split_first() else {
        return;
    };
    let (pattern, data) = match PATTERNS.get(pick as usize % 8) {
        Some(p) => (p.to_string(), rest),
        None => {
            let nl = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            let Ok(p) = std::str::from_utf8(&rest[..nl]) else {
                return;
            };
            (p.to_string(), &rest[rest.len().min(nl + 1)..])
        }
    };
    if pattern.len() > 200 {
        return;
    }
    // Compiling the pattern (twice) was most of a run: the fixed ones are
    // compiled once per process.
    let Some((f, re)) = compiled(&pattern, pick as usize % 8 < PATTERNS.len()) else {
        return; // does not compile, or names no group
    };
    let names: Vec<&str> = re.capture_names().flatten().collect();
    let cols: Vec<&str> = f.fields().iter().map(|x| x.name.as_str()).collect();
    assert_eq!(cols, names, "columns");
    let recs = drive::line_records(data, b'\n', 0);
    let got = drive::parse_agreeing(&f, data, &recs, &[How::Plain, How::Mapped, How::Runs]);
    let (mut rows, mut bad, mut invalid) = (Vec::new(), Vec::new(), 0);
    for &(s, e) in &recs {
        let r = &data[s..e];
        let Some(c) = re.captures(r) else {
            bad.push(true);
            continue;
        };
        bad.push(false);
        let row: Vec<V> = names
            .iter()
            .map(|n| match c.name(n) {
                Some(m) => {
                    invalid += std::str::from_utf8(m.as_bytes()).is_err() as u64;
                    drive::text(m.as_bytes())
                }
                None => V::Null,
            })
            .collect();
        rows.push(row);
    }
    assert_eq!(got.bad, bad, "{pattern}: malformed records");
    assert_eq!(got.rows, rows, "{pattern}: rows");
    assert_eq!(got.invalid_utf8, invalid, "{pattern}: invalid UTF-8");
    assert_eq!(got.bad_values, 0);
});

type Compiled = (Arc<dyn Format>, regex::bytes::Regex);

thread_local! {
    static FIXED: RefCell<HashMap<String, Compiled>> = RefCell::new(HashMap::new());
}

/// wf's format for `pattern` and the pattern compiled by the `regex` crate
/// itself; `None` when wf refuses it (kept when `fixed`).
fn compiled(pattern: &str, fixed: bool) -> Option<Compiled> {
    if let Some(c) = FIXED.with(|m| m.borrow().get(pattern).cloned()) {
        return Some(c);
    }
    let spec = format!("regex:'{pattern}'");
    let f = wf_formats::from_spec(&spec, &FormatOptions::default(), b"").ok()?;
    let re = regex::bytes::Regex::new(pattern).expect("wf compiled it");
    if fixed {
        FIXED.with(|m| {
            m.borrow_mut()
                .insert(pattern.to_string(), (f.clone(), re.clone()))
        });
    }
    Some((f, re))
}
