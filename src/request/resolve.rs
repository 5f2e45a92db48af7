//! Requests into what the core runs: every default the table leaves to a rule (the preset's
//! precision and time cap, the engine's first transport, a stopping rule's repetition
//! length, ping-pong's engine) and every mode decision (a fixed count or precision mode,
//! perf's fixed loop) is made here, once, for every front door.

use super::{Door, Parsed, Preset, Request};
use crate::ab;
use crate::cgroups::Cgroups;
use crate::config::{Config, Plan};
use crate::engine::{Engine, TransportKind};
use crate::error::{Error, Result};
use crate::matrix::{MatrixConfig, Memory};
use crate::placement::Placement;
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
    /// This request is of `door`: an error naming both where it is not.
    fn check_door(&self, door: Door) -> Result<()> {
        if self.door == door {
            return Ok(());
        }
        Err(Error::unexpected(format!(
            "a {} request resolved as a {}",
            self.door.name(),
            door.name()
        )))
    }

    /// What a ring of `Door::Ring` runs.
    pub fn ring(&self) -> Result<Config> {
        self.check_door(Door::Ring)?;
        let cfg = self.base(self.engine_transport(None)?, self.required("procs")?)?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// What a ping-pong runs: two participants, perf's fixed loop where `loops` is given.
    pub fn pingpong(&self) -> Result<Config> {
        self.check_door(Door::Pingpong)?;
        // perf's -T is the thread engine; any engine can be named, fibers too.
        let threads = self.switch("threads")?;
        let engine = match (self.value("engine")?, threads) {
            (None, true) => Engine::Thread,
            (None, false) => Engine::Process,
            (Some(engine), false) => engine,
            (Some(Engine::Thread), true) => Engine::Thread,
            (Some(engine), true) => {
                return Err(Error::invalid(
                    "threads",
                    format!(
                        "True means engine=\"thread\", but engine={:?} was named",
                        engine.name()
                    ),
                ))
            }
        };
        let base = self.base(self.engine_transport(Some(engine))?, vec![2])?;
        let loops = self.value::<usize>("loops")?.map(|n| n as u64);
        let mut cfg = ring::pingpong_config(base, loops);
        cfg.run_levels.truncate(1);
        cfg.validate()?;
        Ok(cfg)
    }

    /// What the CPU matrix runs: each cell a ring of two on its pair of CPUs.
    pub fn matrix(&self) -> Result<MatrixConfig> {
        self.check_door(Door::Matrix)?;
        crate::matrix::check_engine(self.required("engine")?)?;
        let memory = self.value("memory_node")?.unwrap_or(Memory::Auto);
        let ring = self.base(self.engine_transport(None)?, vec![2])?;
        ring.validate()?;
        crate::sched::check_matrix(ring.sched.as_ref())?;
        let per_class = self.value::<usize>("per_class")?;
        let full = self.switch("full")?;
        if full && per_class.is_some() {
            return Err(Error::invalid(
                "full",
                "measures every ordered pair, per_class a sample of each class: name one",
            ));
        }
        Ok(MatrixConfig {
            cpus: self.value::<Vec<usize>>("cpus")?,
            ring,
            per_class,
            full,
            passes: self.required::<usize>("passes")?,
            memory,
        })
    }

    /// What a cache sweep runs.
    pub fn cache(&self) -> Result<CacheRequest> {
        self.check_door(Door::Cache)?;
        let base = Config {
            // Each round measures one block of every size: a fixed count of one block.
            stop: Stop::Fixed(crate::stop::BLOCK_REPETITIONS),
            min_time: self
                .value::<f64>("min_time")?
                .unwrap_or(crate::stop::PRECISION_MIN_TIME),
            ..self.base(self.engine_transport(None)?, self.required("procs")?)?
        };
        base.validate()?;
        Ok(CacheRequest {
            base,
            sizes_kb: self.value::<Vec<usize>>("sizes_kb")?,
            rounds: self.required::<usize>("rounds")?,
            stream_kb: self.value::<usize>("stream_kb")?,
            line_bytes: self.value::<usize>("line_bytes")?,
        })
    }

    /// `a` against `b` under this request's budget, threshold and seed; each side a ring or
    /// a ping-pong of one participant count.
    pub fn ab(&self, a: &Request, b: &Request) -> Result<AbRequest> {
        self.check_door(Door::Ab)?;
        let side = |name, r: &Request| match Door::of_ab_side(name, r.door.name())? {
            Door::Pingpong => r.pingpong(),
            _ => r.ring(),
        };
        let seed = ab::seed(self.value::<usize>("seed")?.map(|s| s as u64));
        Ok(AbRequest {
            a: side("a", a)?,
            b: side("b", b)?,
            measures: [a.door.name(), b.door.name()],
            plan: ab::Plan {
                budget_s: self.required::<f64>("budget")?,
                threshold: self.required::<f64>("threshold")?,
                seed,
            },
        })
    }

    /// The engine (`engine`, or the one given) and its transport (its first when none);
    /// whether they go together is `Config::validate`'s, as every other rule between values.
    fn engine_transport(&self, engine: Option<Engine>) -> Result<(Engine, TransportKind)> {
        let engine = engine.map_or_else(|| self.required("engine"), Ok)?;
        let transport = self
            .value("transport")?
            .unwrap_or(engine.default_transport());
        Ok((engine, transport))
    }

    /// The ring this request runs of `procs` at `engine` and `transport`: each value as
    /// given, else as the table defaults it, a ring's default where this door takes no such
    /// parameter (a cache sweep's warm-up, a matrix cell's placement).
    fn base(
        &self,
        (engine, transport): (Engine, TransportKind),
        procs: Vec<usize>,
    ) -> Result<Config> {
        let stop = self.stop()?;
        Ok(Config {
            engine,
            transport,
            procs,
            size_kb: self.required("size_kb")?,
            stride_bytes: self.required("stride_bytes")?,
            stop,
            warmup: self.required("warmup")?,
            parallel: self.required("parallel")?,
            placement: self.placement()?,
            min_time: self.value("min_time")?.unwrap_or(stop.default_min_time()),
            timeout: self.required("timeout")?,
            plan: Plan::Calibrated { overhead: true },
            record_hops: self.switch("record_hops")?,
            run_levels: stats::run_levels(&self.runs()?),
            observer: self.required("counters")?,
            sched: self.sched()?,
            cgroups: self.cgroups()?,
            interference: self.value("interference")?.flatten(),
        })
    }

    /// The stopping rule: a fixed count where `repetitions` is given (lmbench's way), else
    /// precision mode at the preset's precision and time cap unless named.
    fn stop(&self) -> Result<Stop> {
        let preset: Preset = self.required("preset")?;
        Ok(match self.value::<usize>("repetitions")? {
            Some(n) => Stop::Fixed(n),
            None => Stop::Precise(Precision {
                target: self.value("precision")?.unwrap_or(preset.precision()),
                max_repetitions: self.required("max_repetitions")?,
                max_time: self.value("max_time")?.unwrap_or(preset.max_time()),
            }),
        })
    }

    /// The placement asked, with the CPU `single` was given.
    pub fn placement(&self) -> Result<Placement> {
        let placement: Placement = self.required("placement")?;
        placement.with_cpu(self.value("cpu")?)
    }

    /// The cgroups asked for, in the hierarchy with the cpu controller; refused here, before
    /// anything starts, where this machine has none.
    fn cgroups(&self) -> Result<Option<Cgroups>> {
        let Some(Parsed::Split(split)) = self.get("cgroups")? else {
            return Ok(None);
        };
        let weight = self.value::<usize>("cgroup_weight")?.map(|w| w as u64);
        Cgroups::new(split, self.required::<usize>("cgroup_depth")?, weight).map(Some)
    }

    fn runs(&self) -> Result<Vec<Option<Vec<stats::EarlierRun>>>> {
        Ok(self.value("history")?.unwrap_or_default())
    }

    /// The scheduling policy asked: None where no policy, priority, nice or deadline
    /// parameter is given (every task as it inherits); a nice alone is policy other.
    fn sched(&self) -> Result<Option<Sched>> {
        let (priority, nice) = (self.value::<i64>("priority")?, self.value::<i64>("nice")?);
        let dl = [
            self.value::<i64>("dl_runtime_us")?,
            self.value::<i64>("dl_deadline_us")?,
            self.value::<i64>("dl_period_us")?,
        ];
        let policy = match self.value("policy")? {
            Some(p) => p,
            None if priority.is_none() && nice.is_none() && dl.iter().all(Option::is_none) => {
                return Ok(None)
            }
            _ => Policy::Other,
        };
        Sched::new(policy, priority, nice, dl).map(Some)
    }
}
