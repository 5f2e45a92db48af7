//! An interval for a mean that stays valid however often it is looked at: a confidence
//! sequence, so that a measurement may stop as soon as its interval decides and still keep its
//! error rate. Pure; `ab` uses it.
//!
//! The sequence is Lai's (1976) for Gaussian data of unknown variance: the t-test's Bayes
//! factor with a normal prior N(0, c²) on the standardized effect (μ − μ₀)/σ and the
//! scale-invariant prior on σ is a nonnegative martingale under μ = μ₀ (Pérez-Ortiz, Lardy,
//! de Heide & Grünwald 2024; Wang & Ramdas 2024), so by Ville's inequality it exceeds 1/α at
//! any time with probability at most α, and the μ₀ where it does not form the sequence:
//! `mean ± t_N · s / √N`, with `t_N` from the Bayes factor in closed form (`t_bound`).

/// The prior's scale c on the standardized effect: the half-width is narrowest for effects of
/// about this many standard deviations of one round, and the sequence is finite from the
/// sixth observation on at α = 0.05.
pub const PRIOR_SCALE: f64 = 0.7;

/// The |t| beyond which the Bayes factor of `n` observations exceeds `1 / alpha` (infinite
/// while it cannot, with too few observations).
///
/// With ν = n − 1 and g = 1 + n·c², the factor is `g^(-1/2) · ((1 + T) / (1 + T/g))^(n/2)`
/// where T = t²/ν (Rouder et al. 2009, at a fixed g); setting it to 1/α gives
/// T = (K − 1) / (1 − K/g), K = (√g / α)^(2/n), finite where K < g.
pub fn t_bound(n: usize, alpha: f64, c: f64) -> f64 {
    if n < 2 {
        return f64::INFINITY;
    }
    let nf = n as f64;
    let g = 1.0 + nf * c * c;
    let k = (g.sqrt() / alpha).powf(2.0 / nf);
    if k >= g {
        return f64::INFINITY;
    }
    ((nf - 1.0) * (k - 1.0) / (1.0 - k / g)).sqrt()
}

/// The sequence at the data seen so far: their mean with its anytime-valid interval at
/// level `1 - alpha` (the whole line while too few to bound it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub n: usize,
    pub mean: f64,
    pub low: f64,
    pub high: f64,
}

impl Interval {
    pub fn half_width(&self) -> f64 {
        (self.high - self.low) / 2.0
    }
}

/// The sequence's interval after `xs`.
pub fn interval(xs: &[f64], alpha: f64) -> Interval {
    let n = xs.len();
    let mean = if n == 0 {
        f64::NAN
    } else {
        xs.iter().sum::<f64>() / n as f64
    };
    let half = if n < 2 {
        f64::INFINITY
    } else {
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        t_bound(n, alpha, PRIOR_SCALE) * (var / n as f64).sqrt()
    };
    Interval {
        n,
        mean,
        low: mean - half,
        high: mean + half,
    }
}

/// Rounds a comparison stopped by this sequence needs to tell a change of `detect`
/// (relative) with probability about `power`, when one round's ln ratio scatters by `spread`:
/// the smallest n with (t_bound(n) + z_power) · spread / √n ≤ ln(1 + detect). None beyond
/// `max`.
pub fn rounds_to_detect(
    spread: f64,
    detect: f64,
    alpha: f64,
    power: f64,
    max: usize,
) -> Option<usize> {
    let effect = (1.0 + detect).ln();
    let z = super::t_quantile(2.0 * power - 1.0, f64::INFINITY);
    (2..=max).find(|&n| (t_bound(n, alpha, PRIOR_SCALE) + z) * spread / (n as f64).sqrt() <= effect)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded stream of standard normal draws (Box-Muller over splitmix64).
    struct Normal(u64);

    impl Normal {
        fn uniform(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }

        fn next(&mut self) -> f64 {
            let (u, v) = (self.uniform().max(1e-300), self.uniform());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        }
    }

    #[test]
    fn the_bound_is_finite_from_a_few_observations_and_shrinks() {
        assert!(t_bound(5, 0.05, PRIOR_SCALE).is_infinite());
        let b: Vec<f64> = [6, 10, 20, 100, 1000]
            .iter()
            .map(|&n| t_bound(n, 0.05, PRIOR_SCALE) / (n as f64).sqrt())
            .collect();
        assert!(b[0].is_finite());
        assert!(b.windows(2).all(|w| w[1] < w[0]), "{b:?}");
        // Wider than a fixed-n interval (t = 2.09 at 20): the price of looking every time.
        assert!(t_bound(20, 0.05, PRIOR_SCALE) > 2.09);
    }

    #[test]
    fn rounds_to_detect_cost_more_than_a_fixed_plan_and_shrink_with_the_change() {
        let n = rounds_to_detect(0.05, 0.05, 0.05, 0.8, 100_000).unwrap();
        // A fixed-n paired t at 80 % power: (1.96 + 0.84)² σ²/δ² ≈ 8.3 rounds.
        assert!(n > 9 && n < 40, "{n}");
        assert!(rounds_to_detect(0.05, 0.10, 0.05, 0.8, 100_000).unwrap() < n);
        assert_eq!(rounds_to_detect(1.0, 0.001, 0.05, 0.8, 1_000), None);
    }

    #[test]
    fn looking_after_every_observation_keeps_the_error_rate() {
        // 2,000 paths of 200 draws with mean 0: the interval is checked after every draw,
        // and a path counts if it ever excludes the truth. Ville's inequality bounds that
        // by alpha; fixed-n 95 % intervals checked the same way exclude it on most paths.
        let mut rng = Normal(7);
        let (paths, draws, alpha) = (2000, 200, 0.05);
        let mut ever = 0;
        for _ in 0..paths {
            let xs: Vec<f64> = (0..draws).map(|_| rng.next()).collect();
            let (mut sum, mut sum_sq) = (0.0, 0.0);
            let mut excluded = false;
            for (k, x) in xs.iter().enumerate() {
                sum += x;
                sum_sq += x * x;
                let n = (k + 1) as f64;
                if k >= 1 {
                    let mean = sum / n;
                    let sd = ((sum_sq - n * mean * mean) / (n - 1.0)).max(0.0).sqrt();
                    let half = t_bound(k + 1, alpha, PRIOR_SCALE) * sd / n.sqrt();
                    excluded |= mean.abs() > half;
                }
            }
            ever += excluded as usize;
        }
        let rate = ever as f64 / paths as f64;
        assert!(rate <= alpha, "{rate}");
        let i = interval(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], alpha);
        assert_eq!((i.n, i.mean), (7, 4.0));
        assert!(i.low < 4.0 && i.high > 4.0 && (i.half_width() - (i.high - 4.0)).abs() < 1e-12);
        assert!(interval(&[1.0], alpha).half_width().is_infinite());
    }
}
