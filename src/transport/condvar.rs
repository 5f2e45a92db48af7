//! A mutex and a condition variable per participant inbox: the handover of the
//! fibers-vs-threads seed's `std::thread`s. The sender locks the receiver's mutex, stores the
//! token, unlocks and signals; the receiver waits on the condition variable while its word is
//! empty. The pthread objects live in `MAP_SHARED` memory made before `fork`, process-shared
//! for processes and private for threads (as `std::sync` is); glibc's lock, wait and signal are
//! futex calls that do not allocate, so a forked child may use them.
//!
//! A dead peer shows no EOF here: the watchdog notices it (`Members::casualty`) and the ring
//! is ended with STOP. Process-shared mutexes are robust, so that a participant killed while
//! holding one leaves it recoverable instead of locked for everyone after it.

use super::{Hop, HopError, Scope, Transport};
use crate::error::{Error, Result};
use crate::sys::{Shared, Zeroed};
use crate::wire::EMPTY;
use std::cell::UnsafeCell;
use std::mem;
use std::sync::atomic::{AtomicU32, Ordering};

/// One participant's inbox: the token word and what guards it.
#[repr(C)]
pub struct Inbox {
    mutex: UnsafeCell<libc::pthread_mutex_t>,
    cond: UnsafeCell<libc::pthread_cond_t>,
    word: AtomicU32,
}

// SAFETY: pthread mutexes and condition variables are made to be used from several threads
// (and, process-shared, several processes) at once; the word is an atomic.
unsafe impl Sync for Inbox {}
// SAFETY: zeroed pthread objects are valid storage (`init` initialises them before use), and
// a zero atomic is a valid value.
unsafe impl Zeroed for Inbox {}

impl Inbox {
    /// Initialises the mutex and condition variable in place, for `scope`.
    fn init(&self, scope: Scope) -> Result<()> {
        let processes = scope == Scope::Processes;
        let pshared = if processes {
            libc::PTHREAD_PROCESS_SHARED
        } else {
            libc::PTHREAD_PROCESS_PRIVATE
        };
        let fail = |rc: i32, what: &str| Error::os(rc, format!("initialising the inbox {what}"));
        // SAFETY: attribute objects are local and destroyed after use; the mutex and condition
        // variable are initialised once, in memory no participant uses yet.
        unsafe {
            let mut ma: libc::pthread_mutexattr_t = mem::zeroed();
            libc::pthread_mutexattr_init(&mut ma);
            libc::pthread_mutexattr_setpshared(&mut ma, pshared);
            if processes {
                libc::pthread_mutexattr_setrobust(&mut ma, libc::PTHREAD_MUTEX_ROBUST);
            }
            let rc = libc::pthread_mutex_init(self.mutex.get(), &ma);
            libc::pthread_mutexattr_destroy(&mut ma);
            if rc != 0 {
                return Err(fail(rc, "mutex"));
            }
            let mut ca: libc::pthread_condattr_t = mem::zeroed();
            libc::pthread_condattr_init(&mut ca);
            libc::pthread_condattr_setpshared(&mut ca, pshared);
            let rc = libc::pthread_cond_init(self.cond.get(), &ca);
            libc::pthread_condattr_destroy(&mut ca);
            if rc != 0 {
                return Err(fail(rc, "condition variable"));
            }
        }
        self.word.store(EMPTY, Ordering::Relaxed);
        Ok(())
    }

    /// A robust mutex whose owner died is taken over: the word is a single store, so what it
    /// guards is always consistent.
    fn recovered(&self, rc: i32) -> Hop<()> {
        match rc {
            0 => Ok(()),
            libc::EOWNERDEAD => {
                // SAFETY: we hold the mutex (EOWNERDEAD returns it locked).
                unsafe { libc::pthread_mutex_consistent(self.mutex.get()) };
                Ok(())
            }
            e => Err(HopError::Errno(e)),
        }
    }

    fn lock(&self) -> Hop<()> {
        // SAFETY: an initialised mutex in live shared memory.
        self.recovered(unsafe { libc::pthread_mutex_lock(self.mutex.get()) })
    }

    fn unlock(&self) {
        // SAFETY: the calling thread holds the mutex.
        unsafe { libc::pthread_mutex_unlock(self.mutex.get()) };
    }
}

pub struct Condvar {
    inboxes: Shared<Inbox>,
}

impl Transport for Condvar {
    const NAME: &'static str = "condvar";

    fn ring(n: usize, scope: Scope) -> Result<Self> {
        let inboxes = Shared::<Inbox>::new(n)?;
        for inbox in inboxes.iter() {
            inbox.init(scope)?;
        }
        Ok(Condvar { inboxes })
    }

    #[inline]
    fn recv(&self, i: usize) -> Hop<u32> {
        let inbox = &self.inboxes[i];
        inbox.lock()?;
        let token = loop {
            let token = inbox.word.swap(EMPTY, Ordering::Relaxed);
            if token != EMPTY {
                break token;
            }
            // SAFETY: both initialised; the calling thread holds the mutex, as wait requires.
            let rc = unsafe { libc::pthread_cond_wait(inbox.cond.get(), inbox.mutex.get()) };
            if let Err(e) = inbox.recovered(rc) {
                inbox.unlock();
                return Err(e);
            }
        };
        inbox.unlock();
        Ok(token)
    }

    #[inline]
    fn send(&self, i: usize, token: u32) -> Hop<()> {
        let inbox = &self.inboxes[i];
        inbox.lock()?;
        inbox.word.store(token, Ordering::Relaxed);
        inbox.unlock();
        // Signalled after unlocking: on one CPU the woken receiver preempts the sender, and
        // would block again on a mutex the sender still held (two switches per hop, not one).
        // No wake-up is lost: a receiver waits only after seeing the word empty under the lock.
        // SAFETY: an initialised condition variable in live shared memory.
        let rc = unsafe { libc::pthread_cond_signal(inbox.cond.get()) };
        match rc {
            0 => Ok(()),
            e => Err(HopError::Errno(e)),
        }
    }
}

// No pthread_*_destroy on drop: glibc's pthread_cond_destroy waits for every waiter to leave,
// and a killed participant never does. The objects hold no resources; unmapping frees them.

#[cfg(test)]
mod tests {
    use super::super::checks;
    use super::Condvar;

    #[test]
    fn round_trip() {
        checks::round_trip::<Condvar>();
    }

    #[test]
    fn poison_wakes_a_waiter() {
        checks::poison_wakes_a_waiter::<Condvar>();
    }
}
