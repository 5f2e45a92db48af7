//! Where participants run: a policy, resolved against the caller's affinity mask into one
//! optional CPU per participant of every ring.

use crate::error::{Error, Result};
use crate::transport::TransportKind;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// The scheduler decides.
    Default,
    /// Every participant of every ring on one CPU: `cpu`, or the first allowed one.
    Single(Option<usize>),
    /// Participant i on allowed CPU i mod n, so that (with n > 1) hops cross CPUs.
    Spread,
    /// Ring r entirely on allowed CPU r mod n (meant for `parallel > 1`).
    Balanced,
    /// Participant i on `cpus[i mod len]`.
    List(Vec<usize>),
}

/// How a policy's placement is made from the CPU `single` was given.
type Make = fn(Option<usize>) -> Placement;

/// Every policy a caller can name, one line each: its name, and the placement it is (`cpu`
/// is the CPU for `single`, which no other policy takes). A new policy is a variant above, a
/// line here and its rule in `Placement::resolve`.
const POLICIES: [(&str, Make); 4] = [
    ("default", |_| Placement::Default),
    ("single", Placement::Single),
    ("spread", |_| Placement::Spread),
    ("balanced", |_| Placement::Balanced),
];

/// The names of the policies, in the table's order.
pub fn policies() -> impl ExactSizeIterator<Item = &'static str> {
    POLICIES.iter().map(|&(name, _)| name)
}

/// What a caller may name, for error messages: "'default', 'single', ... or a list of CPU ids".
pub fn expected() -> String {
    let names: Vec<String> = policies().map(|n| format!("'{n}'")).collect();
    format!("{} or a list of CPU ids", names.join(", "))
}

/// Where the participants of every ring run, and whether that is one CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// One CPU (or none: the scheduler decides) per participant, `[ring][participant]`.
    pub cpus: Vec<Vec<Option<usize>>>,
    /// Every participant runs on one CPU: all are pinned to the same one, or the caller may
    /// only use one anyway. The one home of this rule: the switch model (`result::Model`),
    /// the transports that need one CPU and the hints Python prints all read it from here.
    pub one_cpu: bool,
}

impl std::ops::Deref for Resolved {
    type Target = [Vec<Option<usize>>];

    fn deref(&self) -> &Self::Target {
        &self.cpus
    }
}

/// How a caller names a placement.
#[derive(Debug, Clone, Copy)]
pub enum Named<'a> {
    Policy(&'a str),
    Cpus(&'a [i64]),
}

/// A CPU id the kernel's affinity masks can hold: the one rule of a CPU id as a caller gives
/// it (`cpu`, a placement's list, the matrix's `cpus`); which CPUs exist is the host's to say.
pub fn cpu_id(param: &'static str, id: i64) -> Result<usize> {
    let max = crate::sys::MAX_CPUS as i64 - 1;
    if (0..=max).contains(&id) {
        Ok(id as usize)
    } else {
        Err(cpu_outside(param, id))
    }
}

/// The error for a CPU id outside `cpu_id`'s rule given to `param` (`got`, as given: an int
/// too wide for 64 bits too).
pub fn cpu_outside(param: &'static str, got: impl std::fmt::Display) -> Error {
    let max = crate::sys::MAX_CPUS - 1;
    Error::invalid(
        param,
        format!("CPU ids must be between 0 and {max}, got {got}"),
    )
}

impl Placement {
    /// A placement as a caller names it: a policy's name, or CPU ids.
    pub fn parse(named: Named<'_>) -> Result<Self> {
        Ok(match named {
            Named::Policy(name) => match POLICIES.iter().find(|&&(n, _)| n == name) {
                Some((_, make)) => make(None),
                None => {
                    return Err(Error::invalid(
                        "placement",
                        format!("unknown placement {name:?}; expected {}", expected()),
                    ))
                }
            },
            Named::Cpus(ids) => Placement::List(
                ids.iter()
                    .map(|&c| cpu_id("placement", c))
                    .collect::<Result<_>>()?,
            ),
        })
    }

    /// This placement with the CPU `single` was given (None: the first allowed one), an id
    /// `cpu_id` checked as it was given.
    pub fn with_cpu(self, cpu: Option<usize>) -> Result<Self> {
        let Some(cpu) = cpu else {
            return Ok(self);
        };
        match self {
            Placement::Single(_) => Ok(Placement::Single(Some(cpu))),
            _ => Err(Error::invalid(
                "cpu",
                "only meaningful with placement='single'",
            )),
        }
    }

    /// The CPUs `parallel` rings of `procs` placed so may run on here, each once (every
    /// CPU this thread may use where the scheduler decides); counts below one count as one.
    pub fn cpus_here(&self, procs: usize, parallel: usize) -> Result<Vec<usize>> {
        let allowed = crate::sys::allowed_cpus()?;
        self.cpus_used(&allowed, procs.max(1), parallel.max(1))
    }

    /// The name a result records: the policy's, or the CPU list ("[0, 1]").
    pub fn name(&self) -> String {
        if let Placement::List(c) = self {
            return format!("{c:?}");
        }
        let same =
            |make: &Make| std::mem::discriminant(&make(None)) == std::mem::discriminant(self);
        // Every placement but a list is a policy of the table: the fallback is never taken.
        let policy = POLICIES.iter().find(|(_, make)| same(make));
        policy.map_or_else(|| format!("{self:?}"), |(name, _)| (*name).into())
    }

    /// The CPU `single` was given, if any.
    pub fn cpu(&self) -> Option<usize> {
        match self {
            Placement::Single(cpu) => *cpu,
            _ => None,
        }
    }

    /// One CPU (or none) per participant, `[ring][participant]`, within the caller's
    /// affinity mask `allowed`, and whether that is one CPU.
    pub fn resolve(&self, allowed: &[usize], procs: usize, parallel: usize) -> Result<Resolved> {
        let cpus = self.cpus(allowed, procs, parallel)?;
        let one_cpu = on_one_cpu(allowed, &cpus);
        Ok(Resolved { cpus, one_cpu })
    }

    /// The CPUs `parallel` rings of `procs` may run on, each once and in order: the pinned
    /// ones, or every allowed CPU where the scheduler decides.
    pub fn cpus_used(
        &self,
        allowed: &[usize],
        procs: usize,
        parallel: usize,
    ) -> Result<Vec<usize>> {
        let mut used: Vec<usize> = match self.cpus(allowed, procs, parallel)?.concat() {
            placed if placed.iter().all(Option::is_some) => placed.into_iter().flatten().collect(),
            _ => allowed.to_vec(),
        };
        used.sort_unstable();
        used.dedup();
        Ok(used)
    }

    fn cpus(
        &self,
        allowed: &[usize],
        procs: usize,
        parallel: usize,
    ) -> Result<Vec<Vec<Option<usize>>>> {
        let check = |param: &'static str, c: usize| {
            if allowed.contains(&c) {
                Ok(c)
            } else {
                Err(Error::invalid(
                    param,
                    format!("CPU {c} is outside this process's affinity mask {allowed:?}"),
                ))
            }
        };
        let first = *allowed
            .first()
            .ok_or_else(|| Error::invalid("placement", "the affinity mask is empty"))?;
        let n = allowed.len();
        let grid = |f: &dyn Fn(usize, usize) -> Option<usize>| {
            (0..parallel)
                .map(|r| (0..procs).map(|i| f(r, i)).collect())
                .collect()
        };
        Ok(match self {
            Placement::Default => grid(&|_, _| None),
            Placement::Single(cpu) => {
                let c = match cpu {
                    Some(c) => check("cpu", *c)?,
                    None => first,
                };
                grid(&|_, _| Some(c))
            }
            // With one CPU these would measure `single` under another name.
            Placement::Spread if n == 1 => {
                return Err(spread_on_one_cpu("spread", "participants", first))
            }
            Placement::Balanced if n == 1 && parallel > 1 => {
                return Err(spread_on_one_cpu("balanced", "parallel rings", first))
            }
            Placement::Spread => grid(&|_, i| Some(allowed[i % n])),
            Placement::Balanced => grid(&|r, _| Some(allowed[r % n])),
            Placement::List(cpus) => {
                if cpus.is_empty() {
                    return Err(Error::invalid("placement", "the CPU list is empty"));
                }
                for &c in cpus {
                    check("placement", c)?;
                }
                grid(&|_, i| Some(cpus[i % cpus.len()]))
            }
        })
    }
}

/// A policy that spreads over CPUs asked for where only CPU `first` is allowed.
fn spread_on_one_cpu(name: &str, what: &str, first: usize) -> Error {
    Error::invalid(
        "placement",
        format!(
            "{name:?} puts {what} on different CPUs, but this process may run on CPU {first} \
             only (its affinity mask: taskset, a cpuset cgroup or the container's CPUs); use \
             placement='single', or allow more CPUs"
        ),
    )
}

/// Whether CPUs resolved within `allowed` put every participant on one CPU, or the caller
/// may only use one anyway (`Resolved::one_cpu`).
fn on_one_cpu(allowed: &[usize], cpus: &[Vec<Option<usize>>]) -> bool {
    let first = cpus
        .first()
        .and_then(|ring| ring.first())
        .copied()
        .flatten();
    allowed.len() == 1 || (first.is_some() && cpus.iter().flatten().all(|&c| c == first))
}

/// A transport without a wake-up path (`single_cpu_only`) works only with every participant
/// on one CPU.
pub fn check_one_cpu(transport: TransportKind, placed: &Resolved) -> Result<()> {
    if !transport.single_cpu_only() || placed.one_cpu {
        return Ok(());
    }
    Err(Error::invalid(
        "placement",
        format!(
            "transport {:?} needs every participant on one CPU: use placement='single'",
            transport.name()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_resolve() {
        let allowed = [0, 1, 3];
        let flat = |p: Placement, procs, par| p.resolve(&allowed, procs, par).unwrap().cpus;
        assert_eq!(flat(Placement::Default, 2, 1), vec![vec![None, None]]);
        assert_eq!(flat(Placement::Single(None), 2, 1), vec![vec![Some(0); 2]]);
        assert_eq!(
            flat(Placement::Single(Some(3)), 2, 1),
            vec![vec![Some(3); 2]]
        );
        assert_eq!(
            flat(Placement::Spread, 4, 1),
            vec![vec![Some(0), Some(1), Some(3), Some(0)]]
        );
        assert_eq!(
            flat(Placement::Balanced, 2, 2),
            vec![vec![Some(0); 2], vec![Some(1); 2]]
        );
        assert_eq!(
            flat(Placement::List(vec![3, 1]), 3, 1),
            vec![vec![Some(3), Some(1), Some(3)]]
        );
    }

    #[test]
    fn spreading_over_one_allowed_cpu_is_refused_naming_it() {
        let e = Placement::Spread
            .resolve(&[5], 2, 1)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("placement: \"spread\""), "{e}");
        assert!(e.contains("CPU 5 only"), "{e}");
        let e = Placement::Balanced.resolve(&[5], 2, 3).unwrap_err();
        assert!(e.to_string().contains("parallel rings"), "{e}");
        // One ring on the first allowed CPU is what balanced means anywhere.
        assert_eq!(
            Placement::Balanced.resolve(&[5], 2, 1).unwrap().cpus,
            vec![vec![Some(5); 2]]
        );
    }

    #[test]
    fn cpus_outside_the_mask_are_rejected() {
        let e = Placement::Single(Some(2))
            .resolve(&[0, 1], 2, 1)
            .unwrap_err();
        assert!(matches!(e, Error::Invalid { param: "cpu", .. }));
        let e = Placement::List(vec![0, 9])
            .resolve(&[0, 1], 2, 1)
            .unwrap_err();
        assert!(matches!(
            e,
            Error::Invalid {
                param: "placement",
                ..
            }
        ));
        let named = |p, cpu| Placement::parse(p).and_then(|p| p.with_cpu(cpu));
        assert!(named(Named::Policy("nowhere"), None).is_err());
        assert!(matches!(
            named(Named::Policy("spread"), Some(0)),
            Err(Error::Invalid { param: "cpu", .. })
        ));
        assert!(matches!(
            Placement::Default.with_cpu(Some(0)),
            Err(Error::Invalid { param: "cpu", .. })
        ));
        assert!(cpu_id("cpu", -1).is_err() && cpu_id("cpu", crate::sys::MAX_CPUS as i64).is_err());
        assert!(matches!(
            named(Named::Cpus(&[0, 4096]), None),
            Err(Error::Invalid {
                param: "placement",
                ..
            })
        ));
        assert_eq!(
            named(Named::Policy("single"), Some(1)).unwrap(),
            Placement::Single(Some(1))
        );
        assert_eq!(named(Named::Cpus(&[1, 0]), None).unwrap().name(), "[1, 0]");
    }

    #[test]
    fn policies_are_named_by_the_table() {
        let names: Vec<&str> = policies().collect();
        assert_eq!(names, ["default", "single", "spread", "balanced"]);
        for name in names {
            let p = Placement::parse(Named::Policy(name)).unwrap();
            assert_eq!(p.name(), name);
        }
        assert_eq!(Placement::Single(Some(3)).name(), "single");
        assert_eq!(Placement::Single(Some(3)).cpu(), Some(3));
        assert!(expected().starts_with("'default', 'single', 'spread', 'balanced' or"));
    }

    #[test]
    fn one_cpu_is_decided_over_the_resolved_cpus() {
        let allowed = [0, 1];
        let one =
            |p: Placement, procs, parallel| p.resolve(&allowed, procs, parallel).unwrap().one_cpu;
        assert!(one(Placement::Single(Some(1)), 3, 2));
        assert!(one(Placement::Single(None), 3, 1));
        // A list of one CPU, or of one CPU repeated, is one CPU as much as `single` is.
        assert!(one(Placement::List(vec![1]), 3, 2));
        assert!(one(Placement::List(vec![0, 0]), 4, 1));
        assert!(!one(Placement::List(vec![0, 1]), 2, 1));
        // A list whose other CPUs this point does not reach.
        assert!(one(Placement::List(vec![1, 1, 0]), 2, 1));
        assert!(!one(Placement::List(vec![1, 1, 0]), 3, 1));
        assert!(!one(Placement::Default, 3, 2));
        assert!(!one(Placement::Spread, 2, 1));
        // Balanced puts each ring on a CPU of its own: one ring is one CPU.
        assert!(one(Placement::Balanced, 3, 1));
        assert!(!one(Placement::Balanced, 3, 2));
        // A caller that may use one CPU only is on one CPU whatever the policy (spreading
        // policies are refused there: `spreading_over_one_allowed_cpu_is_refused_naming_it`).
        assert!(Placement::Default.resolve(&[1], 2, 2).unwrap().one_cpu);
        assert!(Placement::Balanced.resolve(&[1], 2, 1).unwrap().one_cpu);
    }

    #[test]
    fn single_cpu_transports_need_one_cpu() {
        let allowed = [0, 1];
        let spread = Placement::Spread.resolve(&allowed, 3, 2).unwrap();
        let listed = Placement::List(vec![1]).resolve(&allowed, 3, 2).unwrap();
        assert!(check_one_cpu(TransportKind::Pipe, &spread).is_ok());
        assert!(check_one_cpu(TransportKind::Yield, &listed).is_ok());
        assert!(matches!(
            check_one_cpu(TransportKind::Yield, &spread),
            Err(Error::Invalid {
                param: "placement",
                ..
            })
        ));
    }
}
