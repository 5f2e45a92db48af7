//! ctxbench: context-switch benchmarks. lmbench's `lat_ctx` token ring rebuilt, usable from
//! Rust directly or from Python through the `python` feature.
//!
//! The measurement is engine (who switches) × transport (how the token travels) × placement
//! (where participants run), around one workload and one measured loop.

/// Each type serialized as its word (its `as_str`): the word's one home, for the records
/// and the binding alike.
macro_rules! serialize_as_word {
    ($($t:ty),+) => {$(
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    )+};
}

pub mod ab;
pub mod cache;
pub mod cgroups;
pub mod changes;
pub mod clock;
pub mod config;
pub mod counters;
pub mod engine;
pub mod error;
pub mod fields;
pub mod hops;
pub mod host;
pub mod interference;
pub mod judge;
pub mod matrix;
pub mod measure;
pub mod memory;
pub mod observer;
pub mod placement;
pub mod record;
pub mod request;
pub mod result;
pub mod ring;
pub mod sched;
pub mod stats;
pub mod stop;
mod sys;
pub mod token;
pub mod topology;
pub mod transport;
pub mod verdict;
pub mod wire;
pub mod workload;

#[cfg(feature = "python")]
mod python;

pub use config::{Config, Plan};
pub use error::{Error, Result};
pub use result::{pingpong, summarize, PingPong, RingFigures};
pub use ring::{pingpong_config, run, Point};
