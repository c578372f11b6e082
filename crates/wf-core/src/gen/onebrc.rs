//! `wf gen 1brc`: One Billion Row Challenge style data, `station;temperature`
//! lines with one decimal, for the SQL tests and benchmarks.
//!
//! Station names are made from syllables (1 to 4 words of 2 to 4 syllables,
//! so 4 to 30 bytes, some with UTF-8 letters, like the real list's mix of short
//! and long names); each station has a mean temperature, and a row's value is
//! that mean plus a triangular spread of +-25 degrees, kept in [-99.9, 99.9].
//! Stations are drawn with a mild skew. The same seed gives the same bytes.

use std::io::{self, Write};

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const SYLLABLES: [&str; 40] = [
    "ka", "lo", "mi", "na", "ri", "sa", "to", "vu", "be", "do", "fa", "ge", "hu", "ji", "ku", "la",
    "mo", "ne", "po", "qua", "re", "si", "tu", "ve", "wa", "xi", "yo", "ze", "bra", "cha", "dre",
    "fli", "gro", "sta", "tri", "ør", "å", "é", "ñu", "ü",
];

/// One station: its name and mean temperature in tenths of a degree.
struct Station {
    name: String,
    mean: i32,
}

fn station_name(rng: &mut Xoshiro256PlusPlus) -> String {
    let words = 1 + (rng.random_range(0..10u32) / 4) as usize;
    let mut name = String::new();
    for w in 0..words {
        if w > 0 {
            name.push(if rng.random_bool(0.5) { ' ' } else { '-' });
        }
        for s in 0..rng.random_range(2..=4usize) {
            let syl = SYLLABLES[rng.random_range(0..SYLLABLES.len())];
            if s == 0 {
                let mut c = syl.chars();
                let first = c.next().unwrap();
                name.extend(first.to_uppercase());
                name.push_str(c.as_str());
            } else {
                name.push_str(syl);
            }
        }
    }
    name
}

fn stations(k: usize, rng: &mut Xoshiro256PlusPlus) -> Vec<Station> {
    let mut out: Vec<Station> = Vec::with_capacity(k);
    let mut seen = std::collections::HashSet::new();
    while out.len() < k {
        let name = station_name(rng);
        if seen.insert(name.clone()) {
            out.push(Station {
                name,
                mean: rng.random_range(-300..=350),
            });
        }
    }
    out
}

/// Write `rows` lines of `k` stations; returns the bytes written.
pub fn write(w: &mut dyn Write, rows: u64, k: usize, seed: u64) -> io::Result<u64> {
    if k == 0 {
        return Err(io::Error::other("--stations must be at least 1"));
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let st = stations(k, &mut rng);
    let mut buf = Vec::with_capacity(1 << 20);
    let mut bytes = 0u64;
    for _ in 0..rows {
        // Skew: half the draws come from the first eighth of the stations.
        let i = if rng.random_bool(0.5) {
            rng.random_range(0..k.div_ceil(8))
        } else {
            rng.random_range(0..k)
        };
        let spread = rng.random_range(-125..=125) + rng.random_range(-125..=125);
        let t = (st[i].mean + spread).clamp(-999, 999);
        line(&mut buf, &st[i].name, t);
        if buf.len() >= 1 << 20 {
            w.write_all(&buf)?;
            bytes += buf.len() as u64;
            buf.clear();
        }
    }
    w.write_all(&buf)?;
    Ok(bytes + buf.len() as u64)
}

/// `name;-12.3\n` for a temperature in tenths.
fn line(buf: &mut Vec<u8>, name: &str, tenths: i32) {
    buf.extend_from_slice(name.as_bytes());
    buf.push(b';');
    if tenths < 0 {
        buf.push(b'-');
    }
    let a = tenths.unsigned_abs();
    buf.extend_from_slice((a / 10).to_string().as_bytes());
    buf.push(b'.');
    buf.push(b'0' + (a % 10) as u8);
    buf.push(b'\n');
}

#[cfg(test)]
mod tests {
    #[test]
    fn same_seed_same_bytes_and_one_decimal() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        super::write(&mut a, 1000, 50, 7).unwrap();
        super::write(&mut b, 1000, 50, 7).unwrap();
        assert_eq!(a, b);
        let text = String::from_utf8(a).unwrap();
        assert_eq!(text.lines().count(), 1000);
        for l in text.lines() {
            let (name, t) = l.split_once(';').unwrap();
            assert!(!name.is_empty() && !name.contains(';'));
            let (int, dec) = t.split_once('.').unwrap();
            assert_eq!(dec.len(), 1);
            assert!(int.trim_start_matches('-').parse::<u32>().unwrap() <= 99);
        }
    }
}
