//! lmbench's pipes, read through io_uring (IORING_OP_READ, Linux >= 5.6): each participant
//! owns a ring with two registered files, its inbox's read end and the next inbox's write end;
//! it waits for the token by submitting a read of its pipe and sleeping in `io_uring_enter`
//! until the read completes, and passes it on with a write submitted to its own ring. The
//! pipe is the same as `pipe`'s; what differs is the wake-up: a completion posted when the
//! pipe's data arrives, against a task sleeping in `read(2)`.
//!
//! The files are registered before `fork`, so a participant keeps only its ring's descriptor.
//! The rings and the caller's ends outlive a dead participant, so there is no EOF: the
//! watchdog notices a death, and the ring is ended with STOP written by the caller.

use super::pipe::Pipe;
use super::probe::{self, Need};
use super::uring;
use super::{Hop, HopError, Scope, Transport};
use crate::error::{Error, Result};
use io_uring::{opcode, types, IoUring};
use std::os::fd::RawFd;
use std::sync::atomic::AtomicU32;

/// `user_data` of a read (the token's arrival) and of a write (seen only to be reaped, or
/// when it failed).
const READ: u64 = 1;
const WRITTEN: u64 = 2;
/// The registered files of each ring: its own inbox's read end, the next inbox's write end.
const INBOX: u32 = 0;
const NEXT: u32 = 1;

pub struct UringRead {
    /// The pipes themselves: what the rings' files are, and the caller's ends for STOP.
    pipes: Pipe,
    rings: Vec<IoUring>,
    /// Where each participant's read lands: its own word (a forked participant's own copy).
    landing: Box<[AtomicU32]>,
    /// What each participant's write sends: its own word, read by the kernel on submission.
    outgoing: Box<[AtomicU32]>,
}

impl Transport for UringRead {
    const NAME: &'static str = "uring_read";

    fn ring(n: usize, scope: Scope) -> Result<Self> {
        probe::require(Self::NAME, &[Need::IoUring, Need::UringRead])?;
        let pipes = Pipe::ring(n, scope)?;
        let rings = uring::rings(n)?;
        for (i, ring) in rings.iter().enumerate() {
            let [inbox, next] = pipes.fds(i, n);
            ring.submitter()
                .register_files(&[inbox, next])
                .map_err(|e| {
                    Error::os(
                        e.raw_os_error().unwrap_or(libc::EINVAL),
                        format!("registering the pipes of participant {i} with its io_uring"),
                    )
                })?;
        }
        let words = || (0..n).map(|_| AtomicU32::new(0)).collect();
        Ok(UringRead {
            pipes,
            rings,
            landing: words(),
            outgoing: words(),
        })
    }

    fn recv(&self, i: usize) -> Hop<u32> {
        let ring = &self.rings[i];
        let width = std::mem::size_of::<u32>() as u32;
        let read = opcode::Read::new(types::Fixed(INBOX), self.landing[i].as_ptr().cast(), width)
            .build()
            .user_data(READ);
        uring::submit(ring, &read)?;
        loop {
            let got = uring::reap(ring, |cqe| match (cqe.user_data(), cqe.result()) {
                (READ, 4) => Some(Ok(())),
                (READ, 0) => Some(Err(HopError::Closed)),
                (READ, res) if res > 0 => Some(Err(HopError::Errno(libc::EPROTO))),
                (_, res) if res < 0 => Some(Err(HopError::Errno(-res))),
                _ => None,
            });
            match got {
                Some(Ok(())) => {
                    return Ok(self.landing[i].load(std::sync::atomic::Ordering::Relaxed))
                }
                Some(Err(e)) => return Err(e),
                None => uring::wait(ring)?,
            }
        }
    }

    /// Sent by participant `i - 1` through its own ring, to `i`'s pipe.
    fn send(&self, i: usize, token: u32) -> Hop<()> {
        let n = self.rings.len();
        let from = (i + n - 1) % n;
        self.outgoing[from].store(token, std::sync::atomic::Ordering::Relaxed);
        let width = std::mem::size_of::<u32>() as u32;
        let write = opcode::Write::new(
            types::Fixed(NEXT),
            self.outgoing[from].as_ptr().cast_const().cast(),
            width,
        )
        .build()
        .user_data(WRITTEN);
        // Its completion lands in the sender's own queue and is reaped at its next `recv`.
        uring::submit(&self.rings[from], &write)
    }

    fn fds(&self, i: usize, _n: usize) -> [RawFd; 2] {
        [uring::fd(&self.rings[i]), -1]
    }

    fn pending(&self, i: usize) -> bool {
        let mut queued: libc::c_int = 0;
        let [inbox, _] = self.pipes.fds(i, self.rings.len());
        // SAFETY: FIONREAD into a local int on a descriptor this value owns.
        let unread = unsafe { libc::ioctl(inbox, libc::FIONREAD, &mut queued) } == 0 && queued > 0;
        unread || uring::queued(&self.rings[i]) > 0
    }

    fn stop_from_outside(&self, i: usize) -> Hop<()> {
        self.pipes.send(i, crate::wire::STOP)
    }
}

#[cfg(test)]
mod tests {
    use super::super::checks;
    use super::UringRead;

    #[test]
    fn round_trip() {
        checks::round_trip::<UringRead>();
    }

    #[test]
    fn poison_wakes_a_waiter() {
        checks::poison_wakes_a_waiter::<UringRead>();
    }
}
