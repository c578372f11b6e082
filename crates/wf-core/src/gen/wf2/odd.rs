//! Odd lines: a well-formed line turned into a malformed one.

use super::lines::Gen;

impl<'a> Gen<'a> {
    /// Turn the well-formed line starting at `start` into a malformed one.
    pub(super) fn oddify(&mut self, start: usize) {
        let end = self.out.len() - 1; // index of the '\n'
        match self.r.below(64) {
            0..=6 => self.odd_short(start, end),
            7..=13 => self.odd_empty(start),
            14..=20 => self.odd_tabs(start, end),
            21..=27 => self.odd_leading_spaces(start),
            28..=34 => self.odd_invalid_utf8(start, end),
            35..=36 => self.odd_very_long(start, end),
            37..=43 => self.odd_get_too_few_fields(start, end),
            // CRLF ending.
            44..=50 => self.out.insert(end, b'\r'),
            51..=57 => self.odd_nul(start, end),
            _ => self.odd_garbage(start),
        }
    }

    /// Short junk.
    fn odd_short(&mut self, start: usize, end: usize) {
        let len = end - start;
        let keep = self.r.range(1, 24.min(len as u32)) as usize;
        self.out.truncate(start + keep);
        // Keep it free of the quote that would make it look like a request.
        for b in &mut self.out[start..] {
            if *b == b'"' {
                *b = b'x';
            }
        }
        self.out.push(b'\n');
    }

    /// Empty line.
    fn odd_empty(&mut self, start: usize) {
        self.out.truncate(start);
        self.out.push(b'\n');
    }

    /// Tabs instead of spaces.
    fn odd_tabs(&mut self, start: usize, end: usize) {
        for b in &mut self.out[start..end] {
            if *b == b' ' {
                *b = b'\t';
            }
        }
    }

    /// Leading spaces.
    fn odd_leading_spaces(&mut self, start: usize) {
        let n = self.r.range(1, 4) as usize;
        self.out.splice(start..start, std::iter::repeat_n(b' ', n));
    }

    /// Invalid UTF-8.
    fn odd_invalid_utf8(&mut self, start: usize, end: usize) {
        let at = start + self.r.below((end - start) as u32) as usize;
        let bad: &[u8] = match self.r.below(4) {
            0 => b"\xff",
            1 => b"\xc3\x28",
            2 => b"\xe2\x82",
            _ => b"\xfe\xfe\xff",
        };
        self.out.splice(at..at, bad.iter().copied());
    }

    /// Very long line: a well-formed request with a huge query string.
    fn odd_very_long(&mut self, start: usize, end: usize) {
        let at = self.request_uri_end(start, end);
        let n = self.r.range(10_000, 50_000) as usize;
        let mut pad = Vec::with_capacity(n + 3);
        pad.extend_from_slice(b"?q=");
        let w = self.random_word();
        while pad.len() < n {
            pad.extend_from_slice(w);
            pad.extend_from_slice(b"%20");
        }
        self.out.splice(at..at, pad);
    }

    /// `"GET` but too few fields.
    fn odd_get_too_few_fields(&mut self, start: usize, end: usize) {
        let cut = self.request_uri_end(start, end);
        self.out.truncate(cut);
        if self.r.bp(5000) {
            self.out.extend_from_slice(b" HTTP/1.1\"");
        }
        self.out.push(b'\n');
    }

    /// NUL bytes.
    fn odd_nul(&mut self, start: usize, end: usize) {
        let at = start + self.r.below((end - start) as u32) as usize;
        let n = self.r.range(1, 3) as usize;
        self.out.splice(at..at, std::iter::repeat_n(0u8, n));
    }

    /// Fields out of order / garbage words.
    fn odd_garbage(&mut self, start: usize) {
        self.out.truncate(start);
        let w = self.random_word();
        self.out.extend_from_slice(b"\"GET ");
        self.out.extend_from_slice(w);
        self.out.extend_from_slice(b" - -\n");
    }

    /// Where the request's URI ends in the line `start..end`: before " HTTP/1.x"
    /// (the first " H"), or at `end`.
    fn request_uri_end(&self, start: usize, end: usize) -> usize {
        self.out[start..end]
            .windows(2)
            .position(|w| w == b" H")
            .map_or(end, |i| start + i)
    }

    fn random_word(&mut self) -> &'a [u8] {
        let p = self.p;
        p.s(p.words[self.r.below(p.words.len() as u32) as usize])
    }
}
