//! Output of `wf pangram`: one line per window.

use crate::jobs::pangram::Window;

/// `{letters:>5}  {path}:{offset}  {text}`, safe to print on a terminal (as
/// ripgrep does): each run of ASCII whitespace in the text (space, \t, \n, \v,
/// \f, \r: C's `isspace`) shown as one space; any other control byte (ESC,
/// other C0, DEL, C1), bidirectional formatting character (U+202E, ...) and
/// every byte of invalid UTF-8, in the text or the path (its raw bytes),
/// shown as `\xNN`.
pub fn text_line(w: &Window, path: &[u8]) -> String {
    format!(
        "{:>5}  {}:{}  {}",
        w.letters,
        escaped(path, false),
        w.offset,
        escaped(&w.text, true)
    )
}

/// `bytes` as UTF-8 with control characters and invalid bytes as `\xNN`;
/// `collapse`: runs of ASCII whitespace as one space instead.
pub fn escaped(bytes: &[u8], collapse: bool) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut in_space = false;
    let hex = |out: &mut String, b: &[u8]| {
        for x in b {
            out.push_str(&format!("\\x{x:02x}"));
        }
    };
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            let space = collapse && (c.is_ascii_whitespace() || c == '\x0b');
            if space {
                if !in_space {
                    out.push(' ');
                }
            } else if crate::report::visible::hidden(c) {
                hex(&mut out, c.encode_utf8(&mut [0; 4]).as_bytes());
            } else {
                out.push(c);
            }
            in_space = space;
        }
        if !chunk.invalid().is_empty() {
            hex(&mut out, chunk.invalid());
            in_space = false;
        }
    }
    out
}

/// `{"path": P, "offset": O, "bytes": B, "letters": L, "text": T}`, the text as
/// lossy UTF-8, whitespace kept; a path that is not UTF-8 is `"path"` (lossy)
/// and `"path_bytes"` (its exact bytes, an array of numbers) beside it.
pub fn json_line(w: &Window, path: &[u8]) -> String {
    let path = match std::str::from_utf8(path) {
        Ok(p) => json_str(p),
        Err(_) => format!(
            "{}, \"path_bytes\": {}",
            json_str(&String::from_utf8_lossy(path)),
            serde_json::to_string(path).expect("bytes always serialize")
        ),
    };
    format!(
        "{{\"path\": {path}, \"offset\": {}, \"bytes\": {}, \"letters\": {}, \"text\": {}}}",
        w.offset,
        w.bytes,
        w.letters,
        json_str(&String::from_utf8_lossy(&w.text))
    )
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("a string always serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn win(text: &[u8]) -> Window {
        Window {
            input: 0,
            offset: 12,
            bytes: text.len() as u64,
            letters: 35,
            text: text.to_vec(),
        }
    }

    #[test]
    fn text_collapses_whitespace() {
        let w = win(b"The quick\r\n\r\n brown\t\x0b\x0cfox \xff jumps");
        assert_eq!(
            text_line(&w, b"a/b.txt"),
            "   35  a/b.txt:12  The quick brown fox \\xff jumps"
        );
    }

    #[test]
    fn text_escapes_control_bytes_in_text_and_path() {
        let w = win(b"\x1b[31mred\x1b[0m \x7f\x01 \xc2\x9b \xc3\xa9t\xc3\xa9 \xe2\x80");
        assert_eq!(
            text_line(&w, b"d\x1b]0;x\x07/\r\nf\xfe.txt"),
            "   35  d\\x1b]0;x\\x07/\\x0d\\x0af\\xfe.txt:12  \\x1b[31mred\\x1b[0m \\x7f\\x01 \\xc2\\x9b \
             \u{e9}t\u{e9} \\xe2\\x80"
        );
        // A right-to-left override, as its bytes (made `gnp.exe` read `exe.png`).
        let w = win("a \u{202e}gnp.exe".as_bytes());
        assert!(text_line(&w, b"f").ends_with("a \\xe2\\x80\\xaegnp.exe"));
    }

    #[test]
    fn json_keeps_a_non_utf8_path_exact() {
        let line = json_line(&win(b"abc"), b"a\xffb");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["path"], "a\u{fffd}b");
        assert_eq!(v["path_bytes"], serde_json::json!([97, 255, 98]));
        let line = json_line(&win(b"abc"), "\u{e9}\r".as_bytes());
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["path"], "\u{e9}\r");
        assert!(v.get("path_bytes").is_none());
    }

    #[test]
    fn json_keeps_text() {
        let w = win(b"a \"q\"\n\\b\xc3");
        let line = json_line(&w, b"x\"y.txt");
        assert_eq!(
            line,
            "{\"path\": \"x\\\"y.txt\", \"offset\": 12, \"bytes\": 9, \"letters\": 35, \
             \"text\": \"a \\\"q\\\"\\n\\\\b\u{fffd}\"}"
        );
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["text"], "a \"q\"\n\\b\u{fffd}");
        let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["path", "offset", "bytes", "letters", "text"]);
    }
}
