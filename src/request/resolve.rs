//! Requests into what the core runs: every default the table leaves to a rule (the preset's
//! precision and time cap, the engine's first transport, a stopping rule's repetition
//! length, ping-pong's engine) and every mode decision (a fixed count or precision mode,
//! perf's fixed loop) is made here, once, for every front door.

use super::{Door, Preset, Request, Value};
use crate::ab;
use crate::cgroups::Cgroups;
use crate::config::{Config, Plan};
use crate::engine::{Engine, TransportKind};
use crate::error::{Error, Result};
use crate::interference::Interference;
use crate::matrix::{MatrixConfig, Memory};
use crate::observer::Observer;
use crate::placement::{Named, Placement};
use crate::ring;
use crate::sched::{Policy, Sched};
use crate::stats;
use crate::stop::{Precision, Stop};

/// A cache sweep: the ring every size is measured with, the sizes, its rounds, the streaming
/// read's KiB and the line size; each `None` that the caller left to the host
/// (`host::cache::plan` derives it).
#[derive(Debug, Clone)]
pub struct CacheRequest {
    pub base: Config,
    pub sizes_kb: Option<Vec<usize>>,
    pub rounds: usize,
    pub stream_kb: Option<usize>,
    pub line_bytes: Option<usize>,
}

/// Two measurements against each other, and how.
#[derive(Debug, Clone)]
pub struct AbRequest {
    pub a: Config,
    pub b: Config,
    /// What each side measures, as its door is named: "ring" or "pingpong".
    pub measures: [&'static str; 2],
    pub plan: ab::Plan,
}

impl Request {
    fn expect(&self, door: Door) {
        assert_eq!(self.door, door, "a {} request", self.door.name());
    }

    /// What a ring of `Door::Ring` runs.
    pub fn ring(&self) -> Result<Config> {
        self.expect(Door::Ring);
        let (engine, transport) = self.engine_transport(None)?;
        let procs = self.procs()?;
        let run_levels = self
            .runs("history")
            .iter()
            .map(|runs| runs.as_deref().and_then(stats::run_level))
            .collect();
        let cfg = Config {
            engine,
            transport,
            size_kb: self.count("size_kb"),
            stride_bytes: self.count("stride_bytes"),
            warmup: self.count("warmup"),
            parallel: self.count("parallel"),
            placement: self.placement()?,
            timeout: self.timeout(),
            plan: Plan::Calibrated { overhead: true },
            record_hops: self.switch("record_hops"),
            run_levels,
            observer: self.observer(),
            sched: self.sched()?,
            cgroups: self.cgroups()?,
            interference: self.interference()?,
            ..self.stopping(Config::lat_ctx(procs))
        };
        cfg.validate()?;
        Ok(cfg)
    }

    /// What a ping-pong runs: two participants, perf's fixed loop where `loops` is given.
    pub fn pingpong(&self) -> Result<Config> {
        self.expect(Door::Pingpong);
        // perf's -T is the thread engine; any engine can be named, fibers too.
        let threads = self.switch("threads");
        let engine = match (self.name("engine"), threads) {
            (None, true) => "thread".to_string(),
            (None, false) => "process".to_string(),
            (Some(name), false) => name,
            (Some(name), true) if name == "thread" => name,
            (Some(name), true) => {
                return Err(Error::invalid(
                    "threads",
                    format!("True means engine=\"thread\", but engine={name:?} was named"),
                ))
            }
        };
        let (engine, transport) = self.engine_transport(Some(&engine))?;
        let stopping = self.stopping(Config::lat_ctx(vec![2]));
        let cfg = ring::pingpong_config(
            engine,
            transport,
            self.placement()?,
            self.maybe_count("loops").map(|n| n as u64),
            stopping.stop,
            Some(stopping.min_time),
            self.timeout(),
        )?;
        let run_levels = match self.runs("history").into_iter().next() {
            Some(runs) => vec![runs.as_deref().and_then(stats::run_level)],
            None => Vec::new(),
        };
        let cfg = Config {
            run_levels,
            observer: self.observer(),
            sched: self.sched()?,
            cgroups: self.cgroups()?,
            ..cfg
        };
        cfg.validate()?;
        Ok(cfg)
    }

    /// What the CPU matrix runs: each cell a ring of two on its pair of CPUs.
    pub fn matrix(&self) -> Result<MatrixConfig> {
        self.expect(Door::Matrix);
        let engine = Engine::parse(&self.name("engine").expect("the table defaults the engine"))?;
        crate::matrix::check_engine(engine)?;
        let (engine, transport) = self.engine_transport(None)?;
        let cpus = self
            .ints("cpus")
            .map(|ids| cpu_ids("cpus", &ids))
            .transpose()?;
        let memory = match self.value("memory_node") {
            Value::Name(name) => Memory::parse(&name)?,
            Value::Int(n) => Memory::Node(node_id(n)?),
            _ => Memory::Auto,
        };
        let ring = Config {
            engine,
            transport,
            size_kb: self.count("size_kb"),
            stride_bytes: self.count("stride_bytes"),
            warmup: self.count("warmup"),
            timeout: self.timeout(),
            record_hops: self.switch("record_hops"),
            observer: self.observer(),
            sched: self.sched()?,
            ..self.stopping(Config::lat_ctx(vec![2]))
        };
        ring.validate()?;
        if ring.sched.is_some_and(|s| s.policy == Policy::Deadline) {
            return Err(Error::invalid(
                "policy",
                "the matrix pins each cell's pair to its CPUs, and the kernel refuses \
                 SCHED_DEADLINE for pinned tasks",
            ));
        }
        Ok(MatrixConfig {
            cpus,
            ring,
            per_class: self.maybe_count("per_class"),
            passes: self.count("passes"),
            memory,
        })
    }

    /// What a cache sweep runs.
    pub fn cache(&self) -> Result<CacheRequest> {
        self.expect(Door::Cache);
        let (engine, transport) = self.engine_transport(None)?;
        let base = Config {
            engine,
            transport,
            stride_bytes: self.count("stride_bytes"),
            placement: self.placement()?,
            timeout: self.timeout(),
            // Each round measures one block of every size: a fixed count of one block.
            stop: Stop::Fixed(crate::stop::BLOCK_REPETITIONS),
            min_time: self
                .maybe_real("min_time")
                .unwrap_or(crate::stop::PRECISION_MIN_TIME),
            ..Config::lat_ctx(self.procs()?)
        };
        let sizes_kb = self
            .ints("sizes_kb")
            .map(|sizes| sizes.into_iter().map(|kb| kb as usize).collect());
        Ok(CacheRequest {
            base,
            sizes_kb,
            rounds: self.count("rounds"),
            stream_kb: self.maybe_count("stream_kb"),
            line_bytes: self.maybe_count("line_bytes"),
        })
    }

    /// `a` against `b` under this request's budget, threshold and seed; each side a ring or
    /// a ping-pong of one participant count.
    pub fn ab(&self, a: &Request, b: &Request) -> Result<AbRequest> {
        self.expect(Door::Ab);
        let side = |r: &Request| match r.door {
            Door::Ring => r.ring(),
            Door::Pingpong => r.pingpong(),
            other => Err(Error::invalid(
                "a",
                format!(
                    "an A/B side is a ring or a ping-pong, not a {}",
                    other.name()
                ),
            )),
        };
        // The clock's nanoseconds: a different order each run unless a seed is named.
        let seed = self.maybe_count("seed").map_or_else(
            || {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.subsec_nanos() as u64 ^ d.as_secs())
            },
            |s| s as u64,
        );
        Ok(AbRequest {
            a: side(a)?,
            b: side(b)?,
            measures: [a.door.name(), b.door.name()],
            plan: ab::Plan {
                budget_s: self.real("budget"),
                threshold: self.real("threshold"),
                seed,
            },
        })
    }

    fn procs(&self) -> Result<Vec<usize>> {
        let counts = self
            .ints("procs")
            .ok_or_else(|| Error::unexpected("missing required argument: procs"))?;
        Ok(counts.into_iter().map(|p| p as usize).collect())
    }

    /// The engine (`engine`, or the name given) and its transport (its first when none).
    fn engine_transport(&self, engine: Option<&str>) -> Result<(Engine, TransportKind)> {
        let name = match engine {
            Some(n) => n.to_string(),
            None => self.name("engine").expect("the table defaults the engine"),
        };
        let engine = Engine::parse(&name)?;
        let transport = match self.name("transport") {
            Some(t) => TransportKind::parse(&t)?,
            None => engine.default_transport(),
        };
        crate::engine::check_combination(engine, transport)?;
        Ok((engine, transport))
    }

    /// The stopping rule, its repetitions' length and (where asked) its warm-up: a fixed
    /// count where `repetitions` is given (lmbench's way), else precision mode at the
    /// preset's precision and time cap unless named.
    fn stopping(&self, cfg: Config) -> Config {
        let preset: Preset = self.preset();
        let stop = match self.maybe_count("repetitions") {
            Some(n) => Stop::Fixed(n),
            None => Stop::Precise(Precision {
                target: self.maybe_real("precision").unwrap_or(preset.precision()),
                max_repetitions: self.count("max_repetitions"),
                max_time: self.maybe_real("max_time").unwrap_or(preset.max_time()),
            }),
        };
        Config {
            stop,
            min_time: self
                .maybe_real("min_time")
                .unwrap_or(stop.default_min_time()),
            ..cfg
        }
    }

    fn placement(&self) -> Result<Placement> {
        let cpu = match self.value("cpu") {
            Value::Int(c) => Some(c),
            _ => None,
        };
        match self.value("placement") {
            Value::Name(name) => Placement::from_request(Some(Named::Policy(&name)), cpu),
            Value::Ints(ids) => Placement::from_request(Some(Named::Cpus(&ids)), cpu),
            _ => Placement::from_request(None, cpu),
        }
    }

    /// The cgroups asked for, in the hierarchy with the cpu controller; refused here, before
    /// anything starts, where this machine has none.
    fn cgroups(&self) -> Result<Option<Cgroups>> {
        let Some(layout) = self.name("cgroups") else {
            return Ok(None);
        };
        let weight = self.maybe_count("cgroup_weight").map(|w| w as u64);
        Cgroups::new(&layout, self.count("cgroup_depth"), weight).map(Some)
    }

    /// The neighbours asked for; None where none (an empty dict starts none either).
    fn interference(&self) -> Result<Option<Interference>> {
        let Some(pairs) = self.pairs("interference") else {
            return Ok(None);
        };
        let asked = Interference::from_pairs(&pairs)?;
        Ok((!asked.is_empty()).then_some(asked))
    }

    fn timeout(&self) -> f64 {
        self.real("timeout")
    }

    /// The scheduling policy asked: None where no policy, priority, nice or deadline
    /// parameter is given (every task as it inherits); a nice alone is policy other.
    fn sched(&self) -> Result<Option<Sched>> {
        // The matrix takes no deadline parameters.
        let int = |name| match super::params::find(self.door, name).map(|_| self.value(name)) {
            Some(Value::Int(i)) => Some(i),
            _ => None,
        };
        let (priority, nice) = (int("priority"), int("nice"));
        let dl = [
            int("dl_runtime_us"),
            int("dl_deadline_us"),
            int("dl_period_us"),
        ];
        let policy = match self.name("policy") {
            Some(name) => Policy::parse(&name)?,
            None if priority.is_none() && nice.is_none() && dl.iter().all(Option::is_none) => {
                return Ok(None)
            }
            None => Policy::Other,
        };
        Sched::new(policy, priority, nice, dl).map(Some)
    }

    fn observer(&self) -> Observer {
        let name = self.name("counters").expect("the table defaults counters");
        Observer::parse(&name).expect("checked against the table's names")
    }
}

fn cpu_ids(param: &'static str, ids: &[i64]) -> Result<Vec<usize>> {
    ids.iter()
        .map(|&id| {
            usize::try_from(id)
                .map_err(|_| Error::invalid(param, format!("CPU ids are >= 0, got {id}")))
        })
        .collect()
}

fn node_id(n: i64) -> Result<usize> {
    usize::try_from(n)
        .map_err(|_| Error::invalid("memory_node", format!("node ids are >= 0, got {n}")))
}
