//! Made-up names: client hosts, article slugs, broken links and referrers.

use super::vocab::WORDS;
use crate::gen::random::R;

/// Reverse-DNS templates for ordinary clients. a.b.c.d are the octets.
pub(super) fn client_host(r: &mut R, s: &mut String) {
    use std::fmt::Write as _;
    let octets = [
        r.range(12, 223),
        r.below(256),
        r.below(256),
        r.range(1, 254),
    ];
    s.clear();
    match r.below(20) {
        0..=6 => {
            let [a, b, c, d] = octets;
            let _ = write!(s, "{a}.{b}.{c}.{d}");
        }
        k @ 7..=13 => cable_dsl_host(r, s, k, octets),
        k => other_host(r, s, k, octets),
    }
}

/// Template `k` of the big cable and DSL providers (US and UK).
fn cable_dsl_host(r: &mut R, s: &mut String, k: u32, [a, b, c, d]: [u32; 4]) {
    use std::fmt::Write as _;
    let _ = match k {
        7 => write!(
            s,
            "c-{a}-{b}-{c}-{d}.hsd1.{}.comcast.net",
            r.pick(&["il", "ca", "wa", "ma", "pa", "nj", "mi", "co", "dc", "ga", "fl", "or"])
        ),
        8 => write!(
            s,
            "pool-{a}-{b}-{c}-{d}.{}.verizon.net",
            r.pick(&[
                "phlapa.east",
                "bltmmd.fios",
                "nycmny.east",
                "bstnma.fios",
                "washdc.fios",
                "lsanca.dsl-w",
                "tampfl.fios",
            ])
        ),
        9 => write!(
            s,
            "adsl-{a}-{b}-{c}-{d}.dsl.{}{}.sbcglobal.net",
            r.pick(&["pltn", "austtx", "sndg", "chcgil", "irvnca", "hstntx", "sfldmi"]),
            r.range(1, 24)
        ),
        10 => write!(
            s,
            "ip{a}-{b}-{c}-{d}.{}.cox.net",
            r.pick(&[
                "om.om",
                "lv.lv",
                "ph.ph",
                "sd.sd",
                "oc.oc",
                "no.no",
                "hr.hrcoxmail"
            ])
        ),
        11 => write!(s, "host{a}-{b}-{c}-{d}.range{a}-{b}.btcentralplus.com"),
        12 => write!(
            s,
            "{a}-{b}-{c}-{d:03}.dhcp.{}.charter.com",
            r.pick(&["spbg.sc", "mdsn.wi", "stls.mo", "ftwo.tx", "rvsd.ca"])
        ),
        _ => write!(
            s,
            "cpe-{a}-{b}-{c}-{d}.{}.res.rr.com",
            r.pick(&["austin", "nyc", "socal", "carolina", "kc", "hawaii", "maine"])
        ),
    };
}

/// Template `k` of other providers (Canada, New Zealand, Germany) and of
/// corporate and university proxies.
fn other_host(r: &mut R, s: &mut String, k: u32, [a, b, c, d]: [u32; 4]) {
    use std::fmt::Write as _;
    let _ = match k {
        14 => write!(s, "modemcable{:03}.{c}-{b}-{a}.mc.videotron.ca", d),
        15 => write!(s, "{a}-{b}-{c}-{d}.jetstream.xtra.co.nz"),
        16 => write!(s, "p{:08X}.dip.t-dialin.net", r.u() as u32),
        17 => write!(
            s,
            "s0106{:012x}.{}.shawcable.net",
            r.u() & 0xFFFF_FFFF_FFFF,
            r.pick(&["vc", "ed", "cg", "wp", "gv"])
        ),
        18 => write!(
            s,
            "{}{}.{}",
            r.pick(&["proxy", "nat", "gw", "firewall", "cache", "nulgw", "slim"]),
            r.range(1, 40),
            r.pick(&[
                "unisys.co.jp",
                "kataweb.it",
                "ibm.com",
                "sun.com",
                "oracle.com",
                "bbc.co.uk",
                "cisco.com",
                "hp.com",
                "mit.edu",
                "berkeley.edu",
                "uni-karlsruhe.de",
                "nokia.com",
            ])
        ),
        _ => write!(
            s,
            "bas{}-toronto{:02}-{}.dsl.bell.ca",
            r.range(1, 9),
            r.range(1, 63),
            r.u() as u32
        ),
    };
}

/// A broken link to the article at `u`, into `s`: a trailing slash, bracket or
/// punctuation, a cut or lower-cased slug, another word in the month, ...
pub(super) fn mangled_link(r: &mut R, s: &mut String, u: &str) {
    use std::fmt::Write as _;
    let (dir, slug) = u.rsplit_once('/').unwrap();
    s.clear();
    let _ = match r.below(10) {
        0 => write!(s, "{u}/"),
        1 => write!(s, "{u})"),
        2 => write!(s, "{u}."),
        3 => write!(s, "{u},"),
        4 => write!(s, "{u}%20"),
        5 => write!(s, "{u}.html"),
        6 if slug.len() > 2 => {
            write!(s, "{dir}/{}", &slug[..slug.len() - 1 - r.below(2) as usize])
        }
        7 => write!(s, "{dir}/{}", slug.to_lowercase()),
        8 => write!(s, "{}/{}", &dir[..dir.len() - 3], r.pick(WORDS)),
        _ => write!(s, "{u}/feed/"),
    };
    if s.is_empty() {
        s.push_str(u);
        s.push_str("%22");
    }
}

/// One referrer of the long tail, into `s`: a search for one to four words of the
/// vocabulary, or a blog, webmail or news page about them.
pub(super) fn external_referrer(r: &mut R, s: &mut String) {
    s.clear();
    let mut q = String::new();
    for i in 0..r.range(1, 4) {
        if i > 0 {
            q.push('+');
        }
        q.push_str(&r.pick(WORDS).to_lowercase());
    }
    // There is no template 7: it falls to the last one (a typepad blog), like 19.
    match r.below(20) {
        k @ (0..=6 | 8..=10) => search_referrer(r, s, k, &q),
        k => site_referrer(r, s, k, &q),
    }
}

/// A search engine's results for the query `q` (template `k`).
fn search_referrer(r: &mut R, s: &mut String, k: u32, q: &str) {
    use std::fmt::Write as _;
    let _ = match k {
        0..=6 => write!(
            s,
            "http://www.google.{}/search?q={q}&hl={}&start={}&sa=N",
            r.pick(&["com", "com", "com", "co.uk", "ca", "com.au", "de", "fr", "co.jp", "com.br", "co.in"]),
            r.pick(&["en", "en", "en", "de", "fr", "ja", "pt-BR", "es"]),
            r.below(4) * 10
        ),
        8 => write!(
            s,
            "http://www.google.com/search?q={q}&ie=utf-8&oe=utf-8&aq=t&rls=org.mozilla:en-US:official&client=firefox-a"
        ),
        9 => write!(
            s,
            "http://search.yahoo.com/search?p={q}&fr=yfp-t-501&toggle=1&cop=mss&ei=UTF-8"
        ),
        _ => write!(s, "http://search.live.com/results.aspx?q={q}&form=QBRE"),
    };
}

/// A blog, webmail or news page about the words of `q` (template `k`).
fn site_referrer(r: &mut R, s: &mut String, k: u32, q: &str) {
    use std::fmt::Write as _;
    let _ = match k {
        11 => write!(
            s,
            "http://www.bloglines.com/myblogs_display?sub={}&site={}",
            r.below(40_000_000),
            r.below(3_000_000)
        ),
        12 | 13 => write!(
            s,
            "http://{}.blogspot.com/{}/{:02}/{}.html",
            make_name(r),
            r.range(2004, 2007),
            r.range(1, 12),
            q.replace('+', "-")
        ),
        14 | 15 => write!(
            s,
            "http://www.{}.{}/blog/{}/{:02}/{:02}/{}",
            make_name(r),
            r.pick(&["com", "org", "net", "de", "co.uk"]),
            r.range(2004, 2007),
            r.range(1, 12),
            r.range(1, 28),
            q.replace('+', "-")
        ),
        16 => write!(
            s,
            "http://{}.livejournal.com/{}.html",
            make_name(r),
            r.below(900_000)
        ),
        17 => write!(
            s,
            "http://us.f{}.mail.yahoo.com/ym/ShowLetter?Idx={}&YY={}&order=down&sort=date&pos=0",
            r.range(100, 999),
            r.below(300),
            r.below(100_000)
        ),
        18 => write!(s, "http://digg.com/programming/{}", q.replace('+', "_")),
        _ => write!(
            s,
            "http://{}.typepad.com/{}/{}/{:02}/{}.html",
            make_name(r),
            make_name(r),
            r.range(2004, 2007),
            r.range(1, 12),
            q.replace('+', "_")
        ),
    };
}

pub(super) fn make_slug(r: &mut R) -> String {
    let n = match r.below(10) {
        0..=3 => 1,
        4..=7 => 2,
        _ => 3 + r.below(3),
    };
    let hyphen = r.bp(6500);
    let mut s = String::new();
    for i in 0..n {
        if i > 0 && hyphen {
            s.push('-');
        }
        let w = r.pick(WORDS);
        if i > 0 && hyphen && r.bp(2500) {
            s.push_str(&w.to_lowercase());
        } else {
            s.push_str(w);
        }
    }
    if r.bp(300) {
        s.push_str(&format!("-{}", r.range(1, 40)));
    }
    s
}

fn make_name(r: &mut R) -> String {
    let mut s = r.pick(WORDS).to_lowercase();
    if r.bp(5000) {
        s.push_str(&r.pick(WORDS).to_lowercase());
    }
    if r.bp(2000) {
        s.push_str(&r.below(100).to_string());
    }
    s
}
