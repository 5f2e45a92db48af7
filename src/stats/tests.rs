//! Tests of the statistics: descriptions, the variance model's levels and their
//! uncertainty, the run level, runs' estimates and differences.
use super::runs::without_outliers;
use super::*;
use crate::stats::noise::Rng;

fn normal_samples(seed: u64, n: usize, mean: f64, cv: f64) -> Vec<f64> {
    let mut rng = Rng(seed);
    (0..n).map(|_| mean * (1.0 + cv * rng.normal())).collect()
}

const BIMODAL: [f64; 11] = [
    0.85, 0.86, 0.84, 0.85, 0.87, 1.50, 1.52, 1.49, 1.51, 0.86, 1.50,
];

#[test]
fn median_odd_and_even_unsorted() {
    assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
    assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    assert_eq!(median(&[7.5]), 7.5);
    assert!(median(&[]).is_nan());
}

#[test]
fn quantiles_match_numpy_linear() {
    // Expected values from numpy.percentile(..., method="linear").
    let s: Vec<f64> = (1..=10).map(f64::from).collect();
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    assert!(close(quantile_sorted(&s, 0.25), 3.25));
    assert!(close(quantile_sorted(&s, 0.5), 5.5));
    assert!(close(quantile_sorted(&s, 0.025), 1.225));
    assert!(close(quantile_sorted(&s, 0.975), 9.775));
    assert_eq!(quantile_sorted(&s, 0.0), 1.0);
    assert_eq!(quantile_sorted(&s, 1.0), 10.0);
}

#[test]
fn basic_moments() {
    let s = describe(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
    assert_eq!(s.n, 8);
    assert_eq!((s.min, s.max, s.median, s.mean), (2.0, 9.0, 4.5, 5.0));
    // Sum of squared deviations is 32, so the n-1 variance is 32/7.
    assert!((s.stdev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
    assert!((s.cv - s.stdev / 5.0).abs() < 1e-12);
    let one = describe(&[3.5]);
    assert_eq!(
        (one.stdev, one.cv, one.outliers, one.clusters),
        (0.0, 0.0, 0, 1)
    );
    let negative = describe(&[-3.0, -1.0, -2.0, -4.0, -5.0]);
    // CV uses |mean|, so a negative mean must not yield a negative CV.
    assert!(negative.cv > 0.0 && negative.median == -3.0);
    assert_eq!(describe(&[-1.0, 1.0]).cv, f64::INFINITY);
}

#[test]
fn tukey_outliers_on_known_set() {
    // Quartiles 2.5 and 7.5 give fences at -5 and 15.
    let xs = [-50.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 100.0];
    assert_eq!(describe(&xs).outliers, 2);
    // Points exactly on a fence are not outliers.
    let on_fence = [-5.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 15.0];
    assert_eq!(describe(&on_fence).outliers, 0);
}

#[test]
fn two_real_modes_are_found_noise_and_strays_are_not() {
    assert_eq!(describe(&BIMODAL).clusters, 2);
    let negated: Vec<f64> = BIMODAL.iter().map(|x| -x).collect();
    assert_eq!(describe(&negated).clusters, 2);
    for seed in 0..20 {
        // Many repetitions must not hide a real second mode behind their spread.
        let mut xs = normal_samples(seed, 25, 0.85, 0.02);
        xs.extend(normal_samples(seed + 1000, 25, 1.5, 0.02));
        assert_eq!(describe(&xs).clusters, 2, "{xs:?}");
    }
    for seed in 0..200 {
        for n in [11, 50] {
            for cv in [0.01, 0.02, 0.05] {
                let xs = normal_samples(seed, n, 1.0, cv);
                assert_eq!(describe(&xs).clusters, 1, "{xs:?}");
            }
        }
    }
    // Two strays out of eleven are below both the 20% and 3-sample bars.
    let mut two = vec![1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01, 0.99];
    two.extend([3.0, 3.01]);
    assert_eq!(describe(&two).clusters, 1);
    // Two tight groups 1% apart: quantisation, not two modes.
    assert_eq!(describe(&[1.00, 1.00, 1.00, 1.01, 1.01, 1.01]).clusters, 1);
}

#[test]
#[should_panic(expected = "need at least one sample")]
fn empty_input_panics() {
    describe(&[]);
}

#[test]
#[should_panic(expected = "sample 1 is not finite")]
fn nan_panics() {
    describe(&[1.0, f64::NAN, 2.0]);
}

fn layout<'a>(samples: &'a [f64], block: usize, instance_blocks: &'a [usize]) -> Layout<'a> {
    Layout {
        samples,
        block,
        instance_blocks,
    }
}

#[test]
fn a_layout_cuts_instances_into_blocks_and_loses_no_sample() {
    let xs: Vec<f64> = (0..10).map(f64::from).collect();
    let l = layout(&xs, 2, &[1, 2]);
    let inst = l.instances();
    assert_eq!(
        inst.len(),
        3,
        "the two samples past the layout form an instance"
    );
    assert_eq!(inst[0], vec![&xs[0..2]]);
    assert_eq!(inst[1], vec![&xs[2..4], &xs[4..6]]);
    assert_eq!(inst[2], vec![&xs[6..8], &xs[8..10]]);
    let (units, level) = l.units();
    assert_eq!(level, Level::Block);
    assert_eq!(units, vec![vec![0.5], vec![2.5, 4.5], vec![6.5, 8.5]]);
    let (units, level) = layout(&xs[..3], 1, &[3]).units();
    assert_eq!(
        (units, level),
        (vec![vec![0.0, 1.0, 2.0]], Level::Repetition)
    );
}

#[test]
fn spreads_name_each_level() {
    // Two instances of two blocks of two: repetitions differ by 2 inside each block,
    // block medians by 10 inside each instance, instances by 100.
    let xs = [0.0, 2.0, 10.0, 12.0, 100.0, 102.0, 110.0, 112.0];
    let s = spreads(&layout(&xs, 2, &[2, 2]));
    assert!((s.repetition - 2f64.sqrt()).abs() < 1e-12, "{s:?}");
    assert!((s.block - 50f64.sqrt()).abs() < 1e-12, "{s:?}");
    assert!((s.instance - 5000f64.sqrt()).abs() < 1e-12, "{s:?}");
    let one = spreads(&layout(&xs[..2], 2, &[1]));
    assert!(one.block.is_nan() && one.instance.is_nan());
}

#[test]
fn one_instance_rests_on_its_blocks() {
    let xs = [9.0, 9.0, 11.0, 11.0, 10.0, 10.0];
    let u = uncertainty(&layout(&xs, 2, &[3]));
    assert_eq!((u.level, u.df), (Level::Block, 2.0));
    // sd of the block medians 9, 11, 10 is 1; over √3 blocks.
    assert!((u.se - 1.0 / 3f64.sqrt()).abs() < 1e-12, "{u:?}");
    // lmbench's fixed repetitions: every repetition is a block of one.
    let u = uncertainty(&layout(&xs, 1, &[6]));
    assert_eq!((u.level, u.df), (Level::Repetition, 5.0));
    assert_eq!(uncertainty(&layout(&xs[..1], 1, &[1])).df, 0.0);
}

#[test]
fn instances_that_differ_are_the_replicate() {
    // Three instances, blocks within each nearly equal, instances far apart.
    let xs = [
        9.0, 9.0, 9.1, 9.1, // instance at ~9
        11.0, 11.0, 11.1, 11.1, // ~11
        10.0, 10.0, 10.1, 10.1, // ~10
    ];
    let u = uncertainty(&layout(&xs, 2, &[2, 2, 2]));
    assert_eq!(u.level, Level::Instance);
    // Balanced: the standard error of the mean of the instance means, on 2 df.
    let means = [9.05, 11.05, 10.05];
    let expect = (sum_sq_dev(&means) / 2.0 / 3.0).sqrt();
    assert!((u.se - expect).abs() < 1e-9, "{u:?} vs {expect}");
    assert!((u.df - 2.0).abs() < 1e-9, "{u:?}");
}

#[test]
fn instances_that_agree_are_pooled_with_their_blocks() {
    // Block medians alternate within every instance; instance means are equal.
    let xs = [
        9.0, 9.0, 11.0, 11.0, 9.0, 9.0, 11.0, 11.0, 9.0, 9.0, 11.0, 11.0,
    ];
    let u = uncertainty(&layout(&xs, 2, &[2, 2, 2]));
    assert_eq!((u.level, u.df), (Level::Block, 5.0));
    // sd of 9, 11, 9, 11, 9, 11 over √6.
    let sd = (6.0f64 / 5.0).sqrt();
    assert!((u.se - sd / 6f64.sqrt()).abs() < 1e-12, "{u:?}");
}

/// Runs made of `instances` instances of `blocks` blocks, each level adding normal noise
/// of the given relative size, plus a run-level shift.
fn simulated_run(rng: &mut Rng, instances: usize, blocks: usize, sd: [f64; 4]) -> Vec<f64> {
    let [run, inst, block, rep] = sd;
    let base = 10.0 * (1.0 + run * rng.normal());
    let mut xs = Vec::new();
    for _ in 0..instances {
        let i = base * (1.0 + inst * rng.normal());
        for _ in 0..blocks {
            let b = i * (1.0 + block * rng.normal());
            xs.extend((0..4).map(|_| b * (1.0 + rep * rng.normal())));
        }
    }
    xs
}

/// How often the next run's median falls inside this run's next-run interval, and the
/// median half-width over 1.96 × the true sd of a run's median.
fn coverage_and_sharpness(sd: [f64; 4], instances: usize, blocks: usize) -> (f64, f64) {
    let mut rng = Rng(7);
    let shape = vec![blocks; instances];
    let runs: Vec<(f64, (f64, f64))> = (0..2000)
        .map(|_| {
            let xs = simulated_run(&mut rng, instances, blocks, sd);
            let l = layout(&xs, 4, &shape);
            let e = Estimate {
                center: median(&xs),
                uncertainty: uncertainty(&l),
            };
            (e.center, e.next_run_interval(0.95))
        })
        .collect();
    let inside = runs
        .windows(2)
        .filter(|w| (w[0].1 .0..=w[0].1 .1).contains(&w[1].0))
        .count() as f64
        / (runs.len() - 1) as f64;
    let medians: Vec<f64> = runs.iter().map(|r| r.0).collect();
    let spread = (sum_sq_dev(&medians) / (medians.len() - 1) as f64).sqrt();
    let halves: Vec<f64> = runs.iter().map(|r| (r.1 .1 - r.1 .0) / 2.0).collect();
    (inside, median(&halves) / (1.96 * spread))
}

#[test]
fn the_next_run_falls_inside_as_often_as_promised_when_no_run_level_exists() {
    // Noise at every level a run can see, none between runs.
    for (sd, instances) in [
        ([0.0, 0.03, 0.01, 0.02], 6),
        ([0.0, 0.0, 0.02, 0.05], 4),
        ([0.0, 0.05, 0.0, 0.0], 8),
    ] {
        let (coverage, sharpness) = coverage_and_sharpness(sd, instances, 3);
        assert!((0.92..=0.985).contains(&coverage), "{sd:?}: {coverage}");
        assert!(sharpness < 1.9, "{sd:?}: {sharpness}");
    }
}

#[test]
fn a_run_level_the_run_cannot_see_breaks_coverage() {
    // The model's stated limit: drift slower than a run is not in its interval.
    let (coverage, _) = coverage_and_sharpness([0.05, 0.01, 0.01, 0.01], 6, 3);
    assert!(coverage < 0.5, "{coverage}");
}

#[test]
fn t_quantiles_match_the_tables() {
    assert!((t_quantile(0.95, 4.0) - 2.776_445).abs() < 1e-5);
    assert!((t_quantile(0.95, 1.0) - 12.706_205).abs() < 1e-5);
    assert!((t_quantile(0.95, 1e5) - 1.959_981).abs() < 1e-5);
    assert!((t_quantile(0.95, 1e9) - 1.959_964).abs() < 1e-5);
    assert_eq!(t_quantile(0.95, 0.0), f64::INFINITY);
    assert!((t_p_value(2.776_445, 4.0) - 0.05).abs() < 1e-6);
}

fn estimate(center: f64, se: f64, df: f64) -> Estimate {
    Estimate {
        center,
        uncertainty: Uncertainty {
            se,
            df,
            level: Level::Instance,
        },
    }
}

#[test]
fn next_run_intervals_are_root_two_wider_than_the_level_s() {
    let e = estimate(10.0, 0.5, 4.0);
    let (lo, hi) = e.next_run_interval(0.95);
    let half = 2.776_445 * 0.5 * std::f64::consts::SQRT_2;
    assert!((hi - 10.0 - half).abs() < 1e-5 && (10.0 - lo - half).abs() < 1e-5);
    assert!((e.relative_half_width(0.95) - half / 10.0).abs() < 1e-6);
    assert_eq!(
        estimate(-1.0, 0.1, 4.0).relative_half_width(0.95),
        f64::INFINITY
    );
}

#[test]
fn a_difference_is_a_ratio_with_welch_s_interval() {
    let base = estimate(10.0, 0.1, 5.0);
    let same = difference(&base, &base, 0.95);
    assert_eq!((same.ratio, same.p_value), (1.0, 1.0));
    assert!(same.low < 1.0 && same.high > 1.0);
    // Equal relative errors and df: Welch's df is the sum.
    assert!((same.df - 10.0).abs() < 1e-9);
    let slower = difference(&base, &estimate(12.0, 0.12, 5.0), 0.95);
    assert!((slower.ratio - 1.2).abs() < 1e-12);
    assert!(slower.low > 1.0 && slower.p_value < 1e-4, "{slower:?}");
    // ln(1.2) / sqrt(2 * 0.01²) on 10 df.
    let t = 1.2f64.ln() / (2.0f64 * 1e-4).sqrt();
    assert!((slower.p_value - t_p_value(t, 10.0)).abs() < 1e-12);
    assert!(difference(&estimate(0.0, 0.1, 5.0), &base, 0.95)
        .ratio
        .is_nan());
}

fn runs(log_figures: &[f64], rel_se: f64) -> Vec<EarlierRun> {
    log_figures
        .iter()
        .map(|&y| EarlierRun {
            log_figure: y,
            rel_se,
            age_s: 0.0,
        })
        .collect()
}

#[test]
fn the_run_level_is_what_runs_differ_by_beyond_their_own_errors() {
    // Runs agreeing within their errors: no run level.
    let close = [0.0, 0.001, -0.001, 0.0005];
    let l = run_level(&runs(&close, 0.01)).unwrap();
    assert_eq!((l.sd, l.df), (0.0, 3.0));
    // Runs 10 % apart with 1 % errors: about the spread of the figures themselves.
    let apart = [0.0, 0.1, -0.1, 0.05, -0.05];
    let l = run_level(&runs(&apart, 0.01)).unwrap();
    let sd = (sum_sq_dev(&apart) / 4.0).sqrt();
    assert!((l.sd * l.sd - (sd * sd - 1e-4)).abs() < 1e-9, "{l:?}");
    // Unusable runs are left out; fewer than three: nothing to say.
    assert!(run_level(&runs(&[0.0, 0.1, f64::NAN], 0.01)).is_none());
    let mut two = runs(&[0.0, 0.1, 0.2], 0.01);
    two[2].rel_se = 0.0;
    assert!(run_level(&two).is_none());
    two[2].rel_se = 0.01;
    two[2].age_s = -1.0;
    assert!(run_level(&two).is_none());
}

#[test]
fn a_few_runs_measured_under_load_do_not_blow_up_the_run_level() {
    // Twelve quiet runs 2 % apart, then three made while hogs took the CPU: 60-100 %
    // slower and sure of themselves to 1 %.
    let quiet = [
        0.0, 0.02, -0.02, 0.01, -0.01, 0.03, -0.03, 0.015, -0.015, 0.0, 0.02, -0.02,
    ];
    let alone = run_level(&runs(&quiet, 0.01)).unwrap();
    let mut all = runs(&quiet, 0.01);
    all.extend(runs(&[0.5, 0.7, 0.6], 0.01));
    let with_load = run_level(&all).unwrap();
    assert_eq!(with_load, alone, "the loaded runs are set aside");
    // DerSimonian-Laird on all fifteen says 25 %.
    assert!(alone.sd < 0.03, "{alone:?}");
    // Half the runs loaded are no minority: they are the spread, and are kept.
    let mut half = runs(&quiet[..6], 0.01);
    half.extend(runs(&[0.5, 0.7, 0.6, 0.55, 0.65, 0.6], 0.01));
    assert!(run_level(&half).unwrap().sd > 0.2);
}

#[test]
fn runs_that_differ_by_chance_are_all_kept() {
    // Three runs two of which happen to agree: the third is no outlier (a fixed 3.5
    // robust deviations set it aside, and with it the run level).
    let three = runs(&[0.0, 0.005, 0.1], 0.005);
    assert!(run_level(&three).unwrap().sd > 0.03);
    // Sets of normal runs lose one about once in a hundred, whatever their number.
    let mut rng = Rng(5);
    for n in [6, 10, 30] {
        let lost = (0..2000)
            .filter(|_| {
                let y: Vec<f64> = (0..n).map(|_| 0.05 * rng.normal()).collect();
                without_outliers(&runs(&y, 0.001)).len() < n
            })
            .count();
        assert!(lost < 60, "{n} runs: {lost} of 2000 sets lost one");
    }
}

#[test]
fn old_runs_count_less_and_no_weights_make_runs_differ_more_than_seen() {
    // Two regimes: a day-old one 30 % apart, a recent one 2 % apart.
    let mut mixed = runs(&[0.3, -0.3, 0.25, -0.25], 0.01);
    for r in &mut mixed {
        r.age_s = 4.0 * RUN_HALF_LIFE_S;
    }
    let recent = runs(&[0.02, -0.02, 0.01, -0.01], 0.01);
    mixed.extend(&recent);
    let l = run_level(&mixed).unwrap();
    let even = run_level(&runs(
        &mixed.iter().map(|r| r.log_figure).collect::<Vec<_>>(),
        0.01,
    ));
    assert!(l.sd < 0.6 * even.unwrap().sd, "{l:?} {even:?}");
    // Eight runs, four of them a sixteenth as weighty: fewer effective runs.
    assert!(l.df < 7.0 && l.df > 3.0, "{l:?}");
    // One run far more certain than the rest cannot make the level exceed their spread.
    let mut lopsided = runs(&[0.0, 0.1, -0.1, 0.05], 0.05);
    lopsided[0].rel_se = 1e-6;
    let l = run_level(&lopsided).unwrap();
    let seen = (sum_sq_dev(&[0.0, 0.1, -0.1, 0.05]) / 3.0).sqrt();
    assert!(l.sd <= seen + 1e-12, "{l:?} {seen}");
}

#[test]
fn a_run_level_widens_the_uncertainty_and_becomes_its_level() {
    let u = Uncertainty {
        se: 0.3,
        df: 10.0,
        level: Level::Instance,
    };
    let run = RunLevel { sd: 0.04, df: 19.0 };
    let w = u.with_run_level(10.0, &run);
    assert_eq!(w.level, Level::Run);
    assert!((w.se - 0.5).abs() < 1e-12, "{w:?}");
    // Satterthwaite: 0.25² / (0.09²/10 + 0.16²/19).
    let df = 0.0625 / (0.0081 / 10.0 + 0.0256 / 19.0);
    assert!((w.df - df).abs() < 1e-9);
    assert_eq!(u.with_run_level(10.0, &RunLevel { sd: 0.0, df: 5.0 }), u);
}

#[test]
fn with_the_run_level_the_next_run_falls_inside_as_promised() {
    // A run level of 4 % the run cannot see, known from 29 earlier runs.
    let mut rng = Rng(11);
    let sd = [0.04, 0.01, 0.01, 0.01];
    let shape = vec![3; 6];
    let runs: Vec<(f64, (f64, f64))> = (0..2000)
        .map(|_| {
            let xs = simulated_run(&mut rng, 6, 3, sd);
            let l = layout(&xs, 4, &shape);
            let center = median(&xs);
            let run = RunLevel { sd: 0.04, df: 29.0 };
            let e = Estimate {
                center,
                uncertainty: uncertainty(&l).with_run_level(center, &run),
            };
            (center, e.next_run_interval(0.95))
        })
        .collect();
    let inside = runs
        .windows(2)
        .filter(|w| (w[0].1 .0..=w[0].1 .1).contains(&w[1].0))
        .count() as f64
        / (runs.len() - 1) as f64;
    assert!((0.92..=0.985).contains(&inside), "{inside}");
}

#[test]
fn runs_are_the_replicate_of_a_runs_estimate() {
    let e = runs_estimate(&[9.0, 10.0, 11.0]).unwrap();
    assert_eq!(e.center, 10.0);
    assert_eq!((e.uncertainty.level, e.uncertainty.df), (Level::Run, 2.0));
    assert!((e.uncertainty.se - 1.0 / 3f64.sqrt()).abs() < 1e-12);
    assert_eq!(runs_estimate(&[3.0]).unwrap().uncertainty.df, 0.0);
    assert!(runs_estimate(&[]).is_err() && runs_estimate(&[1.0, f64::NAN]).is_err());
}

#[test]
fn a_point_s_history_holds_as_many_figures_errors_and_ages() {
    let runs = EarlierRun::series(&[0.1, 0.2], &[0.01, 0.02], &[5.0, 9.0]).unwrap();
    assert_eq!(runs[1].age_s, 9.0);
    let e = EarlierRun::series(&[0.1], &[0.01, 0.02], &[5.0]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "history: a point's ln figures, relative errors and ages must be as many, got 1, 2 and 1"
    );
}
