//! Text from the inputs made safe to print on a terminal: a log's URL or
//! user agent is written by whoever sent the request, and an escape
//! sequence in it (`ESC ] 0 ; title BEL`, `ESC [ 2 J`) printed raw would
//! retitle, clear or recolour the reader's terminal. Control characters
//! (C0, DEL and, in text, C1) are shown as `\xHH` escapes instead, as
//! GoAccess's curses view shows them as `^[`. So are the bidirectional
//! marks, overrides and isolates (U+061C, U+200E-F, U+202A-E, U+2066-9): a
//! URL `/\u{202e}gnp.exe` printed raw read `/exe.png`. Everything else is
//! kept.

use std::borrow::Cow;

/// A character shown escaped: a control character or a bidirectional
/// formatting one.
pub fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}')
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// Whether `s` has a character [`visible`] escapes.
pub fn needs_escape(s: &str) -> bool {
    s.chars().any(hidden)
}

/// `s` with its control characters written `\xHH` (or `\u{HH}` for C1),
/// and its bidirectional formatting characters `\u{HHHH}`.
pub fn visible(s: &str) -> Cow<'_, str> {
    if !needs_escape(s) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            c if (c as u32) < 0x80 && c.is_control() => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if hidden(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Bytes `b` appended to `out` with their C0 and DEL bytes written `\xHH`
/// and the UTF-8 of a bidirectional formatting character `\u{HHHH}` (bytes
/// that may not be UTF-8, as `wf wf2` prints its keys).
pub fn visible_bytes(b: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let bidi = match c {
            0xd8 | 0xe2 => b.get(i..(i + 2 + usize::from(c == 0xe2)).min(b.len())),
            _ => None,
        }
        .and_then(|s| std::str::from_utf8(s).ok())
        .and_then(|s| s.chars().next())
        .filter(|&ch| hidden(ch));
        if let Some(ch) = bidi {
            out.extend_from_slice(format!("\\u{{{:x}}}", ch as u32).as_bytes());
            i += ch.len_utf8();
            continue;
        }
        if c < 0x20 || c == 0x7f {
            out.extend_from_slice(format!("\\x{c:02x}").as_bytes());
        } else {
            out.push(c);
        }
        i += 1;
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

    /// A right-to-left override shown raw made `/\u{202e}gnp.exe` read
    /// `/exe.png`; other marks of the same blocks (dashes, quotes) are kept.
    #[test]
    fn bidirectional_formatting_is_shown() {
        let url = "/\u{202e}gnp.exe \u{2066}x\u{2069} \u{200f}\u{61c} \u{2014}\u{201c}";
        let shown = "/\\u{202e}gnp.exe \\u{2066}x\\u{2069} \\u{200f}\\u{61c} \u{2014}\u{201c}";
        assert_eq!(visible(url), shown);
        let mut out = Vec::new();
        visible_bytes(url.as_bytes(), &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), visible(url));
        let mut out = Vec::new();
        visible_bytes(b"cut \xe2\x80", &mut out);
        assert_eq!(out, b"cut \xe2\x80");
    }
}
