//! Randomness: a small wrapper with integer-only helpers so results never depend on libm.

use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// SplitMix64's finaliser: a well-mixed u64 from any u64.
pub(super) fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A random stream (xoshiro256++) seeded from two numbers.
pub(super) struct R(Xoshiro256PlusPlus);

impl R {
    pub(super) fn new(a: u64, b: u64) -> Self {
        R(Xoshiro256PlusPlus::seed_from_u64(splitmix(
            a ^ splitmix(b ^ 0x5EED_CAFE_F00D),
        )))
    }
    #[inline]
    pub(super) fn u(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in 0..n (n < 2^32).
    #[inline]
    pub(super) fn below(&mut self, n: u32) -> u32 {
        (((self.u() >> 32) * n as u64) >> 32) as u32
    }
    /// Uniform in lo..=hi.
    #[inline]
    pub(super) fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + self.below(hi - lo + 1)
    }
    /// True with probability `bp` / 10000.
    #[inline]
    pub(super) fn bp(&mut self, bp: u32) -> bool {
        self.below(10_000) < bp
    }
    pub(super) fn pick<'s>(&mut self, xs: &[&'s str]) -> &'s str {
        xs[self.below(xs.len() as u32) as usize]
    }
    pub(super) fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            let j = self.below(i as u32 + 1) as usize;
            xs.swap(i, j);
        }
    }
}

/// Walker/Vose alias table: O(1) sampling from a discrete distribution with one u64.
pub(super) struct Alias {
    n: u64,
    thresh: Vec<u32>,
    alias: Vec<u32>,
}

impl Alias {
    pub(super) fn new(w: &[f64]) -> Alias {
        let n = w.len();
        assert!(n > 0);
        let sum: f64 = w.iter().sum();
        let mut p: Vec<f64> = w.iter().map(|x| x * n as f64 / sum).collect();
        let mut small = Vec::new();
        let mut large = Vec::new();
        for (i, &x) in p.iter().enumerate() {
            if x < 1.0 {
                small.push(i);
            } else {
                large.push(i);
            }
        }
        let mut thresh = vec![u32::MAX; n];
        let mut alias: Vec<u32> = (0..n as u32).collect();
        while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
            small.pop();
            thresh[s] = (p[s] * 4_294_967_296.0) as u32;
            alias[s] = l as u32;
            p[l] = (p[l] + p[s]) - 1.0;
            if p[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        Alias {
            n: n as u64,
            thresh,
            alias,
        }
    }

    /// Zipf over `n` items, exponent `quarters`/4, ranks assigned in order (item 0 = top).
    pub(super) fn zipf(n: usize, quarters: u32) -> Alias {
        Alias::new(&zipf_weights(n, quarters))
    }

    #[inline]
    pub(super) fn sample(&self, r: u64) -> usize {
        let i = (((r >> 32) * self.n) >> 32) as usize;
        if (r as u32) < self.thresh[i] {
            i
        } else {
            self.alias[i] as usize
        }
    }
}

/// 1 / k^(q/4) for k = 1..=n, using only sqrt and arithmetic (correctly rounded everywhere).
fn zipf_weights(n: usize, q: u32) -> Vec<f64> {
    (1..=n)
        .map(|k| {
            let x = k as f64;
            let r2 = x.sqrt();
            let r4 = r2.sqrt();
            let mut p = 1.0;
            for _ in 0..q / 4 {
                p *= x;
            }
            match q % 4 {
                1 => p *= r4,
                2 => p *= r2,
                3 => p *= r2 * r4,
                _ => {}
            }
            1.0 / p
        })
        .collect()
}

/// Alias table where `order[rank]` is the item at that Zipf rank.
pub(super) fn ranked_alias(order: &[usize], quarters: u32) -> Alias {
    let zw = zipf_weights(order.len(), quarters);
    let mut w = vec![0.0; order.len()];
    for (rank, &item) in order.iter().enumerate() {
        w[item] = zw[rank];
    }
    Alias::new(&w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alias_sampling_follows_weights() {
        let a = Alias::new(&[1.0, 2.0, 0.0, 5.0]);
        let mut r = R::new(1, 2);
        let mut c = [0u32; 4];
        for _ in 0..80_000 {
            c[a.sample(r.u())] += 1;
        }
        assert_eq!(c[2], 0);
        assert!((9_000..11_000).contains(&c[0]), "{c:?}");
        assert!((48_000..52_000).contains(&c[3]), "{c:?}");
    }
}
