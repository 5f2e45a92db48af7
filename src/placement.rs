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

pub const NAMES: &str = "'default', 'single', 'spread', 'balanced' or a list of CPU ids";
pub const POLICIES: [&str; 4] = ["default", "single", "spread", "balanced"];

/// How a caller names a placement.
#[derive(Debug, Clone, Copy)]
pub enum Named<'a> {
    Policy(&'a str),
    Cpus(&'a [i64]),
}

/// A CPU id the kernel's affinity masks can hold.
fn cpu_id(param: &'static str, id: i64) -> Result<usize> {
    let max = libc::CPU_SETSIZE as i64 - 1;
    if (0..=max).contains(&id) {
        Ok(id as usize)
    } else {
        Err(Error::invalid(
            param,
            format!("CPU ids must be between 0 and {max}, got {id}"),
        ))
    }
}

impl Placement {
    /// The placement a caller asked for: a policy by name or a list of CPU ids (`None`: the
    /// default), and the CPU for `single`, which no other policy takes.
    pub fn from_request(named: Option<Named<'_>>, cpu: Option<i64>) -> Result<Self> {
        let cpu = cpu.map(|c| cpu_id("cpu", c)).transpose()?;
        let p = match named {
            None => Placement::Default,
            Some(Named::Policy("default")) => Placement::Default,
            Some(Named::Policy("single")) => Placement::Single(cpu),
            Some(Named::Policy("spread")) => Placement::Spread,
            Some(Named::Policy("balanced")) => Placement::Balanced,
            Some(Named::Policy(name)) => {
                return Err(Error::invalid(
                    "placement",
                    format!("unknown placement {name:?}; expected {NAMES}"),
                ))
            }
            Some(Named::Cpus(ids)) => Placement::List(
                ids.iter()
                    .map(|&c| cpu_id("placement", c))
                    .collect::<Result<_>>()?,
            ),
        };
        if cpu.is_some() && !matches!(p, Placement::Single(_)) {
            return Err(Error::invalid(
                "cpu",
                "only meaningful with placement='single'",
            ));
        }
        Ok(p)
    }

    pub fn name(&self) -> String {
        match self {
            Placement::Default => "default".into(),
            Placement::Single(_) => "single".into(),
            Placement::Spread => "spread".into(),
            Placement::Balanced => "balanced".into(),
            Placement::List(c) => format!("{c:?}"),
        }
    }

    /// One CPU (or none) per participant: `result[ring][participant]`.
    pub fn resolve(
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
            Placement::Spread if n == 1 => return Err(one_cpu("spread", "participants", first)),
            Placement::Balanced if n == 1 && parallel > 1 => {
                return Err(one_cpu("balanced", "parallel rings", first))
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
fn one_cpu(name: &str, what: &str, first: usize) -> Error {
    Error::invalid(
        "placement",
        format!(
            "{name:?} puts {what} on different CPUs, but this process may run on CPU {first} \
             only (its affinity mask: taskset, a cpuset cgroup or the container's CPUs); use \
             placement='single', or allow more CPUs"
        ),
    )
}

/// Whether a resolved placement (`Placement::resolve`) puts every participant on one CPU, or
/// the caller may only use one anyway.
pub fn on_one_cpu(allowed: &[usize], cpus: &[Vec<Option<usize>>]) -> bool {
    let first = cpus
        .first()
        .and_then(|ring| ring.first())
        .copied()
        .flatten();
    allowed.len() == 1 || (first.is_some() && cpus.iter().flatten().all(|&c| c == first))
}

/// A transport without a wake-up path (`single_cpu_only`) works only with every participant
/// on one CPU.
pub fn check_one_cpu(
    transport: TransportKind,
    allowed: &[usize],
    cpus: &[Vec<Option<usize>>],
) -> Result<()> {
    if !transport.single_cpu_only() || on_one_cpu(allowed, cpus) {
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
        let flat = |p: Placement, procs, par| p.resolve(&allowed, procs, par).unwrap();
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
            Placement::Balanced.resolve(&[5], 2, 1).unwrap(),
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
        let named = |p, cpu| Placement::from_request(Some(p), cpu);
        assert!(named(Named::Policy("nowhere"), None).is_err());
        assert!(matches!(
            named(Named::Policy("spread"), Some(0)),
            Err(Error::Invalid { param: "cpu", .. })
        ));
        assert!(matches!(
            Placement::from_request(None, Some(0)),
            Err(Error::Invalid { param: "cpu", .. })
        ));
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
    fn single_cpu_transports_need_one_cpu() {
        let allowed = [0, 1];
        let grid = |p: Placement| p.resolve(&allowed, 3, 2).unwrap();
        assert!(on_one_cpu(&allowed, &grid(Placement::Single(Some(1)))));
        assert!(!on_one_cpu(&allowed, &grid(Placement::Default)));
        assert!(!on_one_cpu(&allowed, &grid(Placement::Balanced)));
        assert!(on_one_cpu(
            &[1],
            &Placement::Default.resolve(&[1], 2, 1).unwrap()
        ));
        let spread = grid(Placement::Spread);
        assert!(check_one_cpu(TransportKind::Pipe, &allowed, &spread).is_ok());
        assert!(matches!(
            check_one_cpu(TransportKind::Yield, &allowed, &spread),
            Err(Error::Invalid {
                param: "placement",
                ..
            })
        ));
    }
}
