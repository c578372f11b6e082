//! Text from the inputs made safe to print on a terminal: a log's URL or
//! user agent is written by whoever sent the request, and an escape
//! sequence in it (`ESC ] 0 ; title BEL`, `ESC [ 2 J`) printed raw would
//! retitle, clear or recolour the reader's terminal. Control characters
//! (C0, DEL and, in text, C1) are shown as `\xHH` escapes instead, as
//! GoAccess's curses view shows them as `^[`; everything else is kept.

use std::borrow::Cow;

/// `s` with its control characters written `\xHH` (or `\u{HH}` for C1).
pub fn visible(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            c if (c as u32) < 0x80 && c.is_control() => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Bytes `b` appended to `out` with their C0 and DEL bytes written `\xHH`
/// (bytes that may not be UTF-8, as `wf wf2` prints its keys).
pub fn visible_bytes(b: &[u8], out: &mut Vec<u8>) {
    for &c in b {
        if c < 0x20 || c == 0x7f {
            out.extend_from_slice(format!("\\x{c:02x}").as_bytes());
        } else {
            out.push(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_and_the_rest_kept() {
        assert!(matches!(visible("GET /a b €"), Cow::Borrowed(_)));
        let agent = "ag\x1b]0;pwned\x07ent \u{9b}31m\t\u{7f}";
        assert_eq!(visible(agent), r"ag\x1b]0;pwned\x07ent \u{9b}31m\x09\x7f");
        let mut out = Vec::new();
        visible_bytes(b"/a\x1b[31mRED \xff\n", &mut out);
        assert_eq!(out, b"/a\\x1b[31mRED \xff\\x0a");
    }
}
