//! Distinct (row, visitor) pairs, as `u64`s, kept sorted.
//!
//! A line adds one pair to each of the request and referrer panels, and most
//! pairs are new: a hash set took a cache miss or two per insertion into a
//! table of millions (10% of the scan's cycles, perf). Here a pair is
//! appended to a buffer, and the buffer is sorted, deduplicated and merged
//! into the sorted distinct pairs when it grows as large as they are (at
//! least [`FRESH`]): sequential work, the same distinct pairs, memory of at
//! most about twice 8 bytes per distinct pair.
//!
//! Pairs known to be new and distinct (those a merge brings of visitors the
//! counts it goes into did not have, [`Pairs::extend_new`]) are kept apart,
//! unsorted: sorting them with the rest was a quarter of the work after the
//! scan of the 1 GiB bench log (the merge of two workers' counts, perf), and
//! the report only counts them. They are sorted when the pairs are saved.

/// Pairs appended before a first sort.
const FRESH: usize = 1 << 16;

/// A set of `u64`s (see the module comment).
#[derive(Default, Debug)]
pub struct Pairs {
    sorted: Vec<u64>,
    fresh: Vec<u64>,
    /// Distinct from each other and from every pair of `sorted` and `fresh`.
    apart: Vec<u64>,
}

impl Pairs {
    #[inline]
    pub fn insert(&mut self, p: u64) {
        if !self.apart.is_empty() {
            // It may be one of them.
            self.settle();
        }
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

    /// Adds pairs that are distinct from each other and from every pair
    /// here, without sorting them (see the module comment).
    pub fn extend_new(&mut self, it: impl IntoIterator<Item = u64>) {
        self.apart.extend(it);
    }

    /// Moves the pairs kept apart among the sorted ones.
    pub fn settle(&mut self) {
        self.compact();
        let apart = std::mem::take(&mut self.apart);
        self.extend(apart);
        self.compact();
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

    /// The distinct pairs, the sorted ones first, then those kept apart;
    /// [`Pairs::compact`] must come first.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        assert!(self.fresh.is_empty(), "Pairs read before compact()");
        self.sorted.iter().chain(&self.apart).copied()
    }

    /// Bytes held on the heap (capacities, for `--memory`).
    pub fn heap_bytes(&self) -> usize {
        (self.sorted.capacity() + self.fresh.capacity() + self.apart.capacity()) * 8
    }

    /// Distinct pairs; [`Pairs::compact`] must come first.
    pub fn len(&self) -> usize {
        assert!(self.fresh.is_empty(), "Pairs read before compact()");
        self.sorted.len() + self.apart.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty() && self.fresh.is_empty() && self.apart.is_empty()
    }

    /// The distinct pairs, sorted, without changing `self` (for a saved
    /// state, written from a shared reference).
    pub fn sorted(&self) -> Vec<u64> {
        let mut copy = Pairs {
            sorted: self.sorted.clone(),
            fresh: self.fresh.clone(),
            apart: self.apart.clone(),
        };
        copy.settle();
        copy.sorted
    }

    /// Pairs already sorted and distinct (a saved state read back).
    pub fn from_sorted(sorted: Vec<u64>) -> Self {
        debug_assert!(sorted.windows(2).all(|w| w[0] < w[1]));
        Pairs {
            sorted,
            fresh: Vec::new(),
            apart: Vec::new(),
        }
    }

    /// Moves the pairs out (for a merge): the sorted ones, then those
    /// appended since the last [`Pairs::compact`], then those kept apart.
    pub fn into_vec(mut self) -> Vec<u64> {
        self.sorted.append(&mut self.fresh);
        self.sorted.append(&mut self.apart);
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

    /// Pairs kept apart are counted and read, and sorted in with the rest
    /// when saved or settled.
    #[test]
    fn pairs_kept_apart_join_the_rest() {
        let mut p = Pairs::default();
        p.extend([5, 1, 3, 1]);
        p.extend_new([4, 0]);
        p.compact();
        assert_eq!(p.len(), 5);
        let mut seen: Vec<u64> = p.iter().collect();
        seen.sort();
        assert_eq!(seen, [0, 1, 3, 4, 5]);
        assert_eq!(p.sorted(), [0, 1, 3, 4, 5]);
        // A pair inserted after them is checked against them too.
        p.insert(4);
        p.compact();
        assert!(p.iter().eq([0, 1, 3, 4, 5]));
    }
}
