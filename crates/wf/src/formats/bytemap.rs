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
    avx2: bool,
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
            avx2: has_avx2(),
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
        self.words.clear();
        self.words.resize(self.planes * self.stride, 0);
        let full = d.len() / 64;
        self.build_blocks(&d[..full * 64]);
        if full < self.stride {
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
        self.find(k, from, end, 0)
    }

    /// The first position in `from..end` not holding a byte of class `k`.
    #[inline(always)]
    pub fn next_clear(&self, k: usize, from: usize, end: usize) -> Option<usize> {
        self.find(k, from, end, u64::MAX)
    }

    /// The first set bit at or after `from` of class `k`'s words XOR `flip`
    /// (0: marked bytes; all ones: unmarked ones), if before `end`.
    #[inline(always)]
    fn find(&self, k: usize, from: usize, end: usize, flip: u64) -> Option<usize> {
        let words = &self.words[k * self.stride..(k + 1) * self.stride];
        let mut j = from >> 6;
        let mut m = (*words.get(j)? ^ flip) & (u64::MAX << (from & 63));
        loop {
            if m != 0 {
                let p = (j << 6) + m.trailing_zeros() as usize;
                return (p < end).then_some(p);
            }
            j += 1;
            if j << 6 >= end {
                return None;
            }
            m = words[j] ^ flip;
        }
    }

    fn build_blocks(&mut self, d: &[u8]) {
        #[cfg(target_arch = "x86_64")]
        {
            if self.avx2 {
                // SAFETY: AVX2 was detected at run time.
                return unsafe { self.build_avx2(d) };
            }
        }
        for (j, b) in d.chunks_exact(64).enumerate() {
            for (&c, &k) in self.needles.iter().zip(&self.plane) {
                let mut m = 0u64;
                for (i, &x) in b.iter().enumerate() {
                    m |= ((x == c) as u64) << i;
                }
                self.words[k * self.stride + j] |= m;
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn build_avx2(&mut self, d: &[u8]) {
        use std::arch::x86_64::*;
        let n = self.needles.len();
        let mut vs = [_mm256_setzero_si256(); MAX];
        for (v, &c) in vs.iter_mut().zip(&self.needles) {
            *v = _mm256_set1_epi8(c as i8);
        }
        for (j, b) in d.chunks_exact(64).enumerate() {
            // SAFETY: `b` holds 64 bytes.
            let (lo, hi) = unsafe {
                (
                    _mm256_loadu_si256(b.as_ptr() as *const __m256i),
                    _mm256_loadu_si256(b.as_ptr().add(32) as *const __m256i),
                )
            };
            for (v, &k) in vs[..n].iter().zip(&self.plane) {
                let a = _mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, *v)) as u32 as u64;
                let c = _mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, *v)) as u32 as u64;
                self.words[k * self.stride + j] |= a | (c << 32);
            }
        }
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

fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every search against a plain scan, on both build paths, at every start
    /// and a few ends, over lengths around the 64-byte words.
    #[test]
    fn next_is_the_first_match() {
        let mut seed = 7u64;
        for len in [0, 1, 5, 63, 64, 65, 127, 128, 200, 1000] {
            let d: Vec<u8> = (0..len)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                    b" \"]xa\n"[(seed >> 33) as usize % 6]
                })
                .collect();
            for avx2 in [false, has_avx2()] {
                let mut map = ByteMap::new(b"\" ] \n");
                map.avx2 = avx2;
                map.build(&d);
                for (k, &c) in map.needles.iter().enumerate() {
                    for from in 0..=len {
                        for end in [from, (from + 3).min(len), (from + 70).min(len), len] {
                            let want = d[from..end].iter().position(|&x| x == c).map(|i| from + i);
                            assert_eq!(map.next(k, from, end), want, "len {len} {c} {from}..{end}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_class_of_several_bytes() {
        let d = b"ab \t c\x0b\nd  e";
        for avx2 in [false, has_avx2()] {
            let mut map = ByteMap::with_classes(&[b"\n", b" \t\x0b"]);
            map.avx2 = avx2;
            map.build(d);
            assert_eq!((map.class(b'\t'), map.class(b'\n')), (Some(1), Some(0)));
            let set: Vec<usize> = (0..d.len())
                .filter(|&i| b" \t\x0b".contains(&d[i]))
                .collect();
            for from in 0..=d.len() {
                let want = set.iter().copied().find(|&i| i >= from);
                assert_eq!(map.next(1, from, d.len()), want);
                let clear = (from..d.len()).find(|i| !set.contains(i));
                assert_eq!(map.next_clear(1, from, d.len()), clear);
            }
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
