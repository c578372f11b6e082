//! Plain reimplementations the fuzz targets compare wf against, written from the
//! issue texts with no attention to speed, and a small generator of chunkings.

use std::collections::HashMap;

pub mod clf_ref;
pub mod csv_ref;
pub mod drive;
pub mod json_ref;
pub mod logfmt_ref;

/// Pseudo-random numbers from the fuzz input (xorshift64*), for chunk cuts.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: &[u8]) -> Rng {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        for &b in seed {
            s = (s ^ b as u64).wrapping_mul(0x1000_0000_01b3);
        }
        Rng(s | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// Cut `data` into chunks ending just after `sep` (or at the end), keeping each
/// record end as a cut with probability 1/2. Returns `(offset, bytes)` pairs.
pub fn record_chunks<'a>(data: &'a [u8], sep: u8, rng: &mut Rng) -> Vec<(u64, &'a [u8])> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &b) in data.iter().enumerate() {
        if b == sep && rng.next_u64() & 1 == 1 {
            out.push((start as u64, &data[start..=i]));
            start = i + 1;
        }
    }
    if start < data.len() {
        out.push((start as u64, &data[start..]));
    }
    out
}

/// The Wide Finder 2 report, all keys, as plain maps.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct NaiveWf2 {
    pub lines: u64,
    pub not_get: u64,
    pub too_few_fields: u64,
    pub hits: HashMap<Vec<u8>, u64>,
    pub bytes: HashMap<Vec<u8>, u64>,
    pub not_found: HashMap<Vec<u8>, u64>,
    pub clients: HashMap<Vec<u8>, u64>,
    pub referrers: HashMap<Vec<u8>, u64>,
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Ruby's `line.split(/\s+/)`: a leading run gives an empty field 0, and empty
/// fields elsewhere vanish.
pub fn ruby_split(line: &[u8]) -> Vec<&[u8]> {
    let mut parts = line.split(|&b| is_space(b));
    let mut f = vec![parts.next().unwrap_or(b"")];
    f.extend(parts.filter(|p| !p.is_empty()));
    f
}

/// `^/ongoing/When/[0-9]{3}x/[0-9]{4}/[0-9]{2}/[0-9]{2}/[^ .]+$`, by hand.
pub fn naive_article(u: &[u8]) -> bool {
    let pat = b"/ongoing/When/ddd\x78/dddd/dd/dd/";
    if u.len() <= pat.len() {
        return false;
    }
    for (i, &p) in pat.iter().enumerate() {
        let ok = if p == b'd' {
            u[i].is_ascii_digit()
        } else {
            u[i] == p
        };
        if !ok {
            return false;
        }
    }
    u[pat.len()..].iter().all(|&b| b != b' ' && b != b'.')
}

impl NaiveWf2 {
    pub fn run(data: &[u8]) -> NaiveWf2 {
        let mut r = NaiveWf2::default();
        let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
        if data.is_empty() || data.ends_with(b"\n") {
            lines.pop();
        }
        for line in lines {
            r.lines += 1;
            let f = ruby_split(line);
            if f.len() < 6 {
                r.too_few_fields += 1;
            }
            if f.get(5) != Some(&&b"\"GET"[..]) {
                r.not_get += 1;
                continue;
            }
            let uri = f.get(6).copied();
            let n = match f.get(8).copied() {
                Some(b"200") => {
                    let digits = f.get(9).map_or(&b""[..], |b| {
                        let k = b.iter().take_while(|c| c.is_ascii_digit()).count();
                        &b[..k]
                    });
                    let mut v = 0u64;
                    for &d in digits {
                        v = v.saturating_mul(10).saturating_add((d - b'0') as u64);
                    }
                    v
                }
                Some(b"304") => 0,
                Some(b"404") => {
                    if let Some(u) = uri {
                        *r.not_found.entry(u.to_vec()).or_default() += 1;
                    }
                    continue;
                }
                _ => continue,
            };
            let Some(uri) = uri else { continue };
            let e = r.bytes.entry(uri.to_vec()).or_default();
            *e = e.saturating_add(n);
            if naive_article(uri) {
                *r.hits.entry(uri.to_vec()).or_default() += 1;
                *r.clients.entry(f[0].to_vec()).or_default() += 1;
                if let Some(rf) = f.get(10) {
                    if *rf != b"\"-\"" && !rf.starts_with(b"\"http://www.tbray.org/ongoing/") {
                        let key = if rf.len() <= 2 {
                            &b""[..]
                        } else {
                            &rf[1..rf.len() - 1]
                        };
                        *r.referrers.entry(key.to_vec()).or_default() += 1;
                    }
                }
            }
        }
        r
    }

    /// A map as a list sorted by value descending, then key ascending.
    pub fn sorted(m: &HashMap<Vec<u8>, u64>) -> Vec<(Vec<u8>, u64)> {
        let mut v: Vec<_> = m.iter().map(|(k, &n)| (k.clone(), n)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v
    }
}

/// A minimal pangrammatic window found by brute force: `(offset, bytes, letters)`.
pub fn brute_pangrams(text: &[u8]) -> Vec<(u64, u64, u64)> {
    let letter = |b: u8| {
        b.is_ascii_alphabetic()
            .then(|| (b.to_ascii_lowercase() - b'a') as usize)
    };
    let mut out = Vec::new();
    for i in 0..text.len() {
        let Some(first) = letter(text[i]) else {
            continue;
        };
        let mut count = [0u64; 26];
        let mut distinct = 0;
        let mut letters = 0;
        for (j, &b) in text.iter().enumerate().skip(i) {
            if let Some(c) = letter(b) {
                letters += 1;
                count[c] += 1;
                if count[c] == 1 {
                    distinct += 1;
                }
                if distinct == 26 {
                    // Minimal when dropping the first letter breaks it.
                    if count[first] == 1 {
                        out.push((i as u64, (j - i + 1) as u64, letters));
                    }
                    break;
                }
            }
        }
    }
    out
}

/// awk's default split: runs of space, tab, CR, VT and FF separate fields;
/// leading and trailing runs make no empty field.
pub fn awk_split(line: &[u8]) -> Vec<&[u8]> {
    line.split(|c| matches!(c, b' ' | b'\t' | b'\r' | 0x0b | 0x0c))
        .filter(|f| !f.is_empty())
        .collect()
}
