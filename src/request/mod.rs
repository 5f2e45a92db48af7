//! What a caller asks of a measurement — a ring, a ping-pong, the CPU matrix, a cache sweep,
//! an A/B pair — as values of the parameters `params::PARAMS` declares, checked as they are
//! given; `resolve` turns a request into what the core runs, with every default and every
//! mode decision made there, once. Front doors (the Python binding, and through it the API
//! and the CLI) only convert their arguments into a `Request` and its result back.

pub mod params;
mod resolve;

pub use params::{Door, Fallback, Kind, Names, Param, PARAMS};
pub use resolve::{AbRequest, CacheRequest};

use crate::error::{Error, Result};
use crate::stats::EarlierRun;

/// A value a caller gave, before its parameter's kind is applied.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    None,
    Switch(bool),
    Int(i64),
    Real(f64),
    Name(String),
    Ints(Vec<i64>),
    /// Earlier runs of each point, None where none are known.
    Runs(Vec<Option<Vec<EarlierRun>>>),
    /// Named numbers, in the order given.
    Pairs(Vec<(String, f64)>),
}

/// How long a point may measure and how precise it must be, by name, the same for every
/// measurement (pyperf's `--fast` and `--rigorous`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// A quick look: ±5 %, 0.1 s per point.
    Fast,
    /// ±2 %, 0.2 s per point.
    Default,
    /// ±1 %, 2 s per point: for figures to publish, on a quiet machine.
    Rigorous,
}

impl Preset {
    pub const ALL: [Preset; 3] = [Preset::Fast, Preset::Default, Preset::Rigorous];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Fast => "fast",
            Preset::Default => "default",
            Preset::Rigorous => "rigorous",
        }
    }

    /// The relative half-width a point's interval must reach.
    pub fn precision(self) -> f64 {
        match self {
            Preset::Fast => 0.05,
            Preset::Default => crate::stop::DEFAULT_PRECISION,
            Preset::Rigorous => 0.01,
        }
    }

    /// Seconds of measuring per point at most.
    pub fn max_time(self) -> f64 {
        match self {
            Preset::Fast => 0.1,
            Preset::Default => crate::stop::DEFAULT_MAX_TIME,
            Preset::Rigorous => 2.0,
        }
    }

    fn parse(name: &str) -> Self {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .expect("checked against the table's names")
    }
}

/// The values given for one measurement, each checked against its parameter.
#[derive(Debug, Clone)]
pub struct Request {
    door: Door,
    given: Vec<(&'static Param, Value)>,
}

impl Request {
    pub fn new(door: Door) -> Self {
        Request {
            door,
            given: Vec::new(),
        }
    }

    pub fn door(&self) -> Door {
        self.door
    }

    /// Gives `name` the value `value`: a `TypeError` where this measurement takes no such
    /// parameter, a `ValueError` naming it and its range where the value is not in it.
    pub fn set(&mut self, name: &str, value: Value) -> Result<&mut Self> {
        let door = self.door.name();
        let param = params::find(self.door, name).ok_or_else(|| {
            Error::unexpected(format!(
                "{door}() got an unexpected keyword argument {name:?}"
            ))
        })?;
        check(param, &value)?;
        self.given.retain(|(p, _)| p.name != name);
        self.given.push((param, value));
        Ok(self)
    }

    /// The value of `name`: as given, else its default (`Value::None` where that is derived
    /// or none).
    fn value(&self, name: &str) -> Value {
        if let Some((_, v)) = self.given.iter().find(|(p, _)| p.name == name) {
            return v.clone();
        }
        let param = params::find(self.door, name)
            .unwrap_or_else(|| panic!("{} takes no parameter {name}", self.door.name()));
        match param.default {
            Fallback::Int(i) => Value::Int(i),
            Fallback::Real(x) => Value::Real(x),
            Fallback::Switch(b) => Value::Switch(b),
            Fallback::Name(n) => Value::Name(n.into()),
            Fallback::None | Fallback::Derived(_) => Value::None,
        }
    }

    /// A count given or defaulted by the table.
    fn count(&self, name: &str) -> usize {
        self.maybe_count(name)
            .unwrap_or_else(|| panic!("the table gives {name} no default"))
    }

    fn maybe_count(&self, name: &str) -> Option<usize> {
        match self.value(name) {
            Value::Int(i) => Some(i as usize),
            _ => None,
        }
    }

    /// A number given or defaulted by the table.
    fn real(&self, name: &str) -> f64 {
        self.maybe_real(name)
            .unwrap_or_else(|| panic!("the table gives {name} no default"))
    }

    fn maybe_real(&self, name: &str) -> Option<f64> {
        match self.value(name) {
            Value::Real(x) => Some(x),
            Value::Int(i) => Some(i as f64),
            _ => None,
        }
    }

    fn switch(&self, name: &str) -> bool {
        matches!(self.value(name), Value::Switch(true))
    }

    fn name(&self, name: &str) -> Option<String> {
        match self.value(name) {
            Value::Name(n) => Some(n),
            _ => None,
        }
    }

    fn ints(&self, name: &str) -> Option<Vec<i64>> {
        match self.value(name) {
            Value::Ints(v) => Some(v),
            Value::Int(i) => Some(vec![i]),
            _ => None,
        }
    }

    fn pairs(&self, name: &str) -> Option<Vec<(String, f64)>> {
        match self.value(name) {
            Value::Pairs(p) => Some(p),
            _ => None,
        }
    }

    fn runs(&self, name: &str) -> Vec<Option<Vec<EarlierRun>>> {
        match self.value(name) {
            Value::Runs(v) => v,
            _ => Vec::new(),
        }
    }

    /// The preset whose precision and time cap apply where the caller named none.
    fn preset(&self) -> Preset {
        Preset::parse(&self.name("preset").expect("the table defaults the preset"))
    }
}

/// `value` against `param`'s kind and range.
fn check(param: &Param, value: &Value) -> Result<()> {
    let name = param.name;
    let wrong = || {
        Error::unexpected(format!(
            "{name}: expected {}, got {}",
            expected(param.kind),
            describe(value)
        ))
    };
    match (param.kind, value) {
        (kind, Value::None) if optional(kind) => Ok(()),
        (Kind::Counts, Value::Int(i)) => config::PROCS.count(*i).map(drop),
        (Kind::Counts, Value::Ints(v)) => counts(v),
        (Kind::Count(l) | Kind::OptCount(l), Value::Int(i)) => l.count(*i).map(drop),
        (Kind::OptInt(l), Value::Int(i)) => l.check(*i).map(drop),
        (Kind::Stride, Value::Int(i)) => crate::workload::check_stride(*i).map(drop),
        (Kind::Real(l) | Kind::OptReal(l), Value::Real(x)) => l.check(*x).map(drop),
        (Kind::Real(l) | Kind::OptReal(l), Value::Int(i)) => l.check(*i as f64).map(drop),
        (Kind::Switch, Value::Switch(_)) => Ok(()),
        (Kind::Choice(names) | Kind::OptChoice(names), Value::Name(n)) => one_of(name, names, n),
        (Kind::Placement, Value::Name(_) | Value::Ints(_)) => Ok(()),
        (Kind::Cpu, Value::Int(_)) | (Kind::Cpus, Value::Ints(_)) => Ok(()),
        (Kind::Sizes, Value::Ints(v)) => v
            .iter()
            .try_for_each(|&kb| config::SIZE_KB.count(kb).map(drop)),
        (Kind::Memory, Value::Int(_) | Value::Name(_)) => Ok(()),
        (Kind::History, Value::Runs(_)) => Ok(()),
        (Kind::Interference, Value::Pairs(p)) => {
            crate::interference::Interference::from_pairs(p).map(drop)
        }
        _ => Err(wrong()),
    }
}

use crate::config;

fn counts(v: &[i64]) -> Result<()> {
    if v.is_empty() {
        return Err(Error::invalid(
            "procs",
            "must name at least one process count",
        ));
    }
    if v.len() > config::MAX_POINTS {
        let most = config::MAX_POINTS;
        return Err(Error::invalid(
            "procs",
            format!("names more than {most} process counts"),
        ));
    }
    v.iter().try_for_each(|&p| config::PROCS.count(p).map(drop))
}

fn one_of(param: &'static str, names: Names, name: &str) -> Result<()> {
    let known = names.names();
    if known.contains(&name) {
        Ok(())
    } else {
        Err(Error::invalid(
            param,
            format!("unknown {param} {name:?}; expected one of {known:?}"),
        ))
    }
}

fn optional(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::OptCount(_)
            | Kind::OptInt(_)
            | Kind::OptReal(_)
            | Kind::OptChoice(_)
            | Kind::Placement
            | Kind::Cpu
            | Kind::Cpus
            | Kind::Sizes
            | Kind::Memory
            | Kind::History
            | Kind::Interference
    )
}

/// What a kind takes, in words, for errors and for the stub's types.
pub fn expected(kind: Kind) -> String {
    let or_none = |what: &str| {
        if optional(kind) {
            format!("{what} or None")
        } else {
            what.to_string()
        }
    };
    match kind {
        Kind::Counts => "an int or a sequence of ints".into(),
        Kind::Count(_) | Kind::OptCount(_) | Kind::OptInt(_) => or_none("an int"),
        Kind::Stride => "a power of two of bytes".into(),
        Kind::Real(_) | Kind::OptReal(_) => or_none("a number"),
        Kind::Switch => "True or False".into(),
        Kind::Choice(n) | Kind::OptChoice(n) => or_none(&format!("one of {:?}", n.names())),
        Kind::Placement => crate::placement::expected(),
        Kind::Cpu => or_none("a CPU id"),
        Kind::Cpus => or_none("a sequence of CPU ids"),
        Kind::Sizes => or_none("a sequence of sizes in KiB"),
        Kind::Memory => crate::matrix::Memory::NAMES.into(),
        Kind::History => "earlier runs of each point, or None".into(),
        Kind::Interference => format!(
            "a dict of some of {:?} to numbers, or None",
            crate::interference::KEYS
        ),
    }
}

fn describe(value: &Value) -> &'static str {
    match value {
        Value::None => "None",
        Value::Switch(_) => "bool",
        Value::Int(_) => "int",
        Value::Real(_) => "float",
        Value::Name(_) => "str",
        Value::Ints(_) => "a sequence of ints",
        Value::Runs(_) => "runs",
        Value::Pairs(_) => "a dict",
    }
}

#[cfg(test)]
mod tests;
