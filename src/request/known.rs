//! What a front door may show of the core besides its parameters, declared once and exported
//! as they are (`_core.ENGINES`, `_core.PRESETS`, `_core.MIN_RUNS` ...): the names a choice
//! takes, the presets' figures, the limits and defaults that help texts and results cite.
//! Each value is read from its home; the binding only converts.

use super::params::Tuple;
use super::{Door, Preset};
use crate::engine::Engine;
use crate::{ab, cache, config, host, interference, matrix, placement, stats};
use crate::{judge, stop, sys};
use crate::{topology, verdict};
use serde::{Serialize, Serializer};

/// A value as Python receives it: an int, a float, a text, a tuple of names, or a dict by
/// name in its order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Known {
    Int(i64),
    Real(f64),
    Text(&'static str),
    #[serde(serialize_with = "tuple")]
    Names(Vec<&'static str>),
    #[serde(serialize_with = "by_name")]
    ByName(Vec<(&'static str, Known)>),
}

fn tuple<S: Serializer>(names: &[&str], s: S) -> std::result::Result<S::Ok, S::Error> {
    Tuple(names).serialize(s)
}

fn by_name<S: Serializer>(entries: &[(&str, Known)], s: S) -> std::result::Result<S::Ok, S::Error> {
    s.collect_map(entries.iter().map(|(name, value)| (name, value)))
}

fn int(n: usize) -> Known {
    Known::Int(n as i64)
}

/// Every exported value by its name, in the stub's order.
pub fn known() -> Vec<(&'static str, Known)> {
    use Known::{Names, Real};
    let presets = Preset::ALL.map(|p| {
        let figures = vec![
            ("precision", Real(p.precision())),
            ("max_time", Real(p.max_time())),
        ];
        (p.name(), Known::ByName(figures))
    });
    let transports = Engine::ALL.iter().map(|e| {
        (
            e.name(),
            Names(e.transports().iter().map(|t| t.name()).collect()),
        )
    });
    vec![
        ("DOORS", Names(Door::ALL.iter().map(|d| d.name()).collect())),
        ("PRESETS", Known::ByName(presets.to_vec())),
        ("MIN_RUNS", int(stats::MIN_RUNS)),
        ("MIN_SERIES", int(judge::series::MIN_SERIES)),
        ("SERIES_WINDOW", int(judge::series::SERIES_WINDOW)),
        ("MIN_GROUP_RUNS", int(judge::groups::MIN_GROUP_RUNS)),
        ("FAMILY_ALPHA", Real(judge::FAMILY_ALPHA)),
        ("NOISY_CV", Real(verdict::NOISY_HALF_WIDTH)),
        ("FIXED_MIN_TIME", Real(stop::FIXED_MIN_TIME)),
        ("PRECISION_MIN_TIME", Real(stop::PRECISION_MIN_TIME)),
        ("DEFAULT_ROUNDS", int(cache::DEFAULT_ROUNDS)),
        ("REFILL_ABOVE_STREAM", Known::Text(cache::ABOVE_STREAM)),
        ("DEFAULT_TIMEOUT", Real(config::DEFAULT_TIMEOUT)),
        ("DEFAULT_PRECISION", Real(stop::DEFAULT_PRECISION)),
        ("ASSUMED_RUN_SD", Real(stats::ASSUMED_RUN_LEVEL.sd)),
        ("LOADED_RUNNABLE", Real(verdict::LOADED_RUNNABLE)),
        ("DEFAULT_MAX_TIME", Real(stop::DEFAULT_MAX_TIME)),
        (
            "DEFAULT_MAX_REPETITIONS",
            int(stop::DEFAULT_MAX_REPETITIONS),
        ),
        ("CONFIDENCE", Real(stop::CONFIDENCE)),
        ("DEFAULT_POWER", Real(verdict::DEFAULT_POWER)),
        ("BLOCK_REPETITIONS", int(stop::BLOCK_REPETITIONS)),
        ("MAX_PROCS", int(config::MAX_PROCS)),
        ("MAX_POINTS", int(config::MAX_POINTS)),
        ("MAX_CPUS", int(sys::MAX_CPUS)),
        ("ENGINES", Names(super::Names::Engines.names())),
        ("TRANSPORTS", Known::ByName(transports.collect())),
        ("PLACEMENTS", Names(placement::policies().collect())),
        ("COUNTERS", Names(super::Names::Counters.names())),
        ("POLICIES", Names(super::Names::Policies.names())),
        ("INTERFERENCE_KEYS", Names(interference::keys())),
        ("CHANGES", Names(verdict::Change::NAMES.to_vec())),
        ("AB_STOPS", Names(ab::Stopped::NAMES.to_vec())),
        (
            "RELATIONS",
            Names(
                topology::Relation::ALL
                    .map(topology::Relation::name)
                    .to_vec(),
            ),
        ),
        ("MATRIX_PER_CLASS", int(matrix::DEFAULT_PER_CLASS)),
        ("MATRIX_MIN_PER_CLASS", int(host::matrix::MIN_PER_CLASS)),
        ("TIME_BUDGET_S", Real(host::TIME_BUDGET_S)),
        ("LONG_RUN_S", Real(host::LONG_RUN_S)),
    ]
}
