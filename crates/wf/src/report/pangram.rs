//! Output of `wf pangram`: one line per window.

use crate::jobs::pangram::Window;

/// `{letters:>5}  {path}:{offset}  {text}`, the text as lossy UTF-8 with each run
/// of ASCII whitespace (space, \t, \n, \v, \f, \r: C's `isspace`) shown as one space.
pub fn text_line(w: &Window, path: &str) -> String {
    let mut t = Vec::with_capacity(w.text.len());
    let mut in_space = false;
    for &b in &w.text {
        if b.is_ascii_whitespace() || b == 0x0b {
            if !in_space {
                t.push(b' ');
            }
            in_space = true;
        } else {
            t.push(b);
            in_space = false;
        }
    }
    format!(
        "{:>5}  {}:{}  {}",
        w.letters,
        path,
        w.offset,
        String::from_utf8_lossy(&t)
    )
}

/// `{"path": P, "offset": O, "bytes": B, "letters": L, "text": T}`, the text as
/// lossy UTF-8, whitespace kept.
pub fn json_line(w: &Window, path: &str) -> String {
    format!(
        "{{\"path\": {}, \"offset\": {}, \"bytes\": {}, \"letters\": {}, \"text\": {}}}",
        json_str(path),
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
            text_line(&w, "a/b.txt"),
            "   35  a/b.txt:12  The quick brown fox \u{fffd} jumps"
        );
    }

    #[test]
    fn json_keeps_text() {
        let w = win(b"a \"q\"\n\\b\xc3");
        let line = json_line(&w, "x\"y.txt");
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
