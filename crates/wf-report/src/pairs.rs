//! Distinct (row, visitor) pairs, as `u64`s, kept sorted by visitor.
//!
//! A line adds one pair to each of the request and referrer panels, and most
//! pairs are new: a hash set took a cache miss or two per insertion into a
//! table of millions (10% of the scan's cycles, perf). Here a pair is
//! appended to a buffer, and the buffer is sorted, deduplicated and merged
//! into the sorted distinct pairs: sequential work, the same distinct
//! pairs, memory of at most about twice 8 bytes per distinct pair.
//!
//! They are kept with the visitor in the high half ([`turn`]), so sorted by
//! visitor: a log comes in time order and a visitor is of one day, so the
//! pairs appended are mostly of the day's visitors, and they are merged
//! into the sorted pairs from the least of them on (a day's), not into all
//! (which doubled, took the whole sorted list once per doubling). The buffer
//! is merged once it is as long as that tail (and [`FRESH`]). And a
//! visitor's pairs stand together: the report counts a row's distinct
//! visitors in one pass without sorting (`tally::project`: 75 -> 50 ms of
//! the tally on the 1 GiB bench log, 3 runs each).
//!
//! Pairs of a visitor that has none here yet (a merge's, or a spill's read
//! back, of visitors the counts they go into did not have) are known to be
//! distinct: [`Pairs::extend_merged`] keeps them apart, unsorted. Sorting them
//! with the rest was a quarter of the work after the scan of the 1 GiB bench
//! log (the merge of two workers' counts, perf), and the report only counts
//! them. A visitor's pairs are all apart or none are; a pair appended later
//! can only repeat one of its own visitor's, so [`Pairs::compact`] takes
//! those of the appended pairs' visitors back among the rest (a bitmap of
//! visitors and one pass, not a sort). A merge's come grouped by visitor;
//! others are sorted by visitor at [`Pairs::compact`]. They are sorted by
//! row when saved (a state's and a spill's order).

/// Pairs appended before a first sort.
const FRESH: usize = 1 << 16;

/// A pair as kept here: its visitor in the high half (see the module
/// comment); the same function takes it back.
#[inline(always)]
fn turn(p: u64) -> u64 {
    p.rotate_left(32)
}

/// Sorts `v` by the high halves of its values only, keeping the order of
/// those with the same high half (a stable radix sort): the order by the
/// whole value when `v` comes sorted by its low halves, in half the passes
/// (a byte a pass, those where all are alike skipped: three for the 10 GiB
/// bench log's rows or visitors, six for both). The spills sort their
/// pairs by row from visitor order and back (`Pairs::into_sorted`,
/// `Pairs::group_apart`): ~100 M pairs at 10 GiB, where radix sorts
/// were 6-10% of the samples (perf).
fn by_high(v: &mut [u64]) {
    radsort::sort_by_key(v, |&x| (x >> 32) as u32);
}

/// A set of (row, visitor) pairs, a pair's low half its visitor (see the
/// module comment); kept [`turn`]ed, in visitor order.
#[derive(Default, Debug)]
pub struct Pairs {
    sorted: Vec<u64>,
    fresh: Vec<u64>,
    /// The least of `fresh` (set by its first pair).
    least: u64,
    /// `fresh` is sorted in when it is this long ([`Pairs::due`]).
    next: usize,
    /// Distinct, and of visitors with no pair in `sorted`.
    apart: Vec<u64>,
    /// The tail of `sorted` being merged (kept for its capacity).
    tail: Vec<u64>,
}

impl Pairs {
    #[inline]
    pub fn insert(&mut self, p: u64) {
        let t = turn(p);
        if self.fresh.is_empty() {
            self.least = t;
        }
        self.least = self.least.min(t);
        self.fresh.push(t);
        if self.fresh.len() >= self.next.max(FRESH) {
            self.due();
        }
    }

    /// Sorts the appended pairs in once they are as many as the sorted
    /// pairs they are merged with: those from the least of theirs on.
    #[cold]
    fn due(&mut self) {
        let tail = self.sorted.len() - self.sorted.partition_point(|&x| x < self.least);
        if self.fresh.len() >= tail {
            self.compact();
        } else {
            self.next = tail;
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
                true => self.apart.push(turn(p)),
                false => old.push(p),
            }
        }
        self.extend(old);
    }

    /// Moves to `fresh` the pairs kept apart of the visitors of `fresh`'s.
    fn take_back(&mut self) {
        let Some(top) = self.fresh.iter().map(|&t| (t >> 32) as u32).max() else {
            return;
        };
        let mut seen = crate::intern::filled((top as usize >> 6) + 1, 0u64);
        for &t in &self.fresh {
            let v = (t >> 32) as usize;
            seen[v >> 6] |= 1 << (v & 63);
        }
        let (apart, fresh) = (&mut self.apart, &mut self.fresh);
        let mut least = self.least;
        apart.retain(|&t| {
            let v = (t >> 32) as usize;
            let ours = seen.get(v >> 6).is_some_and(|w| w >> (v & 63) & 1 == 1);
            if ours {
                fresh.push(t);
                least = least.min(t);
            }
            !ours
        });
        self.least = least;
    }

    /// Sorts and deduplicates the appended pairs into the sorted ones: into
    /// the sorted pairs from the least appended one on (in a log read in
    /// time order, the pairs of the day's visitors), the rest untouched.
    pub fn compact(&mut self) {
        self.next = 0;
        self.group_apart();
        if self.fresh.is_empty() {
            return;
        }
        if !self.apart.is_empty() {
            self.take_back();
        }
        radsort::sort(&mut self.fresh);
        self.fresh.dedup();
        let from = self.sorted.partition_point(|&x| x < self.fresh[0]);
        self.tail.clear();
        self.tail.extend_from_slice(&self.sorted[from..]);
        self.sorted.truncate(from);
        // Exact: a doubling capacity held up to twice the pairs.
        self.sorted
            .reserve_exact(self.tail.len() + self.fresh.len());
        let (a, b, out) = (&self.tail, &self.fresh, &mut self.sorted);
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            let (x, y) = (a[i], b[j]);
            out.push(x.min(y));
            i += (x <= y) as usize;
            j += (y <= x) as usize;
        }
        out.extend_from_slice(&a[i..]);
        out.extend_from_slice(&b[j..]);
        self.fresh.clear();
        if self.tail.capacity() > 2 * FRESH {
            self.tail = Vec::new();
        }
    }

    /// Sorts the pairs kept apart by visitor unless they are: a merge's
    /// are (its visitors' pairs come sorted by visitor, and new visitors
    /// are numbered in their order), a saved state's read back are not
    /// (sorted by row), nor those of a spill's partitions added up. By the
    /// visitor only ([`by_high`]): they need to stand together, not in row
    /// order within a visitor ([`Pairs::iter`], [`Pairs::into_sorted`]).
    fn group_apart(&mut self) {
        if !self.apart.is_sorted_by_key(|&t| t >> 32) {
            by_high(&mut self.apart);
        }
    }

    /// The distinct pairs, each visitor's together (the property
    /// [`crate::tally::project`] counts by), in no other order;
    /// [`Pairs::compact`] must come first.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        assert!(self.fresh.is_empty(), "Pairs read before compact()");
        self.sorted.iter().chain(&self.apart).map(|&t| turn(t))
    }

    /// Bytes held on the heap (capacities, for `--memory`).
    pub fn heap_bytes(&self) -> usize {
        let c = self.sorted.capacity() + self.fresh.capacity();
        (c + self.apart.capacity() + self.tail.capacity()) * 8
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
        let copy = Pairs {
            sorted: self.sorted.clone(),
            fresh: self.fresh.clone(),
            least: self.least,
            apart: self.apart.clone(),
            ..Pairs::default()
        };
        copy.into_sorted()
    }

    /// Pairs already sorted and distinct (a saved state read back): in
    /// visitor order once sorted by visitor alone ([`by_high`]).
    pub fn from_sorted(sorted: Vec<u64>) -> Self {
        debug_assert!(sorted.windows(2).all(|w| w[0] < w[1]));
        let mut sorted: Vec<u64> = sorted.into_iter().map(turn).collect();
        by_high(&mut sorted);
        Pairs {
            sorted,
            ..Pairs::default()
        }
    }

    /// Moves the pairs out, all sorted (those kept apart too: a spill
    /// writes a partition's pairs in order, each row once). The sorted
    /// pairs and those kept apart, each in visitor order and of visitors
    /// of their own, are merged by visitor alone, and the whole sorted by
    /// row alone ([`by_high`]): in order, as a stable sort keeps each row's
    /// visitors in order. Sorting those kept apart in with the rest first
    /// (the merge of two workers' counts, half its pairs apart) and then by
    /// row was two of the three radix sorts of a spill.
    pub fn into_sorted(mut self) -> Vec<u64> {
        self.compact();
        let (a, b) = (&self.sorted, &self.apart);
        let mut v = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            let apart = b[j] >> 32 < a[i] >> 32;
            v.push(turn(if apart { b[j] } else { a[i] }));
            i += !apart as usize;
            j += apart as usize;
        }
        v.extend(a[i..].iter().chain(&b[j..]).map(|&t| turn(t)));
        by_high(&mut v);
        v
    }

    /// Moves the pairs out (for a merge), in no order: the sorted ones, then
    /// those appended since the last [`Pairs::compact`], then those kept apart.
    pub fn into_vec(mut self) -> Vec<u64> {
        self.sorted.append(&mut self.fresh);
        self.sorted.append(&mut self.apart);
        for t in &mut self.sorted {
            *t = turn(*t);
        }
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

    /// Pairs kept apart whose visitors fall among those of the sorted ones
    /// (a visitor taken back among the sorted, as a `--state` run's do)
    /// come out of `into_sorted` in order: merged by visitor, not put after.
    #[test]
    fn sorted_out_whatever_the_visitors_apart() {
        let pr = crate::acc::pair;
        let mut p = Pairs::default();
        p.extend([pr(4, 0), pr(2, 1)]);
        p.compact();
        p.extend_merged([pr(4, 3), pr(1, 3), pr(4, 7), pr(0, 7)], 2);
        p.compact();
        // Visitor 7 comes back: its pairs join the sorted ones, 3's stay apart.
        p.extend([pr(4, 7), pr(3, 7)]);
        p.compact();
        let want = [
            pr(0, 7),
            pr(1, 3),
            pr(2, 1),
            pr(3, 7),
            pr(4, 0),
            pr(4, 3),
            pr(4, 7),
        ];
        assert_eq!(p.sorted(), want);
        assert_eq!(p.into_sorted(), want);
    }

    /// Pairs of visitors in time order (each visitor's rows over a while,
    /// some repeated, others of visitors long gone), then a merge's (some
    /// of visitors new here, grouped by visitor) and a saved state's (sorted
    /// by row): the distinct pairs, each visitor's together, and sorted by
    /// row when saved.
    #[test]
    fn each_visitors_pairs_stand_together() {
        let pr = crate::acc::pair;
        let mut x: u64 = 7;
        let mut rand = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        let mut p = Pairs::default();
        let mut want = std::collections::BTreeSet::new();
        let mut add = |p: &mut Pairs, q: u64| {
            p.insert(q);
            want.insert(q);
        };
        for i in 0..400_000u64 {
            let v = match rand(20) {
                0 => rand(i / 8 + 1),
                _ => i / 8 + rand(200),
            };
            add(&mut p, pr(rand(300) as u32, v as u32));
        }
        let had = 50_000 + 400_000 / 8 + 200;
        let merged: Vec<u64> = (had..had + 3000)
            .flat_map(|v| (0..3).map(move |r| pr((v * 7 + r) as u32 % 500, v as u32)))
            .chain((0..3000).map(|v| pr(5, v * 11)))
            .collect();
        want.extend(merged.iter().copied());
        p.extend_merged(merged, had as u32);
        let mut saved: Vec<u64> = (0..2000)
            .map(|i| pr(i % 7, i * 13 % 900 + 1_000_000))
            .collect();
        saved.sort();
        saved.dedup();
        want.extend(saved.iter().copied());
        p.extend_merged(saved, 1_000_000);
        p.compact();
        let seen: Vec<u64> = p.iter().collect();
        assert_eq!(seen.len(), want.len());
        assert_eq!(
            seen.iter()
                .copied()
                .collect::<std::collections::BTreeSet<_>>(),
            want
        );
        let mut done = std::collections::HashSet::new();
        for w in seen.windows(2) {
            let (a, b) = (w[0] as u32, w[1] as u32);
            assert!(a == b || done.insert(a), "visitor {a}'s pairs apart");
        }
        assert!(p.sorted().into_iter().eq(want.iter().copied()));
        assert!(p.into_sorted().into_iter().eq(want.into_iter()));
    }
}
