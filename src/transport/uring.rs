//! One io_uring per participant, made before any participant starts (so before `fork`, which
//! shares the rings' queues with the children), and the few queue operations the io_uring
//! transports need: push one entry and submit it, wait for completions, reap them. Each
//! participant submits only to its own ring and reaps only its own ring's completions, so no
//! queue ever has two producers or two consumers; a thread that is no participant (teardown)
//! uses a ring of its own under a lock.
//!
//! After `fork` these are raw `io_uring_enter` calls and loads and stores into the mapped
//! queues: nothing allocates.

use super::{Hop, HopError};
use crate::error::{Error, Result};
use io_uring::{cqueue, squeue, IoUring};
use std::os::fd::{AsRawFd, RawFd};

/// Submission entries per ring: a participant has at most two requests in flight (its wait,
/// its send), so eight leaves room; the completion queue is twice that.
const ENTRIES: u32 = 8;

pub fn new_ring(what: &str) -> Result<IoUring> {
    IoUring::new(ENTRIES).map_err(|e| {
        Error::os(
            e.raw_os_error().unwrap_or(libc::ENOSYS),
            format!("creating the io_uring of {what}"),
        )
    })
}

pub fn rings(n: usize) -> Result<Vec<IoUring>> {
    (0..n)
        .map(|i| new_ring(&format!("participant {i}")))
        .collect()
}

pub fn fd(ring: &IoUring) -> RawFd {
    ring.as_raw_fd()
}

/// Pushes `entry` onto `ring`'s submission queue and submits it. Only the ring's owner calls
/// this (see the module comment).
pub fn submit(ring: &IoUring, entry: &squeue::Entry) -> Hop<()> {
    // SAFETY: the owner is the only producer of this ring's submission queue, and the entry's
    // pointers (a futex word in shared memory, a ring descriptor) outlive the request.
    unsafe {
        let mut sq = ring.submission_shared();
        if sq.push(entry).is_err() {
            return Err(HopError::Errno(libc::EBUSY));
        }
    }
    loop {
        match ring.submit() {
            Ok(_) => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            Err(e) => return Err(HopError::Errno(e.raw_os_error().unwrap_or(libc::EIO))),
        }
    }
}

/// Sleeps in `io_uring_enter` until `ring` has a completion (a signal returns early).
pub fn wait(ring: &IoUring) -> Hop<()> {
    // SAFETY: no submissions, wait for one completion, no argument.
    let rc = unsafe {
        ring.submitter()
            .enter::<libc::sigset_t>(0, 1, io_uring::EnterFlags::GETEVENTS.bits(), None)
    };
    match rc {
        Ok(_) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EINTR) => Ok(()),
        Err(e) => Err(HopError::Errno(e.raw_os_error().unwrap_or(libc::EIO))),
    }
}

/// Completions waiting in `ring`'s queue, looked at from any thread without consuming them.
pub fn queued(ring: &IoUring) -> usize {
    // SAFETY: only the head and tail are read; the queue is forgotten, not dropped, so its
    // (possibly stale) head is never stored back over the owner's.
    let cq = unsafe { ring.completion_shared() };
    let len = cq.len();
    std::mem::forget(cq);
    len
}

/// Reaps completions of `ring` one at a time until `take` returns `Some`, leaving the rest
/// queued; `None` once the queue is empty.
pub fn reap<T>(ring: &IoUring, mut take: impl FnMut(&cqueue::Entry) -> Option<T>) -> Option<T> {
    // SAFETY: the owner is the only consumer of this ring's completion queue; the head is
    // stored back (dropping `cq`) after exactly the entries consumed.
    let mut cq = unsafe { ring.completion_shared() };
    for cqe in &mut cq {
        if let Some(t) = take(&cqe) {
            return Some(t);
        }
    }
    None
}
