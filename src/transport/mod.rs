//! How the token travels from one participant to the next. A transport owns one inbox per
//! participant; engines move the token with `send`/`recv` and never look inside.
//!
//! Adding a transport means one file here, its `mod` line, and one line in the `transports!`
//! table below.

pub mod condvar;
pub mod eventfd;
pub mod fd;
pub mod futex;
pub mod futex_waitv;
pub mod msg_ring;
pub mod pipe;
pub mod probe;
pub mod signal;
pub mod socket;
mod uring;
pub mod uring_futex;
pub mod uring_read;
pub mod word;
pub mod yielding;

use crate::error::{Error, Result};
use crate::sys::Blocked;
use crate::wire::STOP;
use std::os::fd::RawFd;

/// Why a hop failed: the peer is gone (EOF, EPIPE), or another errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HopError {
    Closed,
    Errno(i32),
}

pub type Hop<T> = std::result::Result<T, HopError>;

/// Whether the participants are processes (shared memory must be `MAP_SHARED` and futexes
/// process-shared) or threads of one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Processes,
    Threads,
}

pub trait Transport: Sized + Send + Sync + 'static {
    const NAME: &'static str;
    /// Only meaningful when every participant shares one CPU (no wake-up path at all).
    const SINGLE_CPU_ONLY: bool = false;
    /// A waiting participant stays runnable (it spins or yields) instead of sleeping: under
    /// a real-time policy it would hold its CPU against every fair task.
    const BUSY_WAITS: bool = false;

    /// Inboxes for `n` participants, made before any participant starts (so before `fork`).
    fn ring(n: usize, scope: Scope) -> Result<Self>;

    /// Called by participant `i` on its own thread before its first `recv`. Raw syscalls
    /// only. A transport that needs per-thread state (a blocked signal) returns its guard.
    fn attach(&self, _i: usize) -> Option<Blocked> {
        None
    }

    /// Participant `i` waits for the token. Raw syscalls only (or pthread calls that are
    /// futex operations and never allocate): it runs in forked children.
    fn recv(&self, i: usize) -> Hop<u32>;

    /// Puts `token` into participant `i`'s inbox. Raw syscalls only.
    fn send(&self, i: usize, token: u32) -> Hop<()>;

    /// What an errno of `send`/`recv` means for this transport and what the user can do,
    /// where that is more than the errno's own text (a limit peculiar to the transport).
    fn explain(_errno: i32) -> Option<&'static str> {
        None
    }

    /// The descriptors participant `i` of an `n`-ring uses; a forked child closes all others.
    fn fds(&self, _i: usize, _n: usize) -> [RawFd; 2] {
        [-1, -1]
    }

    /// In the caller, once participants run elsewhere: drop what only they use, so that a
    /// participant's death shows up as EOF/EPIPE at its neighbours instead of a hang.
    fn keep_only(&mut self, _i: usize, _n: usize) {}

    /// Whether a token sits in participant `i`'s inbox, not yet taken: read by the watchdog
    /// from another thread, so that a ring that stopped with a token delivered but its
    /// receiver asleep is named a lost wake-up. `false` where the inbox cannot be looked into.
    fn pending(&self, _i: usize) -> bool {
        false
    }

    /// Puts STOP into participant `i`'s inbox from a thread that is no participant (the
    /// watchdog, a teardown) while participants may still run. A transport whose `send` uses
    /// the sender's own resources (an io_uring) overrides it.
    fn stop_from_outside(&self, i: usize) -> Hop<()> {
        self.send(i, STOP)
    }

    /// Puts STOP into every inbox, waking whoever waits: how a run is torn down when a
    /// participant cannot be killed (a thread) or a transport has no EOF (futex, signal, condvar).
    fn poison(&self, n: usize) {
        for i in 0..n {
            let _ = self.stop_from_outside(i);
        }
    }
}

pub(crate) fn errno_hop<T>() -> Hop<T> {
    Err(HopError::Errno(crate::error::errno()))
}

/// Every transport, one line each: `module::Type`, where `module` is a file of this folder and
/// `Type` implements `Transport`. (The modules are declared above, where rustfmt sees them.)
/// A line makes the variant `TransportKind::Type`, whose name is `Transport::NAME`, whose
/// one-CPU rule is `Transport::SINGLE_CPU_ONLY`, and which `TransportKind::dispatch` runs
/// generic code for. The first line is the process and thread engines' default.
macro_rules! transports {
    ($($module:ident :: $kind:ident),+ $(,)?) => {
        /// How the token travels: one of the transports, or `Resume`, the fibers' own.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum TransportKind {
            $($kind,)+
            /// Fibers hand the token over in the switch itself.
            Resume,
        }

        impl TransportKind {
            /// Every transport that is a `Transport`: what processes and threads can use.
            pub const BETWEEN_TASKS: &'static [TransportKind] = &[$(TransportKind::$kind),+];
            pub const ALL: &'static [TransportKind] =
                &[$(TransportKind::$kind,)+ TransportKind::Resume];

            pub fn name(self) -> &'static str {
                match self {
                    $(TransportKind::$kind => <$module::$kind as Transport>::NAME,)+
                    TransportKind::Resume => "resume",
                }
            }

            pub fn single_cpu_only(self) -> bool {
                match self {
                    $(TransportKind::$kind => <$module::$kind as Transport>::SINGLE_CPU_ONLY,)+
                    TransportKind::Resume => false,
                }
            }

            /// A waiting participant stays runnable (`Transport::BUSY_WAITS`).
            pub fn busy_waits(self) -> bool {
                match self {
                    $(TransportKind::$kind => <$module::$kind as Transport>::BUSY_WAITS,)+
                    TransportKind::Resume => false,
                }
            }

            /// Runs `f` with the `Transport` this names; `None` for `Resume`, which is none.
            pub fn dispatch<F: WithTransport>(self, f: F) -> Option<F::Output> {
                match self {
                    $(TransportKind::$kind => Some(f.call::<$module::$kind>()),)+
                    TransportKind::Resume => None,
                }
            }
        }
    };
}

transports! {
    pipe::Pipe,
    eventfd::Eventfd,
    futex::Futex,
    socket::Socket,
    signal::Signal,
    yielding::Yield,
    condvar::Condvar,
    futex_waitv::FutexWaitv,
    uring_futex::UringFutex,
    msg_ring::MsgRing,
    uring_read::UringRead,
}

/// Code generic over the transport, run by `TransportKind::dispatch` for the one named.
pub trait WithTransport {
    type Output;
    fn call<T: Transport>(self) -> Self::Output;
}

impl TransportKind {
    pub fn parse(name: &str) -> Result<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|t| t.name() == name)
            .ok_or_else(|| {
                let names: Vec<_> = Self::ALL.iter().map(|t| t.name()).collect();
                Error::invalid(
                    "transport",
                    format!("unknown transport {name:?}; expected one of {names:?}"),
                )
            })
    }
}

/// Checks every transport runs: a token's round trip between two threads, a poisoned ring
/// waking its waiter, and (for descriptor transports) a closed inbox seen as `Closed`.
#[cfg(test)]
pub(crate) mod checks {
    use super::{HopError, Scope, Transport};
    use crate::sys::Blocked;
    use crate::wire::{advance, STOP};
    use std::sync::Barrier;

    pub fn round_trip<T: Transport>() {
        for scope in [Scope::Threads, Scope::Processes] {
            let t = T::ring(2, scope).unwrap();
            let ready = Barrier::new(2);
            std::thread::scope(|s| {
                let peer = s.spawn(|| {
                    let _registered = t.attach(1);
                    ready.wait();
                    let token = t.recv(1).unwrap();
                    t.send(0, advance(token)).unwrap();
                    token
                });
                let _registered = t.attach(0);
                ready.wait();
                t.send(1, 41).unwrap();
                assert_eq!(t.recv(0), Ok(42), "{} {scope:?}", T::NAME);
                assert_eq!(peer.join().unwrap(), 41);
            });
        }
    }

    pub fn poison_wakes_a_waiter<T: Transport>() {
        let t = T::ring(2, Scope::Threads).unwrap();
        let ready = Barrier::new(2);
        std::thread::scope(|s| {
            let peer = s.spawn(|| {
                let _registered = t.attach(1);
                ready.wait();
                t.recv(1)
            });
            ready.wait();
            t.poison(2);
            assert_eq!(peer.join().unwrap(), Ok(STOP), "{}", T::NAME);
        });
    }

    /// Participant 1 ran elsewhere and is gone: its ends are closed here.
    pub fn closed_inbox_is_seen<T: Transport>() {
        let _sigpipe = Blocked::new(libc::SIGPIPE);
        let mut t = T::ring(2, Scope::Processes).unwrap();
        t.keep_only(0, 2);
        assert_eq!(t.recv(0), Err(HopError::Closed), "{}", T::NAME);
        assert_eq!(t.send(1, 0), Err(HopError::Closed), "{}", T::NAME);
    }
}
