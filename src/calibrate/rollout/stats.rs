//! The statistics of a rollout's comparison, from running sums alone: a rate's Wilson score
//! interval, and a mean's Student t interval from the count, sum and sum of squares, both at 95%.
//! Integer sums add and take back exactly, so a debate counted again after its rows changed
//! leaves no rounding behind.

/// The 97.5th percentile of the standard normal distribution: a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The largest value a [`Moments`] takes: a larger one is counted as this (2^40, about 1.1e12
/// tokens in one debate), so that the sum of squares of any number of debates fits in 128 bits.
pub const MAX_VALUE: u64 = 1 << 40;

/// The two-sided 95% points of Student's t distribution for 1 to 30 degrees of freedom.
const T95: [f64; 30] = [
    12.706_205, 4.302_653, 3.182_446, 2.776_445, 2.570_582, 2.446_912, 2.364_624, 2.306_004,
    2.262_157, 2.228_139, 2.200_985, 2.178_813, 2.160_369, 2.144_787, 2.131_450, 2.119_905,
    2.109_816, 2.100_922, 2.093_024, 2.085_963, 2.079_614, 2.073_873, 2.068_658, 2.063_899,
    2.059_539, 2.055_529, 2.051_831, 2.048_407, 2.045_230, 2.042_272,
];

/// A range a figure lies in with 95% confidence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

/// The Wilson score interval at 95% of a rate of `hits` in `n` trials; `None` without trials.
pub fn wilson(hits: u64, n: u64) -> Option<Interval> {
    if n == 0 {
        return None;
    }
    let p = hits.min(n) as f64 / n as f64;
    let n = n as f64;
    let z2 = Z95 * Z95;
    let scale = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / scale;
    let half = Z95 / scale * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // The interval holds p (its ends are exactly 0 at no hits and 1 at all): rounding may not
    // move an end past it.
    Some(Interval {
        low: (centre - half).clamp(0.0, p),
        high: (centre + half).clamp(p, 1.0),
    })
}

/// The two-sided 95% point of Student's t distribution with `df` degrees of freedom (`df` of 0
/// counts as 1): the table's up to 30, beyond it the Cornish-Fisher expansion about the normal
/// point, within 1e-5 of the true value there.
pub fn t95(df: u64) -> f64 {
    match df {
        0..=30 => T95[df.max(1) as usize - 1],
        _ => expansion(df as f64),
    }
}

/// The Cornish-Fisher expansion of Student's t 95% point about the normal one, to the fourth
/// power of `1 / v`.
fn expansion(v: f64) -> f64 {
    let z = Z95;
    let (z3, z5, z7, z9) = (z.powi(3), z.powi(5), z.powi(7), z.powi(9));
    z + (z3 + z) / (4.0 * v)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * v * v)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * v.powi(3))
        + (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z) / (92_160.0 * v.powi(4))
}

/// A count, sum and sum of squares of whole values: a mean and its spread, in constant memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Moments {
    pub n: u64,
    pub sum: u128,
    pub squares: u128,
}

impl Moments {
    /// Counts `value` (at most [`MAX_VALUE`]).
    pub fn add(&mut self, value: u64) {
        let x = u128::from(value.min(MAX_VALUE));
        self.n += 1;
        self.sum += x;
        self.squares += x * x;
    }

    /// Takes back a `value` counted before.
    pub fn remove(&mut self, value: u64) {
        let x = u128::from(value.min(MAX_VALUE));
        self.n = self.n.saturating_sub(1);
        self.sum = self.sum.saturating_sub(x);
        self.squares = self.squares.saturating_sub(x * x);
    }

    /// The mean; `None` of nothing.
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum as f64 / self.n as f64)
    }

    /// The sample variance (n - 1 in the denominator); `None` below two values. Exact in
    /// integers while `n * squares` fits in 128 bits, else in floating point.
    pub fn variance(&self) -> Option<f64> {
        if self.n < 2 {
            return None;
        }
        let n = u128::from(self.n);
        let spread = n
            .checked_mul(self.squares)
            .zip(self.sum.checked_mul(self.sum))
            .and_then(|(a, b)| a.checked_sub(b));
        let pairs = (self.n as f64) * (self.n as f64 - 1.0);
        Some(match spread {
            Some(spread) => spread as f64 / pairs,
            None => {
                let mean = self.sum as f64 / self.n as f64;
                ((self.squares as f64 - self.sum as f64 * mean) / (self.n as f64 - 1.0)).max(0.0)
            }
        })
    }

    /// The mean's 95% t interval; `None` below two values.
    pub fn interval(&self) -> Option<Interval> {
        let mean = self.mean()?;
        let half = t95(self.n - 1) * (self.variance()? / self.n as f64).sqrt();
        Some(Interval {
            low: mean - half,
            high: mean + half,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(a: f64, b: f64, within: f64) -> bool {
        (a - b).abs() <= within
    }

    #[test]
    fn wilson_matches_the_textbook_figures() {
        // 10 of 100: 0.0552 to 0.1744 (Newcombe 1998, method 3).
        let i = wilson(10, 100).unwrap();
        assert!(
            close(i.low, 0.0552, 1e-4) && close(i.high, 0.1744, 1e-4),
            "{i:?}"
        );
        // 0 of 10: 0 to 0.2775; 10 of 10: 0.7225 to 1.
        let none = wilson(0, 10).unwrap();
        assert!(
            none.low == 0.0 && close(none.high, 0.2775, 1e-4),
            "{none:?}"
        );
        let all = wilson(10, 10).unwrap();
        assert!(
            close(all.low, 0.7225, 1e-4) && close(all.high, 1.0, 1e-12),
            "{all:?}"
        );
        assert_eq!(wilson(0, 0), None);
    }

    #[test]
    fn the_t_point_follows_the_table_and_the_expansion_meets_it() {
        assert_eq!(t95(0), T95[0]);
        assert_eq!(t95(4), 2.776_445);
        // The expansion meets the table at 30, and the true points at 60 and 120.
        assert!(close(expansion(30.0), T95[29], 1e-5), "{}", expansion(30.0));
        assert!(t95(31) < T95[29]);
        assert!(close(t95(60), 2.000_298, 1e-5), "{}", t95(60));
        assert!(close(t95(120), 1.979_930, 1e-5), "{}", t95(120));
        assert!(close(t95(1_000_000), Z95, 1e-5));
    }

    #[test]
    fn a_mean_s_interval_is_the_t_interval() {
        let mut m = Moments::default();
        for x in [2, 4, 4, 4, 5, 5, 7, 9] {
            m.add(x);
        }
        // Mean 5, sample variance 32/7.
        assert_eq!(m.mean(), Some(5.0));
        assert!(close(m.variance().unwrap(), 32.0 / 7.0, 1e-12));
        let half = 2.364_624 * (32.0 / 7.0 / 8.0f64).sqrt();
        let i = m.interval().unwrap();
        assert!(close(i.low, 5.0 - half, 1e-9) && close(i.high, 5.0 + half, 1e-9));
        let mut one = Moments::default();
        one.add(3);
        assert_eq!((one.mean(), one.interval()), (Some(3.0), None));
    }

    #[test]
    fn huge_values_are_capped_and_their_variance_still_found() {
        let mut m = Moments::default();
        for _ in 0..4 {
            m.add(u64::MAX);
        }
        m.add(0);
        assert_eq!(m.sum, 4 * u128::from(MAX_VALUE));
        let expected = {
            let (x, n) = (MAX_VALUE as f64, 5.0);
            let mean = 4.0 * x / n;
            (4.0 * (x - mean).powi(2) + mean * mean) / (n - 1.0)
        };
        assert!(close(m.variance().unwrap() / expected, 1.0, 1e-9));
        // 2^40 debates of 2^40 tokens: n times the squares is past 128 bits.
        let n = 1u64 << 40;
        let mut many = Moments {
            n,
            sum: u128::from(MAX_VALUE) * u128::from(n),
            squares: u128::from(MAX_VALUE).pow(2) * u128::from(n),
        };
        assert_eq!(
            many.variance(),
            Some(0.0),
            "the float path, all values equal"
        );
        many.remove(MAX_VALUE);
        assert_eq!(many.n, n - 1);
    }

    proptest! {
        /// Counting values then taking some back leaves what counting the rest gives; the mean
        /// lies within its interval, and a rate within [0, 1] and its Wilson interval.
        #[test]
        fn counting_and_taking_back_agree(
            values in proptest::collection::vec(0u64..2_000_000, 0..60),
            taken in proptest::collection::vec(any::<bool>(), 60),
        ) {
            let mut all = Moments::default();
            let mut rest = Moments::default();
            for (value, take) in values.iter().zip(&taken) {
                all.add(*value);
                if !take {
                    rest.add(*value);
                }
            }
            for (value, take) in values.iter().zip(&taken) {
                if *take {
                    all.remove(*value);
                }
            }
            prop_assert_eq!(all, rest);
            if let (Some(mean), Some(i)) = (rest.mean(), rest.interval()) {
                prop_assert!(i.low <= mean + 1e-9 && mean <= i.high + 1e-9);
                let direct = {
                    let kept: Vec<f64> = values.iter().zip(&taken)
                        .filter(|(_, t)| !**t).map(|(v, _)| *v as f64).collect();
                    let m = kept.iter().sum::<f64>() / kept.len() as f64;
                    kept.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (kept.len() as f64 - 1.0)
                };
                prop_assert!((rest.variance().unwrap() - direct).abs() <= 1e-6 * direct.max(1.0));
            }
            let hits = taken.iter().take(values.len()).filter(|t| **t).count() as u64;
            if let Some(i) = wilson(hits, values.len() as u64) {
                let p = hits as f64 / values.len() as f64;
                prop_assert!(0.0 <= i.low && i.low <= p && p <= i.high && i.high <= 1.0);
            }
        }
    }
}
