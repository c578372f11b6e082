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
//! Pairs of a visitor that has none here yet (a merge's, or a spill's read
//! back, of visitors the counts they go into did not have) are known to be
//! distinct: [`Pairs::extend_merged`] keeps them apart, unsorted. Sorting them
//! with the rest was a quarter of the work after the scan of the 1 GiB bench
//! log (the merge of two workers' counts, perf), and the report only counts
//! them. A visitor's pairs are all apart or none are; a pair appended later
//! can only repeat one of its own visitor's, so [`Pairs::compact`] takes
//! those of the appended pairs' visitors back among the rest (a bitmap of
//! visitors and one pass, not a sort). They are sorted when saved.

/// Pairs appended before a first sort.
const FRESH: usize = 1 << 16;

/// A set of (row, visitor) pairs, a pair's low half its visitor (see the
/// module comment).
#[derive(Default, Debug)]
pub struct Pairs {
    sorted: Vec<u64>,
    fresh: Vec<u64>,
    /// Distinct, and of visitors with no pair in `sorted`.
    apart: Vec<u64>,
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

    /// Adds distinct pairs (a merge's, a spill's read back) whose visitors
    /// of id `had` or more have no pair here: theirs are kept apart, without
    /// sorting them (see the module comment); the others are appended.
    pub fn extend_merged(&mut self, it: impl IntoIterator<Item = u64>, had: u32) {
        let mut old = Vec::new();
        for p in it {
            match p as u32 >= had {
                true => self.apart.push(p),
                false => old.push(p),
            }
        }
        self.extend(old);
    }

    /// Moves the pairs kept apart among the sorted ones.
    fn settle(&mut self) {
        self.fresh.append(&mut self.apart);
        self.compact();
    }

    /// Moves to `fresh` the pairs kept apart of the visitors of `fresh`'s.
    fn take_back(&mut self) {
        let Some(top) = self.fresh.iter().map(|&p| p as u32).max() else {
            return;
        };
        let mut seen = vec![0u64; (top as usize >> 6) + 1];
        for &p in &self.fresh {
            let v = p as u32 as usize;
            seen[v >> 6] |= 1 << (v & 63);
        }
        let (apart, fresh) = (&mut self.apart, &mut self.fresh);
        apart.retain(|&p| {
            let v = p as u32 as usize;
            let ours = seen.get(v >> 6).is_some_and(|w| w >> (v & 63) & 1 == 1);
            if ours {
                fresh.push(p);
            }
            !ours
        });
    }

    /// Sorts and deduplicates the appended pairs into the sorted ones.
    pub fn compact(&mut self) {
        if self.fresh.is_empty() {
            return;
        }
        if !self.apart.is_empty() {
            self.take_back();
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

    /// Moves the pairs out, all sorted (those kept apart too: a spill
    /// writes a partition's pairs in order, each row once).
    pub fn into_sorted(mut self) -> Vec<u64> {
        self.settle();
        self.sorted
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
    /// when saved; a pair appended later is checked against its visitor's.
    #[test]
    fn pairs_kept_apart_join_the_rest() {
        let pr = crate::acc::pair;
        let mut p = Pairs::default();
        p.extend([pr(5, 0), pr(1, 1), pr(3, 0), pr(1, 1)]);
        p.compact();
        // Visitors 2 and 3 are new.
        p.extend_merged([pr(4, 2), pr(0, 2), pr(7, 3)], 2);
        p.compact();
        assert_eq!(p.len(), 6);
        let all = [pr(0, 2), pr(1, 1), pr(3, 0), pr(4, 2), pr(5, 0), pr(7, 3)];
        let mut seen: Vec<u64> = p.iter().collect();
        seen.sort();
        assert_eq!(seen, all);
        assert_eq!(p.sorted(), all);
        // A pair appended after them is checked against its visitor's.
        p.extend([pr(4, 2), pr(6, 2), pr(5, 0)]);
        p.compact();
        assert_eq!(p.len(), 7);
        let mut seen: Vec<u64> = p.iter().collect();
        seen.sort();
        assert_eq!(
            seen,
            [all[0], all[1], all[2], all[3], pr(5, 0), pr(6, 2), pr(7, 3)]
        );
    }
}
