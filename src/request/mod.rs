//! What a caller asks of a measurement — a ring, a ping-pong, the CPU matrix, a cache sweep,
//! an A/B pair — as values of the parameters `params::PARAMS` declares, each parsed once, as
//! it is given, into its domain type (`Parsed`: an `Engine`, a `Policy`, an `Interference`,
//! a count within its limit); `resolve` turns a request into what the core runs, with every
//! default and every mode decision made there, once. Front doors (the Python binding, and
//! through it the API and the CLI) only convert their arguments into a `Request` and its
//! result back.

mod known;
pub mod params;
mod resolve;

pub use known::{known, Known};
pub use params::{Door, Fallback, Kind, Names, Param, PARAMS};
pub use resolve::{AbRequest, CacheRequest};

use crate::config;
use crate::engine::{Engine, TransportKind};
use crate::error::{Error, Limit, Result};
use crate::interference::Interference;
use crate::matrix::Memory;
use crate::observer::Observer;
use crate::placement::{cpu_id, Named, Placement};
use crate::sched::Policy;
use crate::stats::EarlierRun;
pub use crate::stop::Preset;

/// A value as a front door gives it, before its parameter's kind parses it.
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

/// A value parsed by its parameter's kind: the domain type, in its range.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    Switch(bool),
    /// A count within its limit, or a CPU id.
    Count(usize),
    /// A signed number within its limit.
    Int(i64),
    Real(f64),
    /// Counts, sizes or CPU ids, each within its limit.
    Counts(Vec<usize>),
    Engine(Engine),
    Transport(TransportKind),
    Preset(Preset),
    Observer(Observer),
    Policy(Policy),
    /// Cgroups: each participant in a leaf of its own (`split`), or all in one.
    Split(bool),
    /// Where the participants run (`cpu` joins it as the request resolves).
    Placement(Placement),
    Memory(Memory),
    Runs(Vec<Option<Vec<EarlierRun>>>),
    /// The neighbours asked; None where none (an empty dict starts none either).
    Interference(Option<Interference>),
}

/// The values given for one measurement, each parsed by its parameter.
#[derive(Debug, Clone)]
pub struct Request {
    door: Door,
    given: Vec<(&'static Param, Parsed)>,
}

impl Request {
    pub fn new(door: Door) -> Self {
        Request {
            door,
            given: Vec::new(),
        }
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
        self.given.retain(|(p, _)| p.name != name);
        if let Some(parsed) = parse(param, value)? {
            self.given.push((param, parsed));
        }
        Ok(self)
    }

    /// The value of `name`: as given, else its default parsed as a given one is (None where
    /// the default is derived or none); a ring's default where this door takes no such
    /// parameter, as every door runs rings.
    fn get(&self, name: &str) -> Result<Option<Parsed>> {
        if let Some((_, v)) = self.given.iter().find(|(p, _)| p.name == name) {
            return Ok(Some(v.clone()));
        }
        let param = params::find(self.door, name).or_else(|| params::find(Door::Ring, name));
        let Some(param) = param else {
            return Ok(None);
        };
        match param.default.value() {
            Some(default) => parse(param, default),
            None => Ok(None),
        }
    }

    /// The value of `name` as the type its kind parses into: None where neither given nor
    /// defaulted.
    fn value<T: FromParsed>(&self, name: &str) -> Result<Option<T>> {
        match self.get(name)? {
            Some(parsed) => T::from_parsed(&parsed)
                .map(Some)
                .ok_or_else(|| mistyped(name, &parsed)),
            None => Ok(None),
        }
    }

    /// The value of `name`, which the table defaults: an error naming it where it does not.
    fn required<T: FromParsed>(&self, name: &str) -> Result<T> {
        self.value(name)?
            .ok_or_else(|| Error::unexpected(format!("missing required argument: {name}")))
    }

    fn switch(&self, name: &str) -> Result<bool> {
        Ok(self.value(name)? == Some(true))
    }
}

/// A domain type a kind parses into, taken back out of its `Parsed`.
trait FromParsed: Sized {
    fn from_parsed(parsed: &Parsed) -> Option<Self>;
}

macro_rules! from_parsed {
    ($($t:ty: $($variant:ident($v:ident) => $e:expr),+;)*) => {$(
        impl FromParsed for $t {
            fn from_parsed(parsed: &Parsed) -> Option<Self> {
                match parsed {
                    $(Parsed::$variant($v) => Some($e),)+
                    _ => None,
                }
            }
        }
    )*};
}

from_parsed! {
    usize: Count(n) => *n;
    i64: Int(i) => *i, Count(n) => *n as i64;
    f64: Real(x) => *x;
    bool: Switch(b) => *b;
    Vec<usize>: Counts(v) => v.clone();
    Engine: Engine(e) => *e;
    TransportKind: Transport(t) => *t;
    Preset: Preset(p) => *p;
    Observer: Observer(o) => *o;
    Policy: Policy(p) => *p;
    Placement: Placement(p) => p.clone();
    Memory: Memory(m) => *m;
    Vec<Option<Vec<EarlierRun>>>: Runs(r) => r.clone();
    Option<Interference>: Interference(i) => *i;
}

/// A value the table gave a type its kind does not make: the table is wrong.
fn mistyped(name: &str, value: &Parsed) -> Error {
    Error::unexpected(format!("{name}: the table's kind gave {value:?}"))
}

/// `value` parsed by `param`'s kind, each number checked against its limit once: None where
/// it is None and the kind takes None; a `TypeError` where the kind takes no such value.
fn parse(param: &Param, value: Value) -> Result<Option<Parsed>> {
    let name = param.name;
    let wrong = |value: &Value| {
        Error::unexpected(format!(
            "{name}: expected {}, got {}",
            expected(param.kind),
            describe(value)
        ))
    };
    let parsed = match (param.kind, value) {
        (kind, Value::None) if optional(kind) => return Ok(None),
        (kind @ (Kind::Counts | Kind::Sizes | Kind::Cpus | Kind::Placement), Value::Ints(v))
            if v.len() > kind.most_items() =>
        {
            return Err(Error::invalid(
                name,
                format!("lists more than {} {}", kind.most_items(), kind.items()),
            ))
        }
        (Kind::Counts, Value::Int(i)) => Parsed::Counts(vec![config::PROCS.count(i)?]),
        (Kind::Counts, Value::Ints(v)) if v.is_empty() => {
            return Err(Error::invalid(name, "must name at least one process count"))
        }
        (Kind::Counts, Value::Ints(v)) => Parsed::Counts(counts(config::PROCS, &v)?),
        (Kind::Sizes, Value::Ints(v)) => Parsed::Counts(counts(config::SIZE_KB, &v)?),
        (Kind::Count(l) | Kind::OptCount(l), Value::Int(i)) => Parsed::Count(l.count(i)?),
        (Kind::OptInt(l), Value::Int(i)) => Parsed::Int(l.check(i)?),
        (Kind::Stride, Value::Int(i)) => Parsed::Count(crate::workload::check_stride(i)?),
        (Kind::Real(l) | Kind::OptReal(l), Value::Real(x)) => Parsed::Real(l.check(x)?),
        (Kind::Real(l) | Kind::OptReal(l), Value::Int(i)) => Parsed::Real(l.check(i as f64)?),
        (Kind::Switch, Value::Switch(b)) => Parsed::Switch(b),
        (Kind::Choice(names) | Kind::OptChoice(names), Value::Name(n)) => names.parse(&n)?,
        (Kind::Placement, Value::Name(n)) => {
            Parsed::Placement(Placement::parse(Named::Policy(&n))?)
        }
        (Kind::Placement, Value::Ints(ids)) => {
            Parsed::Placement(Placement::parse(Named::Cpus(&ids))?)
        }
        (Kind::Cpu, Value::Int(i)) => Parsed::Count(cpu_id(name, i)?),
        (Kind::Cpus, Value::Ints(v)) => {
            Parsed::Counts(v.iter().map(|&i| cpu_id(name, i)).collect::<Result<_>>()?)
        }
        (Kind::Memory, Value::Name(n)) => Parsed::Memory(Memory::parse(&n)?),
        (Kind::Memory, Value::Int(n)) => Parsed::Memory(Memory::of_node(n)?),
        (Kind::History, Value::Runs(r)) => Parsed::Runs(r),
        (Kind::Interference, Value::Pairs(p)) => {
            let asked = Interference::from_pairs(&p)?;
            Parsed::Interference((!asked.is_empty()).then_some(asked))
        }
        (_, value) => return Err(wrong(&value)),
    };
    Ok(Some(parsed))
}

/// Each of `given` in `limit`.
fn counts(limit: Limit<u64>, given: &[i64]) -> Result<Vec<usize>> {
    given.iter().map(|&n| limit.count(n)).collect()
}

impl Names {
    /// `name` as the domain type these names are of; the type's own error where it is none.
    fn parse(self, name: &str) -> Result<Parsed> {
        Ok(match self {
            Names::Engines => Parsed::Engine(Engine::parse(name)?),
            Names::Transports => Parsed::Transport(TransportKind::parse(name)?),
            Names::Presets => Parsed::Preset(Preset::parse(name)?),
            Names::Counters => Parsed::Observer(Observer::parse(name)?),
            Names::Policies => Parsed::Policy(Policy::parse(name)?),
            Names::Cgroups => Parsed::Split(crate::cgroups::Cgroups::splits(name)?),
        })
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
        Kind::Memory => Memory::NAMES.into(),
        Kind::History => "earlier runs of each point, or None".into(),
        Kind::Interference => format!(
            "a dict of some of {:?} to numbers, or None",
            crate::interference::keys()
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
