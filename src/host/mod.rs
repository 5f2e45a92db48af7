//! The host this process plans for: its description, the sysfs tree under `sysfs_root()`
//! (`/sys`, or the tree `CTXBENCH_SYSFS` names: another machine's, to see what its defaults
//! would be), and every default derived from it, each bounded by the core's own limits and by
//! what this machine can give a default (`memory_budget`, `TIME_BUDGET_S`). The defaults of
//! a cache sweep are `cache`'s, the matrix's cells `matrix`'s.

pub mod cache;
pub mod matrix;
pub mod restrictions;
pub mod time;

use crate::error::Result;
use crate::memory;
use crate::topology::{self, Topology};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The environment variable naming the sysfs root every host-derived default reads.
pub const SYSFS_ENV: &str = "CTXBENCH_SYSFS";
/// The live machine's sysfs.
pub const LIVE_SYSFS: &str = "/sys";
/// The share of the memory this process can still get that a default may plan to hold: the
/// rest stays the machine's (the caller, its results, everything else running).
pub const MEMORY_SHARE: f64 = 0.5;
/// Seconds a default (a cache sweep's grid, the matrix's cells) is planned to take at most.
pub const TIME_BUDGET_S: f64 = 120.0;
/// A run planned to take longer than this says so, with its plan, as it starts.
pub const LONG_RUN_S: f64 = 60.0;

/// `$CTXBENCH_SYSFS` where it is set and not empty, else `/sys`.
pub fn sysfs_root() -> PathBuf {
    root_of(std::env::var_os(SYSFS_ENV))
}

/// The root a value of `CTXBENCH_SYSFS` names.
fn root_of(var: Option<OsString>) -> PathBuf {
    match var {
        Some(root) if !root.is_empty() => PathBuf::from(root),
        _ => PathBuf::from(LIVE_SYSFS),
    }
}

/// The host as `sysfs_root()` describes it.
pub fn topology() -> Result<Topology> {
    topology::read(&sysfs_root())
}

/// The host the sysfs tree `sysfs` describes (None: `sysfs_root()`'s).
pub fn topology_of(sysfs: Option<&Path>) -> Result<Topology> {
    sysfs.map_or_else(topology, topology::read)
}

/// A path as a record says it: its text, any byte that is no UTF-8 replaced.
pub fn path_text<S: serde::Serializer>(path: &Path, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&path.to_string_lossy())
}

/// Bytes a default may plan to hold at once: `MEMORY_SHARE` of the tightest bound on this
/// process (`memory::headroom`: MemAvailable and the memory cgroups; `RLIMIT_AS`), with
/// where that bound comes from; `None` where no bound can be read. Always this machine's,
/// whatever host is described: it is here that a sweep runs.
pub fn memory_budget() -> Option<(u64, String)> {
    [memory::headroom(), memory::address_space_headroom()]
        .into_iter()
        .flatten()
        .min_by_key(|room| room.bytes)
        .map(|room| budget_of(&room))
}

fn budget_of(room: &memory::Headroom) -> (u64, String) {
    let bytes = (room.bytes as f64 * MEMORY_SHARE) as u64;
    let share = MEMORY_SHARE * 100.0;
    (bytes, format!("{share:.0} % of {}", room.source))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctxbench_sysfs_names_the_root_and_empty_or_unset_is_the_live_one() {
        assert_eq!(
            root_of(Some("/tmp/intel".into())),
            PathBuf::from("/tmp/intel")
        );
        assert_eq!(root_of(Some("".into())), PathBuf::from("/sys"));
        assert_eq!(root_of(None), PathBuf::from("/sys"));
    }

    #[test]
    fn a_default_plans_to_hold_half_of_what_this_process_can_get() {
        let room = memory::Headroom {
            bytes: 6 << 30,
            source: "MemAvailable in /proc/meminfo".into(),
        };
        let (bytes, source) = budget_of(&room);
        assert_eq!(bytes, 3 << 30);
        assert_eq!(source, "50 % of MemAvailable in /proc/meminfo");
        assert!(
            memory_budget().is_some_and(|(b, _)| b > 0),
            "readable on Linux"
        );
    }
}
