//! How the token travels from one participant to the next. A transport owns one inbox per
//! participant; engines move the token with `send`/`recv` and never look inside.

pub mod pipe;

use crate::error::Result;
use std::os::fd::RawFd;

/// Why a hop failed: the peer is gone (EOF, EPIPE), or another errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HopError {
    Closed,
    Errno(i32),
}

pub type Hop<T> = std::result::Result<T, HopError>;

pub trait Transport: Sized + Send + Sync + 'static {
    const NAME: &'static str;

    /// Inboxes for `n` participants, made before any participant starts (so before `fork`).
    fn ring(n: usize) -> Result<Self>;

    /// Participant `i` waits for the token. Raw syscalls only: it runs in forked children.
    fn recv(&self, i: usize) -> Hop<u32>;

    /// Puts `token` into participant `i`'s inbox. Raw syscalls only.
    fn send(&self, i: usize, token: u32) -> Hop<()>;

    /// The descriptors participant `i` of an `n`-ring uses; a forked child closes all others.
    fn fds(&self, i: usize, n: usize) -> [RawFd; 2];

    /// In the caller, once participants run elsewhere: drop what only they use, so that a
    /// participant's death shows up as EOF/EPIPE at its neighbours instead of a hang.
    fn keep_only(&mut self, i: usize, n: usize);
}
