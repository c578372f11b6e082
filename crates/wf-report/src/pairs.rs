//! Distinct (row, visitor) pairs, as `u64`s, kept sorted.
//!
//! A line adds one pair to each of the request and referrer panels, and most
//! pairs are new: a hash set took a cache miss or two per insertion into a
//! table of millions (10% of the scan's cycles, perf). Here a pair is
//! appended to a buffer, and the buffer is sorted, deduplicated and merged
//! into the sorted distinct pairs when it grows as large as they are (at
//! least [`FRESH`]): sequential work, the same distinct pairs, memory of at
//! most about twice 8 bytes per distinct pair.

/// Pairs appended before a first sort.
const FRESH: usize = 1 << 16;

/// A set of `u64`s (see the module comment).
#[derive(Default, Debug)]
pub struct Pairs {
    sorted: Vec<u64>,
    fresh: Vec<u64>,
}

impl Pairs {
    #[inline]
    pub fn insert(&mut self, p: u64) {
        self.fresh.push(p);
        if self.fresh.len() >= FRESH.max(self.sorted.len()) {
            self.compact();
        }
    }

    pub fn extend(&mut self, it: impl IntoIterator<Item = u64>) {
        for p in it {
            self.insert(p);
        }
    }

    /// Sorts and deduplicates the appended pairs into the sorted ones.
    pub fn compact(&mut self) {
        if self.fresh.is_empty() {
            return;
        }
        radsort::sort(&mut self.fresh);
        self.fresh.dedup();
        if self.sorted.is_empty() {
            std::mem::swap(&mut self.sorted, &mut self.fresh);
            return;
        }
        let (a, b) = (&self.sorted, &self.fresh);
        let mut out = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            let (x, y) = (a[i], b[j]);
            out.push(x.min(y));
            i += (x <= y) as usize;
            j += (y <= x) as usize;
        }
        out.extend_from_slice(&a[i..]);
        out.extend_from_slice(&b[j..]);
        self.sorted = out;
        self.fresh.clear();
    }

    /// The distinct pairs, in order; [`Pairs::compact`] must come first.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        assert!(self.fresh.is_empty(), "Pairs read before compact()");
        self.sorted.iter().copied()
    }

    /// Bytes held on the heap (capacities, for `--memory`).
    pub fn heap_bytes(&self) -> usize {
        (self.sorted.capacity() + self.fresh.capacity()) * 8
    }

    /// Distinct pairs; [`Pairs::compact`] must come first.
    pub fn len(&self) -> usize {
        assert!(self.fresh.is_empty(), "Pairs read before compact()");
        self.sorted.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty() && self.fresh.is_empty()
    }

    /// The distinct pairs, sorted, without changing `self` (for a saved
    /// state, written from a shared reference).
    pub fn sorted(&self) -> Vec<u64> {
        let mut copy = Pairs {
            sorted: self.sorted.clone(),
            fresh: self.fresh.clone(),
        };
        copy.compact();
        copy.sorted
    }

    /// Pairs already sorted and distinct (a saved state read back).
    pub fn from_sorted(sorted: Vec<u64>) -> Self {
        debug_assert!(sorted.windows(2).all(|w| w[0] < w[1]));
        Pairs {
            sorted,
            fresh: Vec::new(),
        }
    }

    /// Moves the pairs out (for a merge), sorted or not.
    pub fn into_vec(mut self) -> Vec<u64> {
        self.sorted.append(&mut self.fresh);
        self.sorted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_distinct_values_whatever_the_order() {
        let mut p = Pairs::default();
        let mut want = std::collections::BTreeSet::new();
        let mut x: u64 = 1;
        for _ in 0..300_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = x >> 46; // repeats: 2^18 values
            p.insert(v);
            want.insert(v);
        }
        p.compact();
        assert_eq!(p.len(), want.len());
        assert!(p.iter().eq(want.into_iter()));
    }
}
