//! Tests of change-point detection: a shift is found where it is, with its size; series
//! without one stay quiet; the error control holds across a scan; seeds make answers
//! repeatable. Data come from a seeded generator, so no test depends on chance or timing.
use super::*;
use crate::stats::noise::Rng as Noise;

impl Noise {
    /// `len` ln figures around ln(2 µs) with a relative spread `sd`, times `factor` from
    /// `shift_at` on.
    fn series(&mut self, len: usize, sd: f64, shift_at: usize, factor: f64) -> Vec<f64> {
        (0..len)
            .map(|i| {
                let step = if i >= shift_at { factor.ln() } else { 0.0 };
                2f64.ln() + step + sd * self.normal()
            })
            .collect()
    }
}

fn scan(series: &[Vec<f64>], settings: Settings) -> Vec<Scan> {
    let keys: Vec<String> = (0..series.len()).map(|i| format!("series {i}")).collect();
    let all: Vec<Series<'_>> = series
        .iter()
        .zip(&keys)
        .map(|(xs, key)| Series { key, ln_values: xs })
        .collect();
    change_points(&all, settings).unwrap()
}

fn changes(scan: &Scan) -> &[Change] {
    match scan {
        Scan::Scanned { changes } => changes,
        Scan::TooShort { .. } => panic!("scanned: {scan:?}"),
    }
}

#[test]
fn a_shift_is_found_at_its_index_with_its_size() {
    let mut noise = Noise(1);
    let series: Vec<Vec<f64>> = (0..10).map(|_| noise.series(40, 0.03, 20, 1.25)).collect();
    for found in scan(&series, Settings::default()) {
        let c = changes(&found);
        assert_eq!(c.len(), 1, "{c:?}");
        assert!((19..=21).contains(&c[0].index), "{c:?}");
        assert!((1.15..1.35).contains(&c[0].ratio), "{c:?}");
        assert!(c[0].ratio_lo > 1.0 && c[0].ratio_lo < c[0].ratio, "{c:?}");
        assert!(c[0].ratio < c[0].ratio_hi, "{c:?}");
        assert!(c[0].p <= c[0].level, "{c:?}");
    }
}

#[test]
fn a_series_without_a_shift_stays_quiet() {
    let mut noise = Noise(2);
    let series: Vec<Vec<f64>> = (0..20).map(|_| noise.series(40, 0.05, 40, 1.0)).collect();
    let quiet = scan(&series, Settings::default())
        .iter()
        .filter(|s| changes(s).is_empty())
        .count();
    // Holm at 5 %: any false change in the scan of 20 with chance at most 5 %.
    assert_eq!(quiet, 20);
}

#[test]
fn runs_in_two_modes_without_a_shift_stay_quiet() {
    // Runs that fall into one of two modes 35 % apart at random, as a pinned ring's do here:
    // a change in distribution over time, not one at a moment.
    let mut noise = Noise(3);
    let series: Vec<Vec<f64>> = (0..10)
        .map(|_| {
            (0..40)
                .map(|_| {
                    let slow = if noise.unit() < 0.3 {
                        1.35f64.ln()
                    } else {
                        0.0
                    };
                    slow + 0.02 * noise.normal()
                })
                .collect()
        })
        .collect();
    let called: usize = scan(&series, Settings::default())
        .iter()
        .map(|s| changes(s).len())
        .sum();
    assert_eq!(called, 0);
}

#[test]
fn two_shifts_are_both_found() {
    let mut noise = Noise(4);
    let mut xs = noise.series(30, 0.02, 10, 1.3);
    for x in xs.iter_mut().skip(20) {
        *x -= 1.3f64.ln() * 2.0;
    }
    let found = scan(&[xs], Settings::default());
    let indices: Vec<usize> = changes(&found[0]).iter().map(|c| c.index).collect();
    assert_eq!(indices, vec![10, 20]);
}

#[test]
fn short_series_are_too_short_not_quiet() {
    let mut noise = Noise(5);
    let found = scan(
        &[noise.series(9, 0.02, 5, 2.0), Vec::new()],
        Settings::default(),
    );
    assert_eq!(found[0], Scan::TooShort { runs: 9 });
    assert_eq!(found[1], Scan::TooShort { runs: 0 });
}

#[test]
fn a_series_answers_the_same_whatever_is_scanned_with_it() {
    let mut noise = Noise(6);
    let weak = noise.series(40, 0.05, 20, 1.06);
    let others: Vec<Vec<f64>> = (0..3).map(|_| noise.series(40, 0.05, 40, 1.0)).collect();
    let s = Settings {
        permutations: Some(999),
        ..Settings::default()
    };
    let alone = scan(std::slice::from_ref(&weak), s);
    let again = scan(std::slice::from_ref(&weak), s);
    assert_eq!(alone, again);
    let with: Vec<Vec<f64>> = std::iter::once(weak).chain(others).collect();
    let p_alone: Vec<f64> = changes(&alone[0]).iter().map(|c| c.p).collect();
    let p_with: Vec<f64> = changes(&scan(&with, s)[0]).iter().map(|c| c.p).collect();
    // The same permutations: a p-value found in both scans is the same figure.
    for (a, w) in p_alone.iter().zip(&p_with) {
        assert_eq!(a, w);
    }
}

#[test]
fn change_at_names_the_run_where_the_series_moved() {
    let mut noise = Noise(7);
    let xs = noise.series(30, 0.02, 15, 1.5);
    let series = Series {
        key: "p",
        ln_values: &xs,
    };
    let s = Settings::default();
    assert!(matches!(change_at(&series, 15, s).unwrap(), At::Change(c) if c.index == 15));
    assert!(
        matches!(change_at(&series, 10, s).unwrap(), At::NoneFound { changes } if changes.len() == 1)
    );
    assert_eq!(
        change_at(&series, 27, s).unwrap(),
        At::TooFewRuns {
            before: 27,
            after: 3
        }
    );
    assert!(change_at(&series, 30, s).is_err());
}

#[test]
fn bad_settings_and_figures_are_refused_naming_them() {
    let xs = vec![0.0; 12];
    let one = [Series {
        key: "p",
        ln_values: &xs,
    }];
    for (settings, name) in [
        (
            Settings {
                level: 0.0,
                ..Settings::default()
            },
            "level",
        ),
        (
            Settings {
                min_runs: 1,
                ..Settings::default()
            },
            "min_runs",
        ),
        (
            Settings {
                permutations: Some(5),
                ..Settings::default()
            },
            "permutations",
        ),
    ] {
        let err = change_points(&one, settings).unwrap_err().to_string();
        assert!(err.starts_with(name), "{err}");
    }
    let nan = vec![f64::NAN; 12];
    let bad = [Series {
        key: "p",
        ln_values: &nan,
    }];
    assert!(change_points(&bad, Settings::default()).is_err());
}

#[test]
fn the_size_interval_holds_the_shift() {
    let mut noise = Noise(8);
    let before: Vec<f64> = (0..10).map(|_| 0.05 * noise.normal()).collect();
    let after: Vec<f64> = (0..10).map(|_| 0.2 + 0.05 * noise.normal()).collect();
    let (ratio, lo, hi) = size(&before, &after);
    assert!(lo < ratio && ratio < hi);
    assert!(lo < 0.2f64.exp() && 0.2f64.exp() < hi, "{lo} {hi}");
    assert!(lo > 1.0);
}

#[test]
fn a_change_keeps_min_runs_on_each_side() {
    // Three slow runs at the start: a shift too short to be called one at min_runs 5.
    let mut noise = Noise(9);
    let mut xs = noise.series(30, 0.01, 30, 1.0);
    for x in xs.iter_mut().take(3) {
        *x += 0.5;
    }
    let found = scan(&[xs], Settings::default());
    for c in changes(&found[0]) {
        assert!(c.runs_before >= 5 && c.runs_after >= 5, "{c:?}");
    }
}
