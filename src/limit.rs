//! `Limit`: the allowed range of one parameter and the error that names it, the kind every
//! range of the core is (the ranges themselves live with what they limit: `config`, `sched`).

use crate::error::{Error, Result};

/// The allowed range of one parameter, and the error that names it: `lo..=hi`, or above `lo`
/// up to `hi` where `lo` itself means nothing (a duration of 0 s). Every range of a run is one
/// of the `Limit`s below.
#[derive(Debug, Clone, Copy)]
pub struct Limit<T> {
    pub param: &'static str,
    pub lo: T,
    pub hi: T,
    pub lo_excluded: bool,
    /// What the numbers are, for the message: " seconds", "".
    pub unit: &'static str,
}

impl<T: Copy> Limit<T> {
    /// `lo..=hi`.
    pub const fn between(param: &'static str, lo: T, hi: T) -> Self {
        Limit {
            param,
            lo,
            hi,
            lo_excluded: false,
            unit: "",
        }
    }

    /// Above `lo`, up to `hi`.
    pub const fn above(param: &'static str, lo: T, hi: T) -> Self {
        Limit {
            lo_excluded: true,
            ..Self::between(param, lo, hi)
        }
    }

    pub const fn in_unit(self, unit: &'static str) -> Self {
        Limit { unit, ..self }
    }
}

impl<T: PartialOrd + Copy + std::fmt::Display> Limit<T> {
    /// `value` if it lies in the range (NaN never does), else an error naming the parameter
    /// and the range.
    pub fn check(&self, value: T) -> Result<T> {
        let above_lo = if self.lo_excluded {
            value > self.lo
        } else {
            value >= self.lo
        };
        if above_lo && value <= self.hi {
            Ok(value)
        } else {
            Err(self.outside(value))
        }
    }

    pub fn outside(&self, value: impl std::fmt::Display) -> Error {
        let (lo, hi, unit) = (self.lo, self.hi, self.unit);
        let range = if self.lo_excluded {
            format!("> {lo} and <= {hi}{unit}")
        } else {
            format!("between {lo} and {hi}{unit}")
        };
        Error::invalid(self.param, format!("must be {range}, got {value}"))
    }
}

impl Limit<u64> {
    /// The same for a signed count as a caller typed it (a negative one is outside too).
    pub fn count(&self, value: i64) -> Result<usize> {
        match u64::try_from(value) {
            Ok(v) => self.check(v).map(|v| v as usize),
            Err(_) => Err(self.outside(value)),
        }
    }
}
