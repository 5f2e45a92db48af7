//! A cache sweep's record: each size's ring record, the split of each point's cost into its
//! direct and indirect part with the refill rate (`cache::split`), and the streaming read
//! beside them.

use super::RingRecord;
use crate::cache::{self, Indirect, Sweep};
use crate::config::Config;
use crate::fields::record;
use crate::stop::{Stop, BLOCK_REPETITIONS};

record! {
    /// Per (size, procs), `[size][procs]`: net(size) − net(0) in µs per switch with its 95 %
    /// interval from paired rounds, the KiB refilled per µs of it, and why a rate is no figure.
    #[derive(Default)]
    pub struct IndirectRecord as "IndirectDict" {
        pub us: Vec<Vec<f64>> = "",
        pub low_us: Vec<Vec<f64>> = "",
        pub high_us: Vec<Vec<f64>> = "",
        /// NaN where `refill_note` says why there is no figure.
        pub refill_kib_per_us: Vec<Vec<f64>> = "nan",
        pub refill_low: Vec<Vec<f64>> = "nan",
        pub refill_high: Vec<Vec<f64>> = "nan",
        pub refill_note: Vec<Vec<&'static str>> = "",
    }

    /// What `cache_sweep` returns: one ring record per size, the cost split, the streaming
    /// read's KiB per µs in each round.
    pub struct CacheRecord as "CacheSweepDict" {
        pub results: Vec<RingRecord> = "[*] opaque alias=RingDict",
        pub indirect: IndirectRecord = "",
        pub stream_kb: usize = "",
        /// KiB per µs of the streaming read, one per round.
        pub stream_kib_per_us: Vec<f64> = "[rounds]",
        pub rounds: usize = "",
        pub line_bytes: usize = "",
    }
}

impl CacheRecord {
    /// The record of `sweep`, measured with `base` in `rounds` rounds, its refills counted in
    /// lines of `line_bytes` and set against the streaming read as `cache::split` says.
    pub fn new(
        base: &Config,
        sweep: &Sweep,
        rounds: usize,
        line_bytes: usize,
        largest_share_kb: u64,
    ) -> Self {
        let (split, rates) = cache::split(sweep, base, line_bytes, largest_share_kb);
        let mut indirect = IndirectRecord::default();
        for row in &split {
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
        }
        // The record says what was made: `rounds` blocks of BLOCK_REPETITIONS.
        let ring = |(&size_kb, points): (&usize, &Vec<_>)| {
            let cfg = Config {
                size_kb,
                stop: Stop::Fixed(rounds * BLOCK_REPETITIONS),
                ..base.clone()
            };
            RingRecord::new(&cfg, points)
        };
        CacheRecord {
            results: sweep.sizes_kb.iter().zip(&sweep.points).map(ring).collect(),
            indirect,
            stream_kb: sweep.stream_kb,
            stream_kib_per_us: rates,
            rounds,
            line_bytes,
        }
    }
}
