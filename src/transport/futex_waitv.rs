//! futex2's `futex_waitv` (Linux >= 5.16): the futex transport's word per participant, but
//! each participant sleeps in `futex_waitv` on a vector of one entry, its own word, and is
//! woken by FUTEX_WAKE on that word (the two interoperate on 32-bit futexes). What it
//! measures is the futex2 wait path against the classic one.

use super::futex::FutexWake;
use super::probe::{self, Need};
use super::word::{Wake, WordRing};
use super::{Hop, HopError, Scope};
use crate::error::Result;
use crate::wire::EMPTY;
use std::sync::atomic::AtomicU32;

/// `FUTEX2_SIZE_U32` and `FUTEX2_PRIVATE` of the futex2 ABI (not in the libc crate).
pub const FUTEX2_SIZE_U32: u32 = 0x02;
pub const FUTEX2_PRIVATE: u32 = 128;

/// `struct futex_waitv` of the kernel ABI.
#[repr(C)]
pub struct Waiter {
    val: u64,
    uaddr: u64,
    flags: u32,
    reserved: u32,
}

impl Waiter {
    /// Waits while `word` holds `val`; `private` is 0 or `FUTEX2_PRIVATE`.
    pub fn new(word: &AtomicU32, val: u32, private: u32) -> Self {
        Waiter {
            val: u64::from(val),
            uaddr: word.as_ptr() as u64,
            flags: FUTEX2_SIZE_U32 | private,
            reserved: 0,
        }
    }

    /// One `futex_waitv` on this single entry, without timeout: the errno on failure.
    pub fn wait(&self) -> std::result::Result<(), i32> {
        // SAFETY: one valid `futex_waitv` entry naming a live, aligned u32; no timeout.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_futex_waitv,
                self as *const Waiter,
                1u32,
                0u32,
                std::ptr::null::<libc::timespec>(),
                libc::CLOCK_MONOTONIC,
            )
        };
        if rc == -1 {
            Err(crate::error::errno())
        } else {
            Ok(())
        }
    }
}

pub struct WaitvWake {
    private: u32,
    /// The waker: FUTEX_WAKE with the same privacy.
    wake: FutexWake,
}
pub type FutexWaitv = WordRing<WaitvWake>;

impl Wake for WaitvWake {
    const NAME: &'static str = "futex_waitv";

    fn new(n: usize, scope: Scope) -> Result<Self> {
        probe::require(Self::NAME, &[Need::FutexWaitv])?;
        Ok(WaitvWake {
            private: match scope {
                Scope::Processes => 0,
                Scope::Threads => FUTEX2_PRIVATE,
            },
            wake: FutexWake::new(n, scope)?,
        })
    }

    fn wait(&self, _i: usize, word: &AtomicU32) -> Hop<()> {
        match Waiter::new(word, EMPTY, self.private).wait() {
            // EAGAIN: the word was filled before we slept; EINTR: a signal. Both recheck.
            Ok(()) | Err(libc::EAGAIN | libc::EINTR) => Ok(()),
            Err(e) => Err(HopError::Errno(e)),
        }
    }

    fn wake(&self, i: usize, word: &AtomicU32) -> Hop<()> {
        self.wake.wake(i, word)
    }
}

#[cfg(test)]
mod tests {
    use super::super::checks;
    use super::FutexWaitv;

    #[test]
    fn round_trip() {
        checks::round_trip::<FutexWaitv>();
    }

    #[test]
    fn poison_wakes_a_waiter() {
        checks::poison_wakes_a_waiter::<FutexWaitv>();
    }
}
