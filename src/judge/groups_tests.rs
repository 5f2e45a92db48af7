//! Tests of two groups of runs compared per point: the family's false calls at a broad
//! spread, the power at a real change, short sides and bad input.
use super::*;
use crate::stats::noise::Rng;
use crate::verdict::Change;

fn runs(rng: &mut Rng, n: usize, ratio: f64, sd: f64) -> Vec<f64> {
    (0..n)
        .map(|_| 10.0 * ratio * (sd * rng.normal()).exp())
        .collect()
}

/// Of `families` families of `points` points, `n` runs a side, the new side `ratio` × the
/// base: the share of families with any point called `word`.
fn families(seed: u64, families: usize, points: usize, n: usize, ratio: f64, sd: f64) -> f64 {
    let mut rng = Rng(seed);
    let mut any = 0;
    for _ in 0..families {
        let data: Vec<(Vec<f64>, Vec<f64>)> = (0..points)
            .map(|_| (runs(&mut rng, n, 1.0, sd), runs(&mut rng, n, ratio, sd)))
            .collect();
        let groups: Vec<Groups> = data
            .iter()
            .map(|(b, n)| Groups { base: b, new: n })
            .collect();
        let out = judge(&groups, 0.02, 0.05).unwrap();
        let called = |j: &GroupJudgement| matches!(j.call.change, Change::Slower | Change::Faster);
        any += usize::from(out.iter().any(called));
    }
    let share = any as f64 / families as f64;
    println!("{families} families of {points}, {n} runs a side, ratio {ratio}, sd {sd}: {share}");
    share
}

#[test]
fn a_a_families_of_broad_runs_call_anything_at_most_at_alpha() {
    // 20 points, runs a factor of 1.5 apart (this machine under load): per point at 5 %
    // about 64 % of families would hold a call; Holm holds the family at 5 % (+ 3 standard
    // errors of 500 families, 0.0097 each).
    let any = families(71, 500, 20, 10, 1.0, 0.4);
    assert!(any <= 0.08, "{any}");
    let any = families(72, 500, 4, 5, 1.0, 0.02);
    assert!(any <= 0.08, "{any}");
}

#[test]
fn ten_runs_a_side_call_a_real_change_and_say_it_on_its_side_of_1() {
    let power = families(73, 200, 1, 10, 1.08, 0.03);
    assert!(power >= 0.9, "{power}");
    let mut rng = Rng(74);
    let (base, new) = (
        runs(&mut rng, 10, 1.0, 0.03),
        runs(&mut rng, 10, 1.25, 0.03),
    );
    let out = judge(
        &[Groups {
            base: &base,
            new: &new,
        }],
        0.02,
        0.05,
    )
    .unwrap();
    let j = &out[0];
    assert_eq!(
        (j.call.change, j.call.why),
        (Change::Slower, Why::Decided),
        "{j:?}"
    );
    assert!(
        j.call.low > 1.0 && j.call.high > j.call.ratio && (j.call.ratio - 1.25).abs() < 0.05,
        "{j:?}"
    );
    assert_eq!((j.base_runs, j.new_runs), (10, 10));
}

#[test]
fn a_side_short_of_runs_is_inconclusive_and_no_member_of_the_family() {
    let mut rng = Rng(75);
    let (base, new) = (runs(&mut rng, 10, 1.0, 0.01), runs(&mut rng, 10, 1.5, 0.01));
    let short = [20.0, 21.0];
    let out = judge(
        &[
            Groups {
                base: &base,
                new: &short,
            },
            Groups {
                base: &base,
                new: &new,
            },
        ],
        0.02,
        0.05,
    )
    .unwrap();
    assert_eq!(
        (out[0].call.change, out[0].call.why),
        (Change::Inconclusive, Why::ShortSeries)
    );
    assert_eq!(out[0].new_runs, 2);
    // One member: Holm's level for it is the family's whole 5 %.
    assert!(
        (out[1].call.confidence - 0.95).abs() < 1e-12,
        "{:?}",
        out[1]
    );
}

#[test]
fn bad_figures_name_their_side() {
    let err = |b: &[f64], n: &[f64]| {
        judge(&[Groups { base: b, new: n }], 0.02, 0.05)
            .unwrap_err()
            .to_string()
    };
    assert!(err(&[1.0, 0.0, 1.0], &[1.0; 3]).contains("base"));
    assert!(err(&[1.0; 3], &[f64::NAN, 1.0, 1.0]).contains("new"));
    assert!(judge(&[], 2.0, 0.05).is_err());
}

#[test]
fn the_run_spread_pools_groups_about_their_own_means() {
    // Two groups a factor of two apart, each with the same small spread: the spread is
    // theirs, not the distance between them.
    let a = [10.0, 11.0, 9.0];
    let b = [20.0, 22.0, 18.0];
    let (sd, runs) = run_spread(&[&a, &b]).unwrap();
    let (alone, _) = run_spread(&[&a]).unwrap();
    assert!((sd - alone).abs() < 1e-12 && sd < 0.11, "{sd}");
    assert_eq!(runs, 6);
    assert_eq!(run_spread(&[&[10.0], &[]]), None);
}
