//! io_uring's futex operations (Linux >= 6.7): the futex transport's word per participant,
//! but a participant sleeps by submitting IORING_OP_FUTEX_WAIT to its own ring and waiting
//! for the completion, and the sender wakes it with IORING_OP_FUTEX_WAKE submitted to the
//! sender's own ring (participant `i` is woken by `i - 1`). A successful wake posts no
//! completion (`IOSQE_CQE_SKIP_SUCCESS`); a failed one is reaped, and reported, by its sender
//! when it next waits.

use super::futex::FutexWake;
use super::futex_waitv::{FUTEX2_PRIVATE, FUTEX2_SIZE_U32};
use super::probe::{self, Need};
use super::uring;
use super::word::{Wake, WordRing};
use super::{Hop, HopError, Scope};
use crate::error::Result;
use crate::wire::EMPTY;
use io_uring::{opcode, squeue, IoUring};
use std::os::fd::RawFd;
use std::sync::atomic::AtomicU32;

/// `user_data` of a participant's own wait, and of its wakes (seen only when one failed).
const WAIT: u64 = 1;
const WAKE: u64 = 2;
/// `FUTEX_BITSET_MATCH_ANY`: wait for, and wake, any waiter.
const ANY: u64 = u32::MAX as u64;

pub struct UringFutexWake {
    rings: Vec<IoUring>,
    flags: u32,
    /// How a thread that is no participant wakes one: a FUTEX_WAKE syscall, which wakes an
    /// io_uring futex wait like any other waiter on the word.
    outside: FutexWake,
}
pub type UringFutex = WordRing<UringFutexWake>;

impl Wake for UringFutexWake {
    const NAME: &'static str = "uring_futex";

    fn new(n: usize, scope: Scope) -> Result<Self> {
        probe::require(Self::NAME, &[Need::IoUring, Need::UringFutex])?;
        Ok(UringFutexWake {
            rings: uring::rings(n)?,
            flags: FUTEX2_SIZE_U32
                | match scope {
                    Scope::Processes => 0,
                    Scope::Threads => FUTEX2_PRIVATE,
                },
            outside: FutexWake::new(n, scope)?,
        })
    }

    fn fds(&self, i: usize, _n: usize) -> [RawFd; 2] {
        [uring::fd(&self.rings[i]), -1]
    }

    fn wait(&self, i: usize, word: &AtomicU32) -> Hop<()> {
        let ring = &self.rings[i];
        let wait = opcode::FutexWait::new(word.as_ptr(), u64::from(EMPTY), ANY, self.flags)
            .build()
            .user_data(WAIT);
        uring::submit(ring, &wait)?;
        // Until the wait itself completes (woken, or the word no longer EMPTY: -EAGAIN): it
        // stays armed otherwise, and a second one would be submitted beside it.
        loop {
            let done = uring::reap(ring, |cqe| match (cqe.user_data(), cqe.result()) {
                (WAIT, res) if res == 0 || res == -libc::EAGAIN => Some(Ok(())),
                (_, res) if res < 0 => Some(Err(HopError::Errno(-res))),
                _ => None,
            });
            match done {
                Some(result) => return result,
                None => uring::wait(ring)?,
            }
        }
    }

    fn wake(&self, i: usize, word: &AtomicU32) -> Hop<()> {
        let n = self.rings.len();
        let wake = opcode::FutexWake::new(word.as_ptr(), 1, ANY, self.flags)
            .build()
            .flags(squeue::Flags::SKIP_SUCCESS)
            .user_data(WAKE);
        uring::submit(&self.rings[(i + n - 1) % n], &wake)
    }

    fn wake_from_outside(&self, i: usize, word: &AtomicU32) -> Hop<()> {
        self.outside.wake(i, word)
    }
}

#[cfg(test)]
mod tests {
    use super::super::checks;
    use super::UringFutex;

    #[test]
    fn round_trip() {
        checks::round_trip::<UringFutex>();
    }

    #[test]
    fn poison_wakes_a_waiter() {
        checks::poison_wakes_a_waiter::<UringFutex>();
    }
}
