//! How much of a switch is the cache: the ring measured at every size of a grid, round-robin,
//! and the cost split as Li, Ding and Shen (ExpCS 2007) split it. The *direct* cost is the
//! switch with nothing to refill (size 0); the *indirect* cost at a size is what the same
//! switch costs more once each participant sums its own array: net(size) − net(0), the time
//! to bring back what the other participants evicted. The *refill bandwidth* is what was
//! brought back per µs of indirect cost, beside the *streaming-read bandwidth* of the same
//! workload over an array far larger than every cache: the physical limit refills approach.
//!
//! Round-robin: every round measures one short ring instance (one block of
//! `BLOCK_REPETITIONS` repetitions) of every size, so drift of the host hits every size alike
//! and the rounds are the unit of every interval. Size 0 is always in the grid: the indirect
//! cost's interval comes from the per-round differences against it (paired, so drift common
//! to a round cancels).

use crate::config::Config;
use crate::error::{Error, Result};
use crate::memory;
use crate::ring::{self, Interrupt, Point};
use crate::stats;
use crate::stop::{Stop, Stopped, BLOCK_REPETITIONS, CONFIDENCE};
use crate::workload::{Shape, Workload};
use std::time::Instant;

/// Rounds of a sweep by default (`config::ROUNDS` is their range).
pub const DEFAULT_ROUNDS: usize = 5;
/// Streaming-read passes timed per round.
pub const STREAM_PASSES: usize = 3;

/// Every size of a sweep, measured.
#[derive(Debug)]
pub struct Sweep {
    pub sizes_kb: Vec<usize>,
    /// `[size][procs]`, each point holding one block per round in round order.
    pub points: Vec<Vec<Point>>,
    /// µs per streaming pass over `stream_kb` KiB, one per round.
    pub stream_us: Vec<f64>,
    pub stream_kb: usize,
}

/// Measures `base` (its `size_kb` ignored) at every size of `sizes_kb` (which must hold 0),
/// `rounds` times round-robin, and times the streaming read of `stream_kb` KiB once per round.
/// Everything that cannot fit in memory is refused before the first fork. `progress(done,
/// rounds)` is told after each round; an error from it stops the sweep.
pub fn sweep(
    base: &Config,
    sizes_kb: &[usize],
    rounds: usize,
    stream_kb: usize,
    interrupt: Interrupt,
    progress: &mut dyn FnMut(usize, usize) -> Result<()>,
) -> Result<Sweep> {
    let configs = check(base, sizes_kb, stream_kb)?;
    let mut instances: Vec<Vec<Vec<Point>>> = vec![Vec::new(); configs.len()];
    let stream = Workload::new(Shape::new(stream_kb, base.stride_bytes)?)?;
    let mut stream_us = Vec::with_capacity(rounds);
    for round in 0..rounds {
        for (cfg, got) in configs.iter().zip(&mut instances) {
            if interrupt() {
                return Err(Error::Interrupted);
            }
            got.push(ring::run(cfg, interrupt)?);
        }
        stream_us.push(stream_pass_us(&stream, base.min_time));
        progress(round + 1, rounds)?;
    }
    let points = instances
        .into_iter()
        .map(|rounds_of_size| by_procs(rounds_of_size, base.procs.len()))
        .collect();
    Ok(Sweep {
        sizes_kb: sizes_kb.to_vec(),
        points,
        stream_us,
        stream_kb,
    })
}

/// One `Config` per size (the base as the request validated it), after checking the grid
/// and the memory it needs; the rounds are as the request parsed them.
fn check(base: &Config, sizes_kb: &[usize], stream_kb: usize) -> Result<Vec<Config>> {
    if !sizes_kb.contains(&0) {
        return Err(Error::invalid(
            "sizes_kb",
            "must include 0: the direct cost every indirect cost is measured against",
        ));
    }
    let configs = sizes_kb
        .iter()
        .map(|&size_kb| Config {
            size_kb,
            stop: Stop::Fixed(BLOCK_REPETITIONS),
            observer: base.observer.without_evidence(),
            ..base.clone()
        })
        .collect();
    // One size's ring at a time, beside the streaming array.
    let largest = sizes_kb.iter().max().copied().unwrap_or(0);
    let procs = base.procs.iter().max().copied().unwrap_or(0);
    let (ring, rings) = ring::rings_need(base.engine, procs, base.parallel, largest);
    let need = ring.saturating_add(stream_kb as u64 * 1024);
    memory::check(
        need,
        &format!("a size sweep up to {largest} KiB: {rings} and a {stream_kb} KiB streaming array"),
    )?;
    ring::tasks::check_rings(base.engine, procs, base.parallel)?;
    Ok(configs)
}

/// One size's rounds (`[round][procs]`) as one point per participant count.
fn by_procs(rounds: Vec<Vec<Point>>, procs: usize) -> Vec<Point> {
    let mut per_procs: Vec<Vec<Point>> = (0..procs).map(|_| Vec::new()).collect();
    for round in rounds {
        for (k, p) in round.into_iter().enumerate() {
            per_procs[k].push(p);
        }
    }
    per_procs
        .into_iter()
        .map(|instances| Point::merge(instances, Stopped::Repetitions))
        .collect()
}

/// The median µs of `STREAM_PASSES` timed passes, each after enough untimed ones to last
/// `min_time` in all (pages and TLB warm, the caches full of the array's own far end).
pub fn stream_pass_us(work: &Workload, min_time: f64) -> f64 {
    let mut sink = 0u64;
    let t = Instant::now();
    while t.elapsed().as_secs_f64() < min_time {
        sink = sink.wrapping_add(work.sum());
    }
    let mut passes = [0.0; STREAM_PASSES];
    for pass in &mut passes {
        let t = Instant::now();
        sink = sink.wrapping_add(work.sum());
        *pass = t.elapsed().as_secs_f64() * 1e6;
    }
    std::hint::black_box(sink);
    stats::median(&passes)
}

/// KiB a pass brings into the cache: every line the array spans when the stride is at most a
/// line, one line per load beyond that.
pub fn refilled_kb(size_kb: usize, stride_bytes: usize, line_bytes: usize) -> f64 {
    let line = line_bytes.max(1) as f64;
    size_kb as f64 * (line / stride_bytes.max(1) as f64).min(1.0)
}

/// What a point's refill figure is: a bandwidth, or why there is none. The one home of the
/// rule that a rate is printed as a figure only where its cost is resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refill {
    /// The indirect cost's interval lies above zero: the rate is a figure.
    Measured,
    /// The indirect cost's interval reaches zero (or lies below it): its rate would be a
    /// number divided by noise. NaN.
    BelowResolution,
    /// Size 0: nothing is refilled. NaN.
    Nothing,
    /// A figure, but faster than the streaming read of the same run (`ABOVE_STREAM` says
    /// how that happens).
    AboveStream,
}

impl Refill {
    /// The words a table prints in place of (or beside) the figure; "" for a plain figure.
    pub fn as_str(self) -> &'static str {
        match self {
            Refill::Measured => "",
            Refill::BelowResolution => "below resolution",
            Refill::Nothing => "nothing to refill",
            Refill::AboveStream => "above streaming read",
        }
    }
}

/// Why a refill can read faster than the streaming read, which comes from memory.
pub const ABOVE_STREAM: &str = "faster than the streaming read of the same run, which reads \
     from memory, though the working set is past the largest cache share: the indirect cost \
     undercounts the refill (the subtracted overhead, the same loop alone and hot, misses too \
     once one participant's array exceeds a cache), or part of it still came from a cache. \
     Nearer than that share a refill from a cache is faster as a rule, and is not marked";

/// Every point's indirect cost against the same procs at size 0, `[size][procs]`, and the
/// streaming read's KiB per µs in each round, for `sweep` measured with `base`, refills
/// counted in lines of `line_bytes`. A refill is set against the streaming read's median
/// rate (it reads from memory) only where the working set is past `largest_share_kb` (0:
/// none known), the largest cache the participants share: nearer, a refill from a cache
/// outruns it on nearly every row, and a note on every row is no note.
pub fn split(
    sweep: &Sweep,
    base: &Config,
    line_bytes: usize,
    largest_share_kb: u64,
) -> (Vec<Vec<Indirect>>, Vec<f64>) {
    let stride = base.stride_bytes;
    let streamed = refilled_kb(sweep.stream_kb, stride, line_bytes);
    let rates: Vec<f64> = sweep.stream_us.iter().map(|us| streamed / us).collect();
    let stream = stats::median(&rates);
    let zero = sweep.sizes_kb.iter().position(|&s| s == 0).unwrap_or(0);
    let from_memory = |procs: usize, size_kb: usize| {
        largest_share_kb > 0 && (procs * size_kb) as u64 > largest_share_kb
    };
    let rows = sweep
        .sizes_kb
        .iter()
        .zip(&sweep.points)
        .map(|(&size_kb, points)| {
            let refilled = refilled_kb(size_kb, stride, line_bytes);
            let at_zero = points.iter().zip(&sweep.points[zero]).zip(&base.procs);
            at_zero
                .map(|((p, z), &procs)| {
                    let against = if from_memory(procs, size_kb) {
                        stream
                    } else {
                        f64::NAN
                    };
                    indirect(p, z, refilled, against)
                })
                .collect()
        });
    (rows.collect(), rates)
}

/// The indirect cost of one (size, procs) point against the same procs at size 0, both
/// measured in the same rounds, and the refill bandwidth it implies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Indirect {
    /// net(size) − net(0) of the two points' medians, µs per switch.
    pub us: f64,
    /// 95 % interval: ± t(0.975, rounds − 1) × sd of the per-round differences / √rounds.
    pub low_us: f64,
    pub high_us: f64,
    /// KiB refilled per µs of indirect cost (`refilled_kb` / `us`), with the interval that
    /// `low_us`..`high_us` implies; all three NaN unless `refill` is a figure.
    pub refill_kib_per_us: f64,
    pub refill_low: f64,
    pub refill_high: f64,
    pub refill: Refill,
}

/// The indirect cost of `at_size` over `at_zero`; `refilled_kb` as `refilled_kb` computes it,
/// `stream_kib_per_us` the streaming read's rate in the same run (NaN: not measured).
pub fn indirect(
    at_size: &Point,
    at_zero: &Point,
    refilled_kb: f64,
    stream_kib_per_us: f64,
) -> Indirect {
    let (a, z) = (block_medians(at_size), block_medians(at_zero));
    let diffs: Vec<f64> = a.iter().zip(&z).map(|(x, y)| x - y).collect();
    let us = stats::median(&net_us(at_size)) - stats::median(&net_us(at_zero));
    let n = diffs.len();
    let half = if n >= 2 {
        let mean = diffs.iter().sum::<f64>() / n as f64;
        let var = diffs.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        stats::t_quantile(CONFIDENCE, (n - 1) as f64) * var.sqrt() / (n as f64).sqrt()
    } else {
        f64::INFINITY
    };
    let (low_us, high_us) = (us - half, us + half);
    let refill = if refilled_kb <= 0.0 {
        Refill::Nothing
    } else if !(low_us > 0.0 && high_us.is_finite()) {
        Refill::BelowResolution
    } else if refilled_kb / us > stream_kib_per_us {
        Refill::AboveStream
    } else {
        Refill::Measured
    };
    let (rate, low, high) = match refill {
        Refill::Nothing | Refill::BelowResolution => (f64::NAN, f64::NAN, f64::NAN),
        // A larger cost means a lower bandwidth.
        _ => (
            refilled_kb / us,
            refilled_kb / high_us,
            refilled_kb / low_us,
        ),
    };
    Indirect {
        us,
        low_us,
        high_us,
        refill_kib_per_us: rate,
        refill_low: low,
        refill_high: high,
        refill,
    }
}

/// Net µs per switch of each repetition (mean over parallel rings).
fn net_us(p: &Point) -> Vec<f64> {
    p.net_ns().into_iter().map(|ns| ns / 1000.0).collect()
}

/// Median of each ring instance's repetitions: one per round.
fn block_medians(p: &Point) -> Vec<f64> {
    let net = net_us(p);
    let mut at = 0;
    p.instance_blocks
        .iter()
        .map(|&blocks| {
            let n = blocks * p.block.max(1);
            let m = stats::median(&net[at..(at + n).min(net.len())]);
            at += n;
            m
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::Placement;

    fn quiet(_: usize, _: usize) -> Result<()> {
        Ok(())
    }

    fn quick(procs: Vec<usize>) -> Config {
        Config {
            min_time: 0.002,
            placement: Placement::Single(None),
            ..Config::lat_ctx(procs)
        }
    }

    #[test]
    fn a_grid_without_zero_is_refused_before_forking() {
        let e = sweep(&quick(vec![2]), &[4, 16], 3, 64, &mut || false, &mut quiet).unwrap_err();
        assert!(e.to_string().contains("sizes_kb"), "{e}");
        let e = sweep(&quick(vec![2]), &[0, 8], 2, 64, &mut || false, &mut quiet);
        assert!(e.is_ok());
    }

    #[test]
    fn a_grid_that_cannot_fit_in_memory_fails_before_forking() {
        let e = sweep(
            &quick(vec![2, 100_000]),
            &[0, 1 << 20],
            2,
            64,
            &mut || false,
            &mut quiet,
        )
        .unwrap_err();
        assert!(matches!(e, Error::Memory { .. }), "{e}");
    }

    #[test]
    fn every_size_and_count_gets_one_block_per_round() {
        let mut told = Vec::new();
        let mut heard = |done: usize, of: usize| {
            told.push((done, of));
            Ok(())
        };
        let s = sweep(
            &quick(vec![2, 3]),
            &[0, 8, 64],
            3,
            256,
            &mut || false,
            &mut heard,
        )
        .unwrap();
        assert_eq!(told, vec![(1, 3), (2, 3), (3, 3)]);
        assert_eq!(s.points.len(), 3);
        assert_eq!(s.stream_us.len(), 3);
        assert!(s.stream_us.iter().all(|&us| us > 0.0));
        for (size, points) in s.sizes_kb.iter().zip(&s.points) {
            assert_eq!(points.len(), 2);
            for p in points {
                assert_eq!(p.raw_ns.len(), 3 * BLOCK_REPETITIONS);
                assert_eq!(p.instance_blocks.len(), 3);
                assert!(p.work_verified);
                assert_eq!(p.resident_kb, Some(*size as u64));
            }
        }
        let i = indirect(&s.points[2][0], &s.points[0][0], 64.0, f64::NAN);
        assert!(i.low_us <= i.us && i.us <= i.high_us, "{i:?}");
    }

    #[test]
    fn the_indirect_interval_comes_from_paired_rounds() {
        // Two rounds in which both sizes moved together by 1 µs: the difference is exact.
        let point = |net: &[f64]| point_of(net, 2);
        let zero = point(&[1.0, 1.0, 2.0, 2.0]);
        let size = point(&[4.0, 4.0, 5.0, 5.0]);
        let i = indirect(&size, &zero, 300.0, 1000.0);
        assert_eq!((i.us, i.low_us, i.high_us), (3.0, 3.0, 3.0));
        assert_eq!(i.refill_kib_per_us, 100.0);
        assert_eq!(i.refill, Refill::Measured);
        let none = indirect(&zero, &zero, 300.0, 1000.0);
        assert!(none.refill_kib_per_us.is_nan());
        assert_eq!(none.refill, Refill::BelowResolution);
    }

    /// A point of one repetition per block, in `blocks` ring instances of equal size.
    fn point_of(net: &[f64], blocks: usize) -> Point {
        Point {
            procs: 2,
            raw_ns: net.iter().map(|&us| vec![us * 1000.0 + 500.0]).collect(),
            overhead_ns: net.iter().map(|_| vec![500.0]).collect(),
            raw_cycles: vec![],
            overhead_cycles: vec![],
            trips: vec![1],
            overhead_rounds: vec![1],
            cpus: vec![],
            work_verified: true,
            accounting: Err("not read in this test".into()),
            counters: Default::default(),
            observed_hops: 0,
            counted_ns: 0.0,
            hops: None,
            rusage: Default::default(),
            phase_s: Default::default(),
            stopped: Stopped::Repetitions,
            block: net.len() / blocks,
            instance_blocks: vec![1; blocks],
            resident_kb: None,
            one_cpu: true,
            interference: None,
            sched: crate::sched::Sched::default(),
            throttled: None,
        }
    }

    #[test]
    fn a_rate_whose_cost_interval_reaches_zero_is_no_figure() {
        // A median difference of 0.5 µs whose rounds disagree in sign: the interval reaches 0.
        let zero = point_of(&[1.0, 1.0, 1.0, 1.0], 4);
        let size = point_of(&[0.2, 1.5, 1.6, 3.0], 4);
        let i = indirect(&size, &zero, 300.0, 1e9);
        assert!(i.us > 0.0 && i.low_us <= 0.0, "{i:?}");
        assert_eq!(i.refill, Refill::BelowResolution);
        assert!(i.refill_kib_per_us.is_nan() && i.refill_low.is_nan() && i.refill_high.is_nan());
        let nothing = indirect(&zero, &zero, 0.0, 1e9);
        assert_eq!(nothing.refill, Refill::Nothing);
        assert!(nothing.refill_kib_per_us.is_nan());
    }

    #[test]
    fn a_rate_above_the_streaming_read_is_flagged_not_dropped() {
        let zero = point_of(&[1.0, 1.0], 2);
        let size = point_of(&[2.0, 2.0], 2);
        // 300 KiB in 1 µs of indirect cost: 300 KiB/µs, against a streaming read of 20.
        let i = indirect(&size, &zero, 300.0, 20.0);
        assert_eq!(i.refill, Refill::AboveStream);
        assert_eq!(i.refill_kib_per_us, 300.0);
        assert_eq!(
            indirect(&size, &zero, 300.0, 400.0).refill,
            Refill::Measured
        );
    }

    #[test]
    fn a_refill_meets_the_streaming_read_only_past_the_largest_share() {
        // 64 KiB refilled in 1 µs against a streaming read of 20 KiB per µs.
        let sweep = Sweep {
            sizes_kb: vec![0, 64],
            points: vec![
                vec![point_of(&[1.0, 1.0], 2)],
                vec![point_of(&[2.0, 2.0], 2)],
            ],
            stream_us: vec![1.0, 1.0],
            stream_kb: 20,
        };
        let base = quick(vec![2]);
        let note = |largest_share_kb| {
            let (split, rates) = split(&sweep, &base, 64, largest_share_kb);
            assert_eq!(rates, vec![20.0, 20.0]);
            assert_eq!(split[0][0].refill, Refill::Nothing);
            split[1][0].refill
        };
        assert_eq!(note(100), Refill::AboveStream, "2 × 64 KiB: past the share");
        assert_eq!(note(128), Refill::Measured, "within the share");
        assert_eq!(note(0), Refill::Measured, "no share known");
    }

    #[test]
    fn refill_counts_lines_not_words_beyond_a_line() {
        assert_eq!(refilled_kb(1024, 8, 64), 1024.0);
        assert_eq!(refilled_kb(1024, 64, 64), 1024.0);
        assert_eq!(refilled_kb(1024, 256, 64), 256.0);
    }
}
