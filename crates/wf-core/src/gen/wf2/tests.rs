use super::time::{days_from_civil, MONTHS};
use super::{generate, wf2};

fn gen(size: u64, seed: u64, odd: f64) -> Vec<u8> {
    let mut v = Vec::new();
    let n = wf2(&mut v, size, seed, odd).unwrap();
    assert_eq!(n, v.len() as u64);
    v
}

fn gen_threads(size: u64, seed: u64, odd: f64, threads: usize) -> Vec<u8> {
    gen_days(size, seed, odd, None, threads)
}

fn gen_days(size: u64, seed: u64, odd: f64, days: Option<u32>, threads: usize) -> Vec<u8> {
    let mut v = Vec::new();
    let t = (odd * 18_446_744_073_709_551_616.0) as u64;
    let n = generate(&mut v, size, seed, t, days, threads).unwrap();
    assert_eq!(n, v.len() as u64);
    v
}

fn lines(v: &[u8]) -> impl Iterator<Item = &[u8]> {
    v[..v.len() - 1].split(|&b| b == b'\n')
}

/// A parsed combined-format line.
struct Rec<'a> {
    method: &'a str,
    uri: &'a str,
    status: u16,
    bytes: Option<u32>,
    referrer: &'a str,
    secs: i64,
}

/// Strict parse: host - - [dd/Mon/yyyy:hh:mm:ss -0700] "METHOD uri HTTP/1.x" status
/// bytes|- "referrer" "agent", printable ASCII only, at most 4 KiB.
fn parse(line: &[u8]) -> Option<Rec<'_>> {
    if line.len() > 4096 || !line.iter().all(|&b| (0x20..0x7f).contains(&b)) {
        return None;
    }
    let s = std::str::from_utf8(line).ok()?;
    let (host, rest) = s.split_once(' ')?;
    if host.is_empty() {
        return None;
    }
    let rest = rest.strip_prefix("- - [")?;
    let (date, rest) = rest.split_once("] \"")?;
    let secs = parse_date(date)?;
    let (req, rest) = rest.split_once("\" ")?;
    let mut it = req.split(' ');
    let (method, uri, proto) = (it.next()?, it.next()?, it.next()?);
    if it.next().is_some()
        || !["GET", "HEAD", "POST"].contains(&method)
        || !uri.starts_with('/')
        || !(proto == "HTTP/1.1" || proto == "HTTP/1.0")
    {
        return None;
    }
    let (status, rest) = rest.split_once(' ')?;
    if status.len() != 3 {
        return None;
    }
    let status: u16 = status.parse().ok()?;
    let (bytes, rest) = rest.split_once(' ')?;
    let bytes = if bytes == "-" {
        None
    } else {
        if bytes.is_empty() || !bytes.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(bytes.parse().ok()?)
    };
    let rest = rest.strip_prefix('"')?;
    let (referrer, rest) = rest.split_once("\" \"")?;
    let agent = rest.strip_suffix('"')?;
    if referrer.is_empty() || agent.is_empty() || referrer.contains('"') || agent.contains('"') {
        return None;
    }
    Some(Rec {
        method,
        uri,
        status,
        bytes,
        referrer,
        secs,
    })
}

fn parse_date(d: &str) -> Option<i64> {
    let b = d.as_bytes();
    if b.len() != 26 || &d[20..] != " -0700" {
        return None;
    }
    let num = |r: std::ops::Range<usize>| d[r].parse::<i64>().ok();
    let mon = MONTHS.iter().position(|m| m[..] == b[3..6])? as u32 + 1;
    let day = days_from_civil(num(7..11)?, mon, num(0..2)? as u32);
    Some(day * 86_400 + num(12..14)? * 3600 + num(15..17)? * 60 + num(18..20)?)
}

/// `^/ongoing/When/[0-9]{3}x/[0-9]{4}/[0-9]{2}/[0-9]{2}/[^ .]+$`
fn is_article(u: &str) -> bool {
    let Some(r) = u.strip_prefix("/ongoing/When/") else {
        return false;
    };
    let b = r.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(|c| c.is_ascii_digit());
    b.len() > 19
        && digits(0..3)
        && b[3] == b'x'
        && b[4] == b'/'
        && digits(5..9)
        && b[9] == b'/'
        && digits(10..12)
        && b[12] == b'/'
        && digits(13..15)
        && b[15] == b'/'
        && b[16..].iter().all(|&c| c != b' ' && c != b'.')
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let a = gen(3 << 20, 42, 0.0);
    assert_eq!(a, gen(3 << 20, 42, 0.0));
    assert_ne!(a, gen(3 << 20, 43, 0.0));
    let o = gen(1 << 20, 42, 0.1);
    assert_eq!(o, gen(1 << 20, 42, 0.1));
    assert_ne!(o, a[..o.len().min(a.len())]);
}

#[test]
fn bytes_do_not_depend_on_thread_count() {
    for odd in [0.0, 0.02] {
        let one = gen_threads(9 << 20, 5, odd, 1);
        for t in [2, 3] {
            assert!(
                one == gen_threads(9 << 20, 5, odd, t),
                "threads={t} odd={odd}"
            );
        }
        // wf2 picks its own thread count: same bytes.
        assert!(one == gen(9 << 20, 5, odd));
    }
    // Times spread over days (`--days`): the same too.
    let one = gen_days(9 << 20, 5, 0.01, Some(30), 1);
    assert!(one == gen_days(9 << 20, 5, 0.01, Some(30), 3));
    assert!(one != gen_days(9 << 20, 5, 0.01, Some(29), 1));
}

#[test]
fn smaller_size_is_a_prefix() {
    let big = gen(2 << 20, 9, 0.0);
    let small = gen(100_000, 9, 0.0);
    assert_eq!(&big[..small.len()], &small[..]);
}

#[test]
fn size_is_honoured() {
    assert!(gen(0, 1, 0.0).is_empty());
    for size in [1u64, 2, 100, 4095, 1 << 20, (5 << 20) + 17] {
        for odd in [0.0, 0.3] {
            let v = gen(size, 1, odd);
            let n = v.len() as u64;
            assert!(n >= size, "size {size}: got {n}");
            assert_eq!(*v.last().unwrap(), b'\n');
            // Stopped at the first line end at or after `size`.
            let prev = v[..v.len() - 1].iter().rposition(|&b| b == b'\n');
            assert!(prev.is_none_or(|p| (p as u64) + 1 < size), "size {size}");
        }
    }
}

#[test]
fn every_line_is_combined_format_when_not_odd() {
    let v = gen(6 << 20, 3, 0.0);
    let mut last = 0;
    let mut statuses = std::collections::BTreeMap::new();
    let mut methods = std::collections::BTreeMap::new();
    let mut n = 0;
    let mut dash_ref = 0;
    let mut self_ref = 0;
    let mut dash_bytes_304 = 0;
    for line in lines(&v) {
        let r =
            parse(line).unwrap_or_else(|| panic!("bad line: {:?}", String::from_utf8_lossy(line)));
        assert!(r.secs >= last, "dates go backwards");
        last = r.secs;
        *statuses.entry(r.status).or_insert(0) += 1;
        *methods.entry(r.method).or_insert(0) += 1;
        if r.referrer == "-" {
            dash_ref += 1;
        } else if r.referrer.starts_with("http://www.tbray.org/ongoing/") {
            self_ref += 1;
        }
        if r.status == 304 {
            assert!(r.bytes.is_none());
            dash_bytes_304 += 1;
        }
        n += 1;
    }
    let frac = |x: i32| x as f64 / n as f64;
    let st = |s: u16| frac(*statuses.get(&s).unwrap_or(&0));
    assert!(n > 20_000);
    assert!((0.5..0.75).contains(&st(200)), "{statuses:?}");
    assert!((0.15..0.4).contains(&st(304)), "{statuses:?}");
    assert!((0.04..0.15).contains(&st(301)), "{statuses:?}");
    assert!((0.005..0.05).contains(&st(404)), "{statuses:?}");
    assert!(st(500) > 0.0, "{statuses:?}");
    assert!(frac(methods["GET"]) > 0.98, "{methods:?}");
    assert!(methods["HEAD"] > 0 && methods["POST"] > 0, "{methods:?}");
    assert!((0.4..0.75).contains(&frac(dash_ref)));
    assert!(frac(self_ref) > 0.1);
    assert!(dash_bytes_304 > 0);
}

#[test]
fn odd_lines_at_requested_fraction() {
    assert!(lines(&gen(2 << 20, 4, 0.0)).all(|l| parse(l).is_some()));
    for f in [0.01, 0.1] {
        let v = gen(12 << 20, 4, f);
        assert_eq!(*v.last().unwrap(), b'\n');
        let (mut n, mut bad) = (0, 0);
        for l in lines(&v) {
            n += 1;
            if parse(l).is_none() {
                bad += 1;
            }
        }
        let got = bad as f64 / n as f64;
        assert!((got - f).abs() < f * 0.25, "wanted {f}, got {got}");
    }
    let v = gen(12 << 20, 4, 0.1);
    let ls: Vec<&[u8]> = lines(&v).collect();
    let has = |p: &dyn Fn(&[u8]) -> bool| ls.iter().any(|l| p(l));
    assert!(has(&|l| l.is_empty()), "empty");
    assert!(has(&|l| l.contains(&b'\t')), "tabs");
    assert!(has(&|l| l.starts_with(b" ")), "leading spaces");
    assert!(has(&|l| std::str::from_utf8(l).is_err()), "invalid UTF-8");
    assert!(has(&|l| l.len() > 10_000), "very long");
    assert!(has(&|l| l.ends_with(b"\r")), "CRLF");
    assert!(has(&|l| l.contains(&0)), "NUL");
    assert!(has(&|l| l.len() < 25 && !l.is_empty()), "short");
    assert!(
        has(&|l| l.windows(4).any(|w| w == b"\"GET")
            && parse(l).is_none()
            && l.len() < 1000
            && !l.contains(&b'\t')
            && std::str::from_utf8(l).is_ok()),
        "\"GET with too few fields"
    );
}

#[test]
fn articles_are_realistic_and_skewed() {
    let v = gen(8 << 20, 11, 0.0);
    let mut get200 = 0;
    let mut hits: std::collections::HashMap<&str, u32> = Default::default();
    let mut not_found: std::collections::HashMap<&str, u32> = Default::default();
    for l in lines(&v) {
        let r = parse(l).unwrap();
        if r.method == "GET" && r.status == 200 {
            get200 += 1;
            if is_article(r.uri) {
                *hits.entry(r.uri).or_insert(0) += 1;
            }
        }
        if r.status == 404 {
            *not_found.entry(r.uri).or_insert(0) += 1;
        }
    }
    let articles: u32 = hits.values().sum();
    let share = articles as f64 / get200 as f64;
    assert!((0.2..0.4).contains(&share), "article share {share}");
    let mut counts: Vec<u32> = hits.values().copied().collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let (top, median) = (counts[0], counts[counts.len() / 2]);
    assert!(counts.len() > 500, "{} distinct articles", counts.len());
    assert!(top > 20 * median, "top {top} median {median}");
    let mut nf: Vec<u32> = not_found.values().copied().collect();
    nf.sort_unstable_by(|a, b| b.cmp(a));
    assert!(
        nf.len() > 100 && nf[0] > 10 * nf[nf.len() / 2],
        "404s {nf:?}"
    );
    // Sanity of the matcher itself.
    assert!(is_article("/ongoing/When/200x/2007/06/17/Fathers-Day"));
    assert!(!is_article("/ongoing/When/200x/2007/06/17/IMGP5832.png"));
    assert!(!is_article("/ongoing/When/200x/2007/06/"));
}

#[test]
fn clients_and_referrers_are_many() {
    let v = gen(8 << 20, 12, 0.0);
    let mut hosts = std::collections::HashSet::new();
    let mut refs = std::collections::HashSet::new();
    for l in lines(&v) {
        let r = parse(l).unwrap();
        hosts.insert(l.split(|&b| b == b' ').next().unwrap());
        refs.insert(r.referrer);
    }
    assert!(hosts.len() > 5_000, "{} hosts", hosts.len());
    assert!(refs.len() > 2_000, "{} referrers", refs.len());
    assert!(refs
        .iter()
        .any(|r| r.contains("google.") && r.contains("q=")));
}
