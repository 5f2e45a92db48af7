//! A cache sweep's record: each size's ring record, the split of each point's cost into its
//! direct and indirect part with the refill rate (`cache::indirect`), and the streaming read
//! beside them.

use super::RingRecord;
use crate::cache::{self, Indirect, Sweep};
use crate::config::Config;
use crate::stats;
use crate::stop::{Stop, BLOCK_REPETITIONS};
use serde::Serialize;

/// Per (size, procs), `[size][procs]`: net(size) − net(0) in µs per switch with its 95 %
/// interval from paired rounds, the KiB refilled per µs of it, and why a rate is no figure.
#[derive(Debug, Clone, Default, Serialize)]
pub struct IndirectRecord {
    pub us: Vec<Vec<f64>>,
    pub low_us: Vec<Vec<f64>>,
    pub high_us: Vec<Vec<f64>>,
    pub refill_kib_per_us: Vec<Vec<f64>>,
    pub refill_low: Vec<Vec<f64>>,
    pub refill_high: Vec<Vec<f64>>,
    pub refill_note: Vec<Vec<&'static str>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CacheRecord {
    pub results: Vec<RingRecord>,
    pub indirect: IndirectRecord,
    pub stream_kb: usize,
    /// KiB per µs of the streaming read, one per round.
    pub stream_kib_per_us: Vec<f64>,
    pub rounds: usize,
    pub line_bytes: usize,
}

impl CacheRecord {
    /// The record of `sweep`, measured with `base` in `rounds` rounds, its refills counted in
    /// lines of `line_bytes`. A refill is set against the streaming read (which reads from
    /// memory) only where the working set is past `largest_share_kb` (0: none known), the
    /// largest cache the participants share: nearer, a refill from a cache outruns it on
    /// nearly every row, and a note on every row is no note.
    pub fn new(
        base: &Config,
        sweep: &Sweep,
        rounds: usize,
        line_bytes: usize,
        largest_share_kb: u64,
    ) -> Self {
        let stride = base.stride_bytes;
        let streamed = cache::refilled_kb(sweep.stream_kb, stride, line_bytes);
        let rates: Vec<f64> = sweep.stream_us.iter().map(|us| streamed / us).collect();
        let stream = stats::median(&rates);
        let zero = sweep.sizes_kb.iter().position(|&s| s == 0).unwrap_or(0);
        let mut indirect = IndirectRecord::default();
        let mut results = Vec::with_capacity(sweep.sizes_kb.len());
        for (&size_kb, points) in sweep.sizes_kb.iter().zip(&sweep.points) {
            let refilled = cache::refilled_kb(size_kb, stride, line_bytes);
            let from_memory =
                |procs: usize| largest_share_kb > 0 && (procs * size_kb) as u64 > largest_share_kb;
            let row: Vec<Indirect> = points
                .iter()
                .zip(&sweep.points[zero])
                .zip(&base.procs)
                .map(|((p, z), &procs)| {
                    let against = if from_memory(procs) { stream } else { f64::NAN };
                    cache::indirect(p, z, refilled, against)
                })
                .collect();
            let column = |f: fn(&Indirect) -> f64| row.iter().map(f).collect();
            indirect.us.push(column(|i| i.us));
            indirect.low_us.push(column(|i| i.low_us));
            indirect.high_us.push(column(|i| i.high_us));
            indirect
                .refill_kib_per_us
                .push(column(|i| i.refill_kib_per_us));
            indirect.refill_low.push(column(|i| i.refill_low));
            indirect.refill_high.push(column(|i| i.refill_high));
            indirect
                .refill_note
                .push(row.iter().map(|i| i.refill.as_str()).collect());
            // The record says what was made: `rounds` blocks of BLOCK_REPETITIONS.
            let cfg = Config {
                size_kb,
                stop: Stop::Fixed(rounds * BLOCK_REPETITIONS),
                ..base.clone()
            };
            results.push(RingRecord::new(&cfg, points));
        }
        CacheRecord {
            results,
            indirect,
            stream_kb: sweep.stream_kb,
            stream_kib_per_us: rates,
            rounds,
            line_bytes,
        }
    }
}
