//! The 1990 signal ping-pong, with today's calls: the token goes into the receiver's word,
//! then `tgkill` sends a real-time signal to the receiver's thread, which sleeps in
//! `sigwaitinfo` with the signal blocked. No handler is ever installed, and the signal is
//! thread-directed, so no other thread of the caller can see it.
//!
//! Real-time signals queue against RLIMIT_SIGPENDING (`ulimit -i`), counted per user: when it
//! is reached, `tgkill` fails with EAGAIN and the hop fails with that cause named. STOP must
//! get through all the same, or a ring could not be torn down: when its signal cannot be
//! queued it goes as `SIGSTKFLT`, a standard signal (the kernel delivers those without queue
//! space) that nothing else uses, blocked and awaited beside the token's.

use super::word::{Wake, WordRing};
use super::{Hop, HopError, Scope};
use crate::error::Result;
use crate::sys::{self, Blocked, Shared};
use crate::wire::STOP;
use std::ptr;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

pub struct SignalWake {
    sig: i32,
    /// Thread group and thread id of each participant, registered in `attach`.
    tgid: Shared<AtomicI32>,
    tid: Shared<AtomicI32>,
}
pub type Signal = WordRing<SignalWake>;

/// SIGRTMIN + 7: clear of glibc's own real-time signals and of SIGUSR1/2, which
/// applications commonly handle. Real-time signals queue, so none is lost.
fn signal_number() -> i32 {
    libc::SIGRTMIN() + 7
}

/// What carries STOP when the queue is full: unused by the kernel and by common runtimes,
/// and a standard signal, so sending it never fails for want of queue space.
const STOP_FALLBACK: i32 = libc::SIGSTKFLT;

impl SignalWake {
    fn tgkill(&self, i: usize, sig: i32) -> i64 {
        let (tgid, tid) = (
            self.tgid[i].load(Ordering::Relaxed),
            self.tid[i].load(Ordering::Acquire),
        );
        // SAFETY: tgkill with ids the receiver registered; a stale id fails with ESRCH
        // (the tgid check guards against a recycled tid).
        unsafe { libc::syscall(libc::SYS_tgkill, tgid, tid, sig) }
    }
}

impl Wake for SignalWake {
    const NAME: &'static str = "signal";
    /// Real-time signals queue, up to RLIMIT_SIGPENDING: consume one per token.
    const WAIT_FIRST: bool = true;

    fn new(n: usize, _scope: Scope) -> Result<Self> {
        Ok(SignalWake {
            sig: signal_number(),
            tgid: Shared::new(n)?,
            tid: Shared::new(n)?,
        })
    }

    fn attach(&self, i: usize) -> Option<Blocked> {
        let guard = Blocked::all(&[self.sig, STOP_FALLBACK]);
        // SAFETY: no arguments.
        self.tgid[i].store(unsafe { libc::getpid() }, Ordering::Relaxed);
        self.tid[i].store(sys::gettid(), Ordering::Release);
        Some(guard)
    }

    fn wait(&self, _i: usize, _word: &AtomicU32) -> Hop<()> {
        let set = sys::sigset(&[self.sig, STOP_FALLBACK]);
        // SAFETY: a signal set built locally; sigwaitinfo with a null info pointer.
        let rc = unsafe { libc::sigwaitinfo(&set, ptr::null_mut()) };
        if rc == -1 && crate::error::errno() != libc::EINTR {
            return super::errno_hop();
        }
        Ok(())
    }

    fn wake(&self, i: usize, word: &AtomicU32) -> Hop<()> {
        let mut rc = self.tgkill(i, self.sig);
        if rc == -1 && crate::error::errno() == libc::EAGAIN && word.load(Ordering::Acquire) == STOP
        {
            rc = self.tgkill(i, STOP_FALLBACK);
        }
        if rc == -1 {
            return match crate::error::errno() {
                libc::ESRCH => Err(HopError::Closed),
                e => Err(HopError::Errno(e)),
            };
        }
        Ok(())
    }

    fn explain(errno: i32) -> Option<&'static str> {
        (errno == libc::EAGAIN).then_some(
            "queued-signal limit reached: every token in flight is a queued real-time signal, \
             and this user's limit (RLIMIT_SIGPENDING, `ulimit -i`) is used up; raise it or \
             use another transport",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::checks;
    use super::Signal;

    #[test]
    fn round_trip() {
        checks::round_trip::<Signal>();
    }

    #[test]
    fn poison_wakes_a_waiter() {
        checks::poison_wakes_a_waiter::<Signal>();
    }
}
