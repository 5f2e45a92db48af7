//! One error type for the whole core; `python/convert.rs` maps each variant once to a Python
//! exception. And `Limit`, the allowed range of one parameter: the kind every range of the
//! core is, whose check is the one maker of a range's `Error::Invalid` and its message (the
//! ranges themselves live with what they limit: `config`, `sched`).

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// A parameter out of its allowed range (→ `ValueError`).
    Invalid {
        param: &'static str,
        message: String,
    },
    /// A parameter a measurement does not take, or a value of the wrong type (→ `TypeError`).
    Type(String),
    /// A system resource ran out or a syscall failed while setting up (→ `OSError`).
    Os {
        errno: i32,
        context: String,
        hint: &'static str,
    },
    /// The ring needs more memory than this process can get (→ `MemoryError`).
    Memory {
        need: u64,
        available: u64,
        context: String,
    },
    /// A participant died, hung or broke the token protocol mid-run (→ `RuntimeError`).
    Peer(String),
    /// The caller asked to stop (Ctrl-C); everything has been torn down (→ the pending
    /// Python exception, normally `KeyboardInterrupt`).
    Interrupted,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn invalid(param: &'static str, message: impl Into<String>) -> Self {
        Error::Invalid {
            param,
            message: message.into(),
        }
    }

    pub fn unexpected(message: impl Into<String>) -> Self {
        Error::Type(message.into())
    }

    /// The errno of an OS error.
    pub fn errno(&self) -> Option<i32> {
        match self {
            Error::Os { errno, .. } => Some(*errno),
            _ => None,
        }
    }

    /// The current `errno`, with what we were doing and what the user can do about it.
    pub fn last_os(context: impl Into<String>) -> Self {
        Self::os(errno(), context)
    }

    pub fn os(errno: i32, context: impl Into<String>) -> Self {
        let hint = match errno {
            libc::EAGAIN => {
                "the process limit was reached: lower procs/parallel or raise `ulimit -u`"
            }
            libc::EMFILE | libc::ENFILE => {
                "out of file descriptors: lower procs/parallel or raise `ulimit -n`"
            }
            libc::ENOMEM => "out of memory: lower size_kb, procs or parallel",
            libc::EPERM | libc::EACCES => "not permitted here (container or seccomp policy?)",
            libc::EINVAL => "the kernel rejected the request (CPU offline or outside the cgroup?)",
            _ => "",
        };
        Error::Os {
            errno,
            context: context.into(),
            hint,
        }
    }
}

pub fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Invalid { param, message } => write!(f, "{param}: {message}"),
            Error::Os {
                errno,
                context,
                hint,
            } => {
                let os = std::io::Error::from_raw_os_error(*errno);
                write!(f, "{context}: {os}")?;
                if !hint.is_empty() {
                    write!(f, " (hint: {hint})")?;
                }
                Ok(())
            }
            Error::Memory {
                need,
                available,
                context,
            } => {
                let mib = |b: &u64| *b as f64 / (1u64 << 20) as f64;
                write!(
                    f,
                    "{context}: needs about {:.0} MiB but only {:.0} MiB is available \
                     (hint: lower size_kb, procs or parallel, or raise the memory limit)",
                    mib(need),
                    mib(available)
                )
            }
            Error::Peer(msg) | Error::Type(msg) => f.write_str(msg),
            Error::Interrupted => f.write_str("interrupted"),
        }
    }
}

impl std::error::Error for Error {}

/// The allowed range of one parameter, and the error that names it: `lo..=hi`, or above `lo`
/// up to `hi` where `lo` itself means nothing (a duration of 0 s). Every range of a run is one
/// of the `Limit`s below.
#[derive(Debug, Clone, Copy)]
pub struct Limit<T> {
    pub param: &'static str,
    pub lo: T,
    pub hi: T,
    pub lo_excluded: bool,
    /// What the numbers are, for the message: " seconds", "".
    pub unit: &'static str,
}

impl<T: Copy> Limit<T> {
    /// `lo..=hi`.
    pub const fn between(param: &'static str, lo: T, hi: T) -> Self {
        Limit {
            param,
            lo,
            hi,
            lo_excluded: false,
            unit: "",
        }
    }

    /// Above `lo`, up to `hi`.
    pub const fn above(param: &'static str, lo: T, hi: T) -> Self {
        Limit {
            lo_excluded: true,
            ..Self::between(param, lo, hi)
        }
    }

    pub const fn in_unit(self, unit: &'static str) -> Self {
        Limit { unit, ..self }
    }
}

impl<T: PartialOrd + Copy + std::fmt::Display> Limit<T> {
    /// `value` if it lies in the range (NaN never does), else an error naming the parameter
    /// and the range.
    pub fn check(&self, value: T) -> Result<T> {
        let above_lo = if self.lo_excluded {
            value > self.lo
        } else {
            value >= self.lo
        };
        if above_lo && value <= self.hi {
            Ok(value)
        } else {
            Err(self.outside(value))
        }
    }

    pub fn outside(&self, value: impl std::fmt::Display) -> Error {
        let (lo, hi, unit) = (self.lo, self.hi, self.unit);
        let range = if self.lo_excluded {
            format!("> {lo} and <= {hi}{unit}")
        } else {
            format!("between {lo} and {hi}{unit}")
        };
        Error::invalid(self.param, format!("must be {range}, got {value}"))
    }
}

impl Limit<u64> {
    /// The same for a signed count as a caller typed it (a negative one is outside too).
    pub fn count(&self, value: i64) -> Result<usize> {
        match u64::try_from(value) {
            Ok(v) => self.check(v).map(|v| v as usize),
            Err(_) => Err(self.outside(value)),
        }
    }
}
