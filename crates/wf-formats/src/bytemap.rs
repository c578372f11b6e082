//! Bitmaps of a few chosen bytes over one piece of records, for parsers that
//! hop from delimiter to delimiter (the log formats).
//!
//! Why: a combined-log record is split at nine delimiters; finding each with a
//! byte loop or a `memchr` call (whose set-up is paid per field) made
//! `LogParser::parse` and memchr 68% of `SELECT status, count(*)` (perf, 1 GiB
//! log). Here one SIMD pass over the piece (the engine hands jobs ~32 KiB pieces)
//! marks every position of up to [`MAX`] bytes, one bit per byte, and a search is
//! a masked word and `trailing_zeros`. The piece's maps (MAX x 1/8 of it) stay in
//! L1/L2 while its records are parsed.

/// The most bytes one map marks.
pub const MAX: usize = 6;

/// Marks of up to [`MAX`] bytes over the piece last given to [`ByteMap::build`].
pub struct ByteMap {
    needles: Vec<u8>,
    /// The class (bit plane) of each needle: several bytes may share one.
    plane: Vec<usize>,
    planes: usize,
    /// For each byte value, its class (index in `needles`), or `NONE`.
    class: [u8; 256],
    /// Class-major: class `k`'s word `w` is `words[k * stride + w]`.
    words: Vec<u64>,
    stride: usize,
    simd: Simd,
}

/// The vector instructions a build uses: the best the processor has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Simd {
    None,
    Avx2,
    Avx512,
}

impl Simd {
    /// The levels this processor runs, plain first (the tests build with each).
    fn available() -> Vec<Simd> {
        let mut v = vec![Simd::None];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                v.push(Simd::Avx2);
            }
            if std::arch::is_x86_feature_detected!("avx512bw") {
                v.push(Simd::Avx512);
            }
        }
        v
    }

    fn best() -> Simd {
        *Simd::available().last().expect("plain is always there")
    }
}

const NONE: u8 = u8::MAX;

impl ByteMap {
    /// A map of `needles` (duplicates ignored; bytes past the first [`MAX`] are
    /// not marked, and [`ByteMap::class`] says so).
    pub fn new(needles: &[u8]) -> Self {
        let mut uniq: Vec<u8> = Vec::new();
        for &c in needles {
            if !uniq.contains(&c) && uniq.len() < MAX {
                uniq.push(c);
            }
        }
        let singles: Vec<&[u8]> = uniq.iter().map(std::slice::from_ref).collect();
        Self::with_classes(&singles)
    }

    /// A map with one class per group of bytes: a byte of a group is marked in
    /// its group's plane (the whitespace of `fields` is one class, so a field's
    /// end is one search, not five). At most [`MAX`] bytes in all are marked.
    pub fn with_classes(groups: &[&[u8]]) -> Self {
        let mut class = [NONE; 256];
        let (mut needles, mut plane) = (Vec::new(), Vec::new());
        for (k, group) in groups.iter().enumerate() {
            for &c in *group {
                if class[c as usize] == NONE && needles.len() < MAX {
                    class[c as usize] = k as u8;
                    needles.push(c);
                    plane.push(k);
                }
            }
        }
        ByteMap {
            planes: plane.last().map_or(0, |k| k + 1),
            needles,
            plane,
            class,
            words: Vec::new(),
            stride: 0,
            simd: Simd::best(),
        }
    }

    /// The class of byte `c`, if it is marked.
    #[inline(always)]
    pub fn class(&self, c: u8) -> Option<usize> {
        let k = self.class[c as usize];
        (k != NONE).then_some(k as usize)
    }

    /// Mark the needles of `d`.
    pub fn build(&mut self, d: &[u8]) {
        self.stride = d.len().div_ceil(64);
        // Every word is written below, so the words of the last piece are not
        // cleared first (that `memset` was 2% of the instructions of the Wide
        // Finder 2 report as SQL, callgrind).
        self.words.resize(self.planes * self.stride, 0);
        let full = d.len() / 64;
        self.build_blocks(&d[..full * 64]);
        if full < self.stride {
            for k in 0..self.planes {
                self.words[k * self.stride + full] = 0;
            }
            for (i, &c) in d[full * 64..].iter().enumerate() {
                if let Some(k) = self.class(c) {
                    self.words[k * self.stride + full] |= 1 << i;
                }
            }
        }
    }

    /// The first position in `from..end` (of the piece) holding the byte of
    /// class `k`.
    #[inline(always)]
    pub fn next(&self, k: usize, from: usize, end: usize) -> Option<usize> {
        self.find(k, from, end)
    }

    /// The runs of unmarked bytes of `from..end` between bytes of class `k`
    /// ([`Edges`]).
    #[inline(always)]
    pub fn edges(&self, k: usize, from: usize, end: usize) -> Edges<'_> {
        let words = &self.words[k * self.stride..(k + 1) * self.stride];
        let j = from >> 6;
        let Some(&w) = words.get(j) else {
            return Edges {
                words,
                j,
                m: 0,
                end: 0,
            };
        };
        let carry = if j > 0 { words[j - 1] >> 63 } else { 0 };
        // The byte before `from` counts as marked, so an unmarked one at
        // `from` starts a run.
        let before = (w << 1) | carry | (1 << (from & 63));
        let m = (w ^ before) & (u64::MAX << (from & 63));
        Edges { words, j, m, end }
    }

    /// The first set bit at or after `from` of class `k`'s words, if before `end`.
    #[inline(always)]
    fn find(&self, k: usize, from: usize, end: usize) -> Option<usize> {
        let words = &self.words[k * self.stride..(k + 1) * self.stride];
        let mut j = from >> 6;
        let mut m = *words.get(j)? & (u64::MAX << (from & 63));
        loop {
            if m != 0 {
                let p = (j << 6) + m.trailing_zeros() as usize;
                return (p < end).then_some(p);
            }
            j += 1;
            if j << 6 >= end {
                return None;
            }
            m = words[j];
        }
    }

    fn build_blocks(&mut self, d: &[u8]) {
        #[cfg(target_arch = "x86_64")]
        {
            match self.simd {
                // SAFETY: AVX-512 BW was detected at run time.
                Simd::Avx512 => return unsafe { self.build_avx512(d) },
                // SAFETY: AVX2 was detected at run time.
                Simd::Avx2 => return unsafe { self.build_avx2(d) },
                Simd::None => {}
            }
        }
        for (j, b) in d.chunks_exact(64).enumerate() {
            for k in 0..self.planes {
                self.words[k * self.stride + j] = 0;
            }
            for (&c, &k) in self.needles.iter().zip(&self.plane) {
                let mut m = 0u64;
                for (i, &x) in b.iter().enumerate() {
                    m |= ((x == c) as u64) << i;
                }
                self.words[k * self.stride + j] |= m;
            }
        }
    }

    /// The AVX2 build: each byte's needles found by two table lookups
    /// (`vpshufb` on its low and its high nibble; needle `i` is bit `i` of
    /// both tables, so their AND has bit `i` set exactly where the byte is
    /// needle `i`), then one compare per class, whatever the number of its
    /// bytes. A compare per needle ORed per class (six for `fields`) made the
    /// build 18% of the instructions of a six-column `fields` scan (perf, 1 GiB
    /// log); this form takes 6.5% fewer user instructions for the whole scan
    /// (6.16 to 5.76 G) and about 3% fewer cycles (perf stat, `ci` builds).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn build_avx2(&mut self, d: &[u8]) {
        use std::arch::x86_64::*;
        let (low, high, bits) = self.nibble_tables();
        let table = |t: &[u8; 16]| {
            // SAFETY: `t` holds 16 bytes.
            _mm256_broadcastsi128_si256(unsafe { _mm_loadu_si128(t.as_ptr() as *const __m128i) })
        };
        let (low, high) = (table(&low), table(&high));
        let nibble = _mm256_set1_epi8(0x0f);
        let class: Vec<__m256i> = bits.iter().map(|&b| _mm256_set1_epi8(b as i8)).collect();
        let needles = |x: __m256i| {
            let l = _mm256_shuffle_epi8(low, _mm256_and_si256(x, nibble));
            let h = _mm256_shuffle_epi8(high, _mm256_and_si256(_mm256_srli_epi16(x, 4), nibble));
            _mm256_and_si256(l, h)
        };
        let zero = _mm256_setzero_si256();
        // The bytes of 32 that are not of the class whose needles are `c`.
        let outside = |t: __m256i, c: __m256i| {
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(t, c), zero)) as u32 as u64
        };
        for (j, b) in d.chunks_exact(64).enumerate() {
            // SAFETY: `b` holds 64 bytes.
            let (lo, hi) = unsafe {
                (
                    _mm256_loadu_si256(b.as_ptr() as *const __m256i),
                    _mm256_loadu_si256(b.as_ptr().add(32) as *const __m256i),
                )
            };
            let (lo, hi) = (needles(lo), needles(hi));
            for (k, &c) in class.iter().enumerate() {
                self.words[k * self.stride + j] = !(outside(lo, c) | outside(hi, c) << 32);
            }
        }
    }
}

impl ByteMap {
    /// The lookup tables of the vector builds: needle `i` is bit `i` of the
    /// entry of its low nibble in the first table and of its high nibble in
    /// the second, and of its class's entry in the third. A class may be
    /// numbered past MAX (a group whose bytes are all in earlier groups marks
    /// none), hence one entry per plane.
    fn nibble_tables(&self) -> ([u8; 16], [u8; 16], Vec<u8>) {
        let (mut low, mut high, mut bits) = ([0u8; 16], [0u8; 16], vec![0u8; self.planes]);
        for (i, (&c, &k)) in self.needles.iter().zip(&self.plane).enumerate() {
            low[(c & 15) as usize] |= 1 << i;
            high[(c >> 4) as usize] |= 1 << i;
            bits[k] |= 1 << i;
        }
        (low, high, bits)
    }

    /// The AVX-512 build: [`ByteMap::build_avx2`]'s lookups on 64 bytes at a
    /// time, and each class's word straight from one test into a mask
    /// register (no byte masks moved out and joined). On the AMD EPYC host:
    /// the status count over the 1 GiB log 6% less time (0.260 to 0.244 s,
    /// 11 interleaved rounds, `ci` builds), the Wide Finder 2 report 1%, 1BRC
    /// the same (its records are short: the map is a small part of it).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn build_avx512(&mut self, d: &[u8]) {
        use std::arch::x86_64::*;
        let (low, high, bits) = self.nibble_tables();
        let table = |t: &[u8; 16]| {
            // SAFETY: `t` holds 16 bytes.
            _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(t.as_ptr() as *const __m128i) })
        };
        let (low, high) = (table(&low), table(&high));
        let nibble = _mm512_set1_epi8(0x0f);
        let class: Vec<__m512i> = bits.iter().map(|&b| _mm512_set1_epi8(b as i8)).collect();
        for (j, b) in d.chunks_exact(64).enumerate() {
            // SAFETY: `b` holds 64 bytes.
            let x = unsafe { _mm512_loadu_si512(b.as_ptr() as *const _) };
            let l = _mm512_shuffle_epi8(low, _mm512_and_si512(x, nibble));
            let h = _mm512_shuffle_epi8(high, _mm512_and_si512(_mm512_srli_epi16(x, 4), nibble));
            let t = _mm512_and_si512(l, h);
            for (k, &c) in class.iter().enumerate() {
                self.words[k * self.stride + j] = _mm512_test_epi8_mask(t, c);
            }
        }
    }
}

/// The positions in a range where a byte's class membership differs from the
/// byte before it (that before the range counting as marked): the start of a
/// run of unmarked bytes, its end, the next start, and so on. The fields of
/// `fields` are such runs between whitespace; the edges come off one word with
/// `trailing_zeros` and a cleared bit, where a search per field start and end
/// set up its word and mask again: that took 8% more instructions and 10% more
/// cycles to scan six columns of the 1 GiB Wide Finder 2 log (perf stat, `ci`
/// builds). A list of every edge of the piece, made without a branch per edge,
/// took 19% more (the fields after the last one used were listed too).
pub struct Edges<'a> {
    words: &'a [u64],
    /// The word of the edges left in `m`.
    j: usize,
    m: u64,
    end: usize,
}

impl Edges<'_> {
    /// Pass `n` edges (fewer where the range ends first): no position is
    /// made or checked for them (the fields of `fields` that no column uses).
    #[inline(always)]
    pub fn skip_edges(&mut self, n: usize) {
        for _ in 0..n {
            while self.m == 0 {
                self.j += 1;
                if self.j << 6 >= self.end {
                    return;
                }
                let w = self.words[self.j];
                self.m = w ^ ((w << 1) | (self.words[self.j - 1] >> 63));
            }
            self.m &= self.m - 1;
        }
    }
}

impl Iterator for Edges<'_> {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        while self.m == 0 {
            self.j += 1;
            if self.j << 6 >= self.end {
                return None;
            }
            let w = self.words[self.j];
            self.m = w ^ ((w << 1) | (self.words[self.j - 1] >> 63));
        }
        let p = (self.j << 6) + self.m.trailing_zeros() as usize;
        self.m &= self.m - 1;
        (p < self.end).then_some(p)
    }
}

/// The marks of two classes in order (see [`ByteMap::marks`]): a CSV record
/// ends at a separator and its fields at delimiters, and both come off one
/// word, the two planes' words or-ed, with `trailing_zeros` and a cleared bit.
/// A search of each plane per field (the end of the record, then each
/// delimiter before it) was about 100 instructions per 1BRC record of two
/// fields (callgrind).
pub struct Marks<'a> {
    a: &'a [u64],
    b: &'a [u64],
    /// The word of the marks left in `m`, and its first class's word.
    j: usize,
    m: u64,
    wa: u64,
}

impl ByteMap {
    /// The marks of classes `a` and `b` at or after `from`.
    #[inline(always)]
    pub fn marks(&self, a: usize, b: usize, from: usize) -> Marks<'_> {
        let plane = |k: usize| &self.words[k * self.stride..(k + 1) * self.stride];
        let (a, b) = (plane(a), plane(b));
        let j = from >> 6;
        let (wa, m) = match (a.get(j), b.get(j)) {
            (Some(&x), Some(&y)) => (x, (x | y) & (u64::MAX << (from & 63))),
            _ => (0, 0),
        };
        Marks { a, b, j, m, wa }
    }
}

impl Marks<'_> {
    /// The next mark: its position, and whether it is of the first class.
    #[inline(always)]
    pub fn next_mark(&mut self) -> Option<(usize, bool)> {
        while self.m == 0 {
            self.j += 1;
            let (Some(&x), Some(&y)) = (self.a.get(self.j), self.b.get(self.j)) else {
                return None;
            };
            (self.wa, self.m) = (x, x | y);
        }
        let t = self.m.trailing_zeros();
        self.m &= self.m - 1;
        Some(((self.j << 6) + t as usize, self.wa >> t & 1 == 1))
    }
}

/// How a field's end is searched: the first `c` at or after `pos` of record `r`.
pub(crate) trait Finder {
    fn find_byte(&self, r: &[u8], pos: usize, c: u8) -> Option<usize>;
}

/// A search of the record's bytes.
pub(crate) struct Plain;

impl Finder for Plain {
    #[inline(always)]
    fn find_byte(&self, r: &[u8], pos: usize, c: u8) -> Option<usize> {
        super::next_byte(r, pos, c)
    }
}

/// A look-up in the piece's [`ByteMap`]; `r` starts at `base` of the piece.
pub(crate) struct Mapped<'a> {
    pub map: &'a ByteMap,
    pub base: usize,
}

impl Finder for Mapped<'_> {
    #[inline(always)]
    fn find_byte(&self, r: &[u8], pos: usize, c: u8) -> Option<usize> {
        match self.map.class(c) {
            Some(k) => {
                let at = self.map.next(k, self.base + pos, self.base + r.len())?;
                Some(at - self.base)
            }
            None => super::next_byte(r, pos, c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pseudo-random bytes of `alphabet`, of lengths around the 64-byte words.
    fn pieces(mut seed: u64, alphabet: &[u8]) -> Vec<Vec<u8>> {
        [0, 1, 5, 63, 64, 65, 127, 128, 200, 1000]
            .iter()
            .map(|&len| {
                (0..len)
                    .map(|_| {
                        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                        alphabet[(seed >> 33) as usize % alphabet.len()]
                    })
                    .collect()
            })
            .collect()
    }

    /// Every start in a piece of `len` bytes, each with a few ends.
    fn ranges(len: usize) -> impl Iterator<Item = (usize, usize)> {
        (0..=len).flat_map(move |from| {
            [from, (from + 3).min(len), (from + 70).min(len), len].map(|end| (from, end))
        })
    }

    /// Every search against a plain scan, on both build paths, at every start
    /// and a few ends, over lengths around the 64-byte words.
    #[test]
    fn next_is_the_first_match() {
        for d in pieces(7, b" \"]xa\n") {
            for simd in Simd::available() {
                let mut map = ByteMap::new(b"\" ] \n");
                map.simd = simd;
                map.build(&d);
                for (k, &c) in map.needles.iter().enumerate() {
                    for (from, end) in ranges(d.len()) {
                        let want = d[from..end].iter().position(|&x| x == c).map(|i| from + i);
                        assert_eq!(map.next(k, from, end), want, "{c} {from}..{end} of {d:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_class_of_several_bytes() {
        let d = b"ab \t c\x0b\nd  e";
        for simd in Simd::available() {
            let mut map = ByteMap::with_classes(&[b"\n", b" \t\x0b"]);
            map.simd = simd;
            map.build(d);
            assert_eq!((map.class(b'\t'), map.class(b'\n')), (Some(1), Some(0)));
            let set: Vec<usize> = (0..d.len())
                .filter(|&i| b" \t\x0b".contains(&d[i]))
                .collect();
            for from in 0..=d.len() {
                let want = set.iter().copied().find(|&i| i >= from);
                assert_eq!(map.next(1, from, d.len()), want);
            }
        }
    }

    /// Edges against a plain scan, from every start to a few ends, on both
    /// build paths, over lengths around the 64-byte words.
    #[test]
    fn edges_are_where_a_run_starts_or_ends() {
        for d in pieces(11, b" \tx\x0bab\n") {
            for simd in Simd::available() {
                let mut map = ByteMap::with_classes(&[b"\n", b" \t\x0b"]);
                map.simd = simd;
                map.build(&d);
                let marked = |i: usize| b" \t\x0b".contains(&d[i]);
                for (from, end) in ranges(d.len()) {
                    let want: Vec<usize> = (from..end)
                        .filter(|&i| marked(i) != (i == from || marked(i - 1)))
                        .collect();
                    let got: Vec<usize> = map.edges(1, from, end).collect();
                    assert_eq!(got, want, "{from}..{end} of {d:?}");
                }
            }
        }
    }

    /// The vector builds mark what the plain one marks, for needles and other
    /// bytes of every value (a nibble shared with a needle, the high bit set),
    /// in classes of one or several bytes, and in a class numbered past
    /// [`MAX`] (the groups before it mark no byte of their own).
    #[test]
    fn both_builds_mark_the_same_bytes() {
        let d: Vec<u8> = (0..1024u32)
            .map(|i| (i * 97 % 256) as u8 ^ (i / 256) as u8)
            .collect();
        let sets: [&[&[u8]]; 5] = [
            &[b"\n", b" \t\r\x0b\x0c"],
            &[b"\n", b",", b"\""],
            &[b"\xff", b"\x80\x0f", b"\x00", b"\xf0\x01"],
            &[b"a", b"b", b"c", b"d", b"e", b"f"],
            &[b"a", b"a", b"a", b"a", b"a", b"a", b"a", b"b"],
        ];
        for set in sets {
            let mut maps: Vec<ByteMap> = Simd::available()
                .into_iter()
                .map(|simd| {
                    let mut m = ByteMap::with_classes(set);
                    m.simd = simd;
                    m
                })
                .collect();
            for m in &mut maps {
                m.build(&d);
            }
            for m in &maps[1..] {
                assert_eq!(maps[0].words, m.words, "{set:?} {:?}", m.simd);
            }
            let marked = maps[0].words.iter().map(|w| w.count_ones()).sum::<u32>();
            let want = d.iter().filter(|&&c| set.concat().contains(&c)).count();
            assert_eq!(marked as usize, want, "{set:?}");
        }
    }

    #[test]
    fn more_needles_than_max_are_unmarked() {
        let map = ByteMap::new(b"abcdefga");
        assert_eq!(map.class(b'a'), Some(0));
        assert_eq!(map.class(b'f'), Some(MAX - 1));
        assert_eq!(map.class(b'g'), None);
    }
}
