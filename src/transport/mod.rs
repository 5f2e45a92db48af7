//! How the token travels from one participant to the next. A transport owns one inbox per
//! participant; engines move the token with `send`/`recv` and never look inside.
//!
//! Adding a transport means one file here and one variant in `engine::TransportKind`.

pub mod eventfd;
pub mod fd;
pub mod futex;
pub mod pipe;
pub mod signal;
pub mod socket;
pub mod word;
pub mod yielding;

use crate::error::Result;
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

    /// Inboxes for `n` participants, made before any participant starts (so before `fork`).
    fn ring(n: usize, scope: Scope) -> Result<Self>;

    /// Called by participant `i` on its own thread before its first `recv`. Raw syscalls
    /// only. A transport that needs per-thread state (a blocked signal) returns its guard.
    fn attach(&self, _i: usize) -> Option<Blocked> {
        None
    }

    /// Participant `i` waits for the token. Raw syscalls only: it runs in forked children.
    fn recv(&self, i: usize) -> Hop<u32>;

    /// Puts `token` into participant `i`'s inbox. Raw syscalls only.
    fn send(&self, i: usize, token: u32) -> Hop<()>;

    /// The descriptors participant `i` of an `n`-ring uses; a forked child closes all others.
    fn fds(&self, _i: usize, _n: usize) -> [RawFd; 2] {
        [-1, -1]
    }

    /// In the caller, once participants run elsewhere: drop what only they use, so that a
    /// participant's death shows up as EOF/EPIPE at its neighbours instead of a hang.
    fn keep_only(&mut self, _i: usize, _n: usize) {}

    /// Puts STOP into every inbox, waking whoever waits: how a run is torn down when a
    /// participant cannot be killed (a thread) or a transport has no EOF (futex, signal).
    fn poison(&self, n: usize) {
        for i in 0..n {
            let _ = self.send(i, STOP);
        }
    }
}

pub(crate) fn errno_hop<T>() -> Hop<T> {
    Err(HopError::Errno(crate::error::errno()))
}
