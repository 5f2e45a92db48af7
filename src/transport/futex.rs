//! A futex word per participant: FUTEX_WAIT while the inbox is empty, FUTEX_WAKE after
//! filling it. Process-shared futexes for forked rings, private ones for threads.

use super::word::{Wake, WordRing};
use super::{errno_hop, Hop, Scope};
use crate::error::Result;
use crate::wire::EMPTY;
use std::ptr;
use std::sync::atomic::AtomicU32;

pub struct FutexWake {
    private: i32,
}
pub type Futex = WordRing<FutexWake>;

impl FutexWake {
    fn futex(&self, word: &AtomicU32, op: i32, val: u32) -> i64 {
        // SAFETY: `word` is a live, aligned u32 in memory shared by every participant.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                op | self.private,
                val,
                ptr::null::<libc::timespec>(),
            )
        }
    }
}

impl Wake for FutexWake {
    const NAME: &'static str = "futex";

    fn new(_n: usize, scope: Scope) -> Result<Self> {
        Ok(FutexWake {
            private: match scope {
                Scope::Processes => 0,
                Scope::Threads => libc::FUTEX_PRIVATE_FLAG,
            },
        })
    }

    fn wait(&self, _i: usize, word: &AtomicU32) -> Hop<()> {
        if self.futex(word, libc::FUTEX_WAIT, EMPTY) == -1 {
            // EAGAIN: the word was filled before we slept; EINTR: a signal. Both recheck.
            match crate::error::errno() {
                libc::EAGAIN | libc::EINTR => {}
                _ => return errno_hop(),
            }
        }
        Ok(())
    }

    fn wake(&self, _i: usize, word: &AtomicU32) -> Hop<()> {
        if self.futex(word, libc::FUTEX_WAKE, 1) == -1 {
            return errno_hop();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::checks;
    use super::Futex;

    #[test]
    fn round_trip() {
        checks::round_trip::<Futex>();
    }

    #[test]
    fn poison_wakes_a_waiter() {
        checks::poison_wakes_a_waiter::<Futex>();
    }
}
