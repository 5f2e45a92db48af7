//! ctxbench: context-switch benchmarks. lmbench's `lat_ctx` token ring rebuilt, usable from
//! Rust directly or from Python through the `python` feature.
//!
//! The measurement is engine (who switches) × transport (how the token travels) × placement
//! (where participants run), around one workload and one measured loop.

pub mod ab;
pub mod barrier;
pub mod cache;
pub mod cgroups;
pub mod changes;
pub mod clock;
pub mod config;
pub mod counters;
pub mod engine;
pub mod error;
pub mod hops;
pub mod host;
pub mod interference;
pub mod judge;
pub mod judge_groups;
pub mod limit;
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
pub mod sequential;
pub mod stats;
pub mod stop;
mod sys;
pub mod tasks;
pub mod token;
pub mod topology;
pub mod transport;
pub mod verdict;
pub mod watchdog;
pub mod wire;
pub mod workload;

#[cfg(feature = "python")]
mod python;

pub use config::{Config, Plan};
pub use error::{Error, Result};
pub use result::{pingpong, summarize, PingPong, RingSummary};
pub use ring::{pingpong_config, run, Point};
