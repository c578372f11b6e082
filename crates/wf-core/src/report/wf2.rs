//! Output of `wf wf2`: the reference's text report, or one line of JSON.
//!
//! [`text`] returns the whole report, ending with the blank line after the last
//! section; [`json`] returns one line without its newline. Keys are bytes: the
//! text prints them raw, as the 2008 reference did (a key cut at 60 bytes may end
//! inside a UTF-8 sequence, as it did there), but for a terminal, where their
//! control bytes are shown as escapes (`visible`: a URL with an escape
//! sequence in it would act on the terminal); JSON shows invalid UTF-8 as U+FFFD.

use std::fmt::Write as _;
use std::io::Write as _;

use crate::jobs::wf2::Wf2Report;

/// Section titles, in the order of [`Wf2Report::top`].
const TITLES: [&str; 5] = [
    "Top URIs by hit:",
    "Top URIs by bytes:",
    "Top 404s:",
    "Top client addresses:",
    "Top referrers:",
];

/// JSON names of the lists, in the order of [`Wf2Report::top`].
const NAMES: [&str; 5] = ["uri_hits", "uri_bytes", "404s", "clients", "referrers"];

/// Keys longer than this many bytes are cut in the text report (plus `...`).
const TEXT_KEY_MAX: usize = 60;

/// The reference report: `N resources, M 404s, K clients`, a blank line, then five
/// sections, each entry `printf(" %10d: %s")` (bytes: `" %9.1fM: %s"` in MiB), keys
/// over 60 bytes cut to 60 plus `...`, a blank line after each section (so the
/// result ends with `"\n\n"`; print it as is). Keys are written as raw bytes,
/// or (`terminal`) with their control bytes as `\xHH`.
pub fn text(r: &Wf2Report, terminal: bool) -> Vec<u8> {
    let key = |s: &mut Vec<u8>, k: &[u8]| match terminal {
        true => super::visible::visible_bytes(k, s),
        false => s.extend_from_slice(k),
    };
    let mut s: Vec<u8> = Vec::with_capacity(4096);
    let _ = write!(
        s,
        "{} resources, {} 404s, {} clients\n\n",
        r.resources, r.not_found, r.clients
    );
    for (i, (title, list)) in TITLES.iter().zip(r.top.iter()).enumerate() {
        s.extend_from_slice(title.as_bytes());
        s.push(b'\n');
        for (k, v) in list {
            if i == 1 {
                let _ = write!(s, " {:>9.1}M: ", *v as f64 / 1048576.0);
            } else {
                let _ = write!(s, " {:>10}: ", v);
            }
            if k.len() > TEXT_KEY_MAX {
                key(&mut s, &k[..TEXT_KEY_MAX]);
                s.extend_from_slice(b"...");
            } else {
                key(&mut s, k);
            }
            s.push(b'\n');
        }
        s.push(b'\n');
    }
    s
}

fn push_json_str(s: &mut String, k: &[u8]) {
    let k = String::from_utf8_lossy(k);
    // serde_json escapes exactly what Python's json.dumps(ensure_ascii=False) does.
    s.push_str(&serde_json::to_string(&*k).expect("string serialises"));
}

/// `{"lines": N, "resources": N, "404s": N, "clients": N, "top": {"uri_hits":
/// [[key, value], ...], "uri_bytes": [...], "404s": [...], "clients": [...],
/// "referrers": [...]}}` on one line (the layout of Python's `json.dumps`).
pub fn json(r: &Wf2Report) -> String {
    let mut s = String::with_capacity(4096);
    let _ = write!(
        s,
        "{{\"lines\": {}, \"resources\": {}, \"404s\": {}, \"clients\": {}, \"top\": {{",
        r.lines, r.resources, r.not_found, r.clients
    );
    for (i, (name, list)) in NAMES.iter().zip(r.top.iter()).enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "\"{name}\": [");
        for (j, (k, v)) in list.iter().enumerate() {
            if j > 0 {
                s.push_str(", ");
            }
            s.push('[');
            push_json_str(&mut s, k);
            let _ = write!(s, ", {v}]");
        }
        s.push(']');
    }
    s.push_str("}}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Wf2Report {
        Wf2Report {
            lines: 9,
            resources: 2,
            not_found: 1,
            clients: 3,
            top: [
                vec![(b"/a".to_vec(), 12), (vec![b'x'; 61], 1)],
                vec![(b"/a".to_vec(), 262144), (b"/b\xff".to_vec(), 0)],
                vec![(b"/n\"\\\x01\t".to_vec(), 1)],
                vec![],
                vec![(b"".to_vec(), 4)],
            ],
            not_get: 0,
            too_few_fields: 0,
        }
    }

    #[test]
    fn text_layout() {
        // The invalid byte 0xff is printed raw, as the reference printed keys.
        let want = [
            format!(
                "2 resources, 1 404s, 3 clients\n\nTop URIs by hit:\n         12: /a\n          1: {}...\n\n\
                 Top URIs by bytes:\n       0.2M: /a\n       0.0M: /b",
                "x".repeat(60)
            )
            .into_bytes(),
            vec![0xff],
            "\n\nTop 404s:\n          1: /n\"\\\x01\t\n\nTop client addresses:\n\n\
             Top referrers:\n          4: \n\n"
                .as_bytes()
                .to_vec(),
        ]
        .concat();
        assert_eq!(text(&report(), false), want);
        // On a terminal the 404's \x01 and tab are shown as escapes.
        let shown = String::from_utf8_lossy(&text(&report(), true)).into_owned();
        assert!(shown.contains("1: /n\"\\\\x01\\x09\n"), "{shown}");
    }

    #[test]
    fn json_layout() {
        let want = "{\"lines\": 9, \"resources\": 2, \"404s\": 1, \"clients\": 3, \"top\": {\
            \"uri_hits\": [[\"/a\", 12], [\"".to_string()
            + &"x".repeat(61)
            + "\", 1]], \"uri_bytes\": [[\"/a\", 262144], [\"/b\u{fffd}\", 0]], \
            \"404s\": [[\"/n\\\"\\\\\\u0001\\t\", 1]], \"clients\": [], \"referrers\": [[\"\", 4]]}}";
        assert_eq!(json(&report()), want);
        let v: serde_json::Value = serde_json::from_str(&json(&report())).unwrap();
        assert_eq!(v["top"]["404s"][0][0], "/n\"\\\u{1}\t");
    }
}
