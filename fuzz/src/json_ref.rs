//! The `jsonl` target's reference: a plain recursive-descent JSON reader
//! (RFC 8259) written for this target, independent of `serde_json`, which wf
//! reads records with.
//!
//! What it takes from serde_json's documented behaviour, since wf inherits
//! it: nesting deeper than 127 arrays and objects is an error (serde_json's
//! recursion limit of 128); a lone UTF-16 surrogate in a `\u` escape is an
//! error; a number too large for a float is an error; a repeated key keeps
//! its first place and takes its last value; an integer that fits neither
//! `i64` nor `u64` is read as a float (serde_json keeps no number's text):
//! wf finds such an integer's text again in the record ([`Num::Big`]; see
//! the target).

/// A JSON value; numbers keep their text.
#[derive(Debug, Clone, PartialEq)]
pub enum J {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

/// A number as serde_json holds it: an integer (of `i64` or `u64`) or a float;
/// `Big` is an integer beyond both, which serde_json holds as a float.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Int(i128),
    Float(f64),
    Big(f64),
}

impl Num {
    pub fn of(text: &str) -> Num {
        let integer = !text.contains(['.', 'e', 'E']);
        match text.parse::<i128>() {
            Ok(n) if integer && n >= i64::MIN as i128 && n <= u64::MAX as i128 => {
                // serde_json reads `-0` as the float -0.0.
                if n == 0 && text.starts_with('-') {
                    Num::Float(-0.0)
                } else {
                    Num::Int(n)
                }
            }
            _ if integer => Num::Big(text.parse().expect("a JSON number")),
            _ => Num::Float(text.parse().expect("a JSON number")),
        }
    }

    /// The float serde_json holds, for `Float` and `Big`.
    pub fn float(self) -> Option<f64> {
        match self {
            Num::Float(x) | Num::Big(x) => Some(x),
            Num::Int(_) => None,
        }
    }

    /// Equal as serde_json would hold them (floats bit for bit).
    pub fn same(self, other: Num) -> bool {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a == b,
            (Num::Int(_), _) | (_, Num::Int(_)) => false,
            (a, b) => a.float().map(f64::to_bits) == b.float().map(f64::to_bits),
        }
    }
}

/// Structural equality, numbers as serde_json holds them.
pub fn same(a: &J, b: &J) -> bool {
    match (a, b) {
        (J::Num(x), J::Num(y)) => Num::of(x).same(Num::of(y)),
        (J::Arr(x), J::Arr(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b)),
        (J::Obj(x), J::Obj(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| a.0 == b.0 && same(&a.1, &b.1))
        }
        _ => a == b,
    }
}

struct P<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
    /// Every number's text, in order (a repeated key's earlier values too).
    nums: Vec<String>,
}

/// A record that is one JSON object (whitespace around it allowed): its
/// members, repeated keys merged. `None` when it is anything else.
pub fn object(r: &[u8]) -> Option<Vec<(String, J)>> {
    match value_of(r)? {
        J::Obj(m) => Some(m),
        _ => None,
    }
}

/// Any JSON text (whitespace around it allowed).
pub fn value_of(r: &[u8]) -> Option<J> {
    parsed(r).map(|(v, _)| v)
}

/// [`value_of`], and the text of every number in it, in order.
fn parsed(r: &[u8]) -> Option<(J, Vec<String>)> {
    let mut p = P {
        s: r,
        i: 0,
        depth: 0,
        nums: Vec::new(),
    };
    p.ws();
    let v = p.value()?;
    p.ws();
    (p.i == r.len()).then_some((v, p.nums))
}

impl P<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    fn word(&mut self, w: &[u8], v: J) -> Option<J> {
        (self.s.get(self.i..self.i + w.len())? == w).then(|| {
            self.i += w.len();
            v
        })
    }

    fn value(&mut self) -> Option<J> {
        match self.peek()? {
            b'{' | b'[' => {
                self.depth += 1;
                if self.depth > 127 {
                    return None;
                }
                let v = if self.peek()? == b'{' {
                    self.obj()
                } else {
                    self.arr()
                };
                self.depth -= 1;
                v
            }
            b'"' => self.string().map(J::Str),
            b't' => self.word(b"true", J::Bool(true)),
            b'f' => self.word(b"false", J::Bool(false)),
            b'n' => self.word(b"null", J::Null),
            _ => self.number(),
        }
    }

    fn obj(&mut self) -> Option<J> {
        self.eat(b'{')?;
        let mut m: Vec<(String, J)> = Vec::new();
        self.ws();
        if self.eat(b'}').is_some() {
            return Some(J::Obj(m));
        }
        loop {
            self.ws();
            let k = self.string()?;
            self.ws();
            self.eat(b':')?;
            self.ws();
            let v = self.value()?;
            match m.iter_mut().find(|(key, _)| *key == k) {
                Some(e) => e.1 = v,
                None => m.push((k, v)),
            }
            self.ws();
            if self.eat(b',').is_none() {
                self.eat(b'}')?;
                return Some(J::Obj(m));
            }
        }
    }

    fn arr(&mut self) -> Option<J> {
        self.eat(b'[')?;
        let mut a = Vec::new();
        self.ws();
        if self.eat(b']').is_some() {
            return Some(J::Arr(a));
        }
        loop {
            self.ws();
            a.push(self.value()?);
            self.ws();
            if self.eat(b',').is_none() {
                self.eat(b']')?;
                return Some(J::Arr(a));
            }
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = std::str::from_utf8(self.s.get(self.i..self.i + 4)?).ok()?;
        if !h.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        self.i += 4;
        u32::from_str_radix(h, 16).ok()
    }

    fn string(&mut self) -> Option<String> {
        self.eat(b'"')?;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = self.peek()?;
            self.i += 1;
            match c {
                b'"' => return String::from_utf8(out).ok(),
                0..=0x1f => return None,
                b'\\' => {
                    let e = self.peek()?;
                    self.i += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = match hi {
                                0xd800..=0xdbff => {
                                    self.eat(b'\\')?;
                                    self.eat(b'u')?;
                                    let lo = self.hex4()?;
                                    if !(0xdc00..=0xdfff).contains(&lo) {
                                        return None;
                                    }
                                    0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                                }
                                0xdc00..=0xdfff => return None,
                                c => c,
                            };
                            char::from_u32(code)?
                        }
                        _ => return None,
                    };
                    out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                }
                c => out.push(c),
            }
        }
    }

    fn number(&mut self) -> Option<J> {
        let start = self.i;
        let _ = self.eat(b'-');
        let digits = |p: &mut Self| {
            let from = p.i;
            while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                p.i += 1;
            }
            p.i > from
        };
        if self.eat(b'0').is_none() && !digits(self) {
            return None;
        }
        if self.eat(b'.').is_some() && !digits(self) {
            return None;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !digits(self) {
                return None;
            }
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).ok()?;
        let x: f64 = text.parse().ok()?;
        self.nums.push(text.to_string());
        x.is_finite().then(|| J::Num(text.to_string()))
    }
}

/// The texts of the integers beyond 64 bits in the record `r` (a repeated
/// key's earlier values too) whose float is `x`, in order: where wf looks
/// for a `Big` number's text.
pub fn big_texts(r: &[u8], x: f64) -> Vec<String> {
    let nums = parsed(r).map(|(_, n)| n).unwrap_or_default();
    nums.into_iter()
        .filter(|t| Num::of(t) == Num::Big(x))
        .collect()
}

/// The one text [`big_texts`] finds (`None`: none, or several that differ).
pub fn big_text(r: &[u8], x: f64) -> Option<String> {
    let found = big_texts(r, x);
    let first = found.first()?.clone();
    found.iter().all(|t| *t == first).then_some(first)
}
