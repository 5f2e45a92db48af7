//! io_uring's IORING_OP_MSG_RING (Linux >= 5.18): each participant owns a ring; the sender
//! submits MSG_RING to its own ring naming the receiver's, which posts a completion carrying
//! the token into the receiver's completion queue; the receiver sleeps in `io_uring_enter`
//! (GETEVENTS) until it is there. No shared word, no futex: the wake-up is the completion
//! queue's wait queue. A successful send posts nothing to the sender
//! (`IOSQE_CQE_SKIP_SUCCESS`); a failed one lands in the sender's own queue and is reported
//! when it next waits.
//!
//! A ring outlives a dead participant (its neighbours hold it), so there is no EOF: the
//! watchdog notices a death and the ring is ended with STOP, sent from a ring of the caller's.

use super::probe::{self, Need};
use super::uring;
use super::{Hop, HopError, Scope, Transport};
use crate::error::Result;
use io_uring::{opcode, squeue, types, IoUring};
use std::os::fd::RawFd;
use std::sync::Mutex;

/// `user_data` of a posted token, and of a send (seen only when it failed).
const TOKEN: u64 = 1;
const SENT: u64 = 2;

pub struct MsgRing {
    rings: Vec<IoUring>,
    /// The caller's own ring, for STOP sent from outside the ring (teardown, watchdog).
    outside: Mutex<IoUring>,
}

impl MsgRing {
    fn message(&self, to: usize, token: u32) -> squeue::Entry {
        // The token travels as the completion's result: its bits, STOP's top bit included.
        opcode::MsgRingData::new(
            types::Fd(uring::fd(&self.rings[to])),
            token as i32,
            TOKEN,
            None,
        )
        .build()
        .user_data(SENT)
    }
}

impl Transport for MsgRing {
    const NAME: &'static str = "msg_ring";

    fn ring(n: usize, _scope: Scope) -> Result<Self> {
        probe::require(Self::NAME, &[Need::IoUring, Need::MsgRing])?;
        Ok(MsgRing {
            rings: uring::rings(n)?,
            outside: Mutex::new(uring::new_ring("the caller")?),
        })
    }

    fn recv(&self, i: usize) -> Hop<u32> {
        let ring = &self.rings[i];
        loop {
            let got = uring::reap(ring, |cqe| match (cqe.user_data(), cqe.result()) {
                (TOKEN, token) => Some(Ok(token as u32)),
                (_, res) if res < 0 => Some(Err(HopError::Errno(-res))),
                _ => None,
            });
            match got {
                Some(result) => return result,
                None => uring::wait(ring)?,
            }
        }
    }

    fn send(&self, i: usize, token: u32) -> Hop<()> {
        let n = self.rings.len();
        let entry = self.message(i, token).flags(squeue::Flags::SKIP_SUCCESS);
        uring::submit(&self.rings[(i + n - 1) % n], &entry)
    }

    fn explain(errno: i32) -> Option<&'static str> {
        (errno == libc::EOVERFLOW).then_some(
            "the receiver's completion queue was full: more tokens were posted to it than it \
             took (a protocol error)",
        )
    }

    fn fds(&self, i: usize, n: usize) -> [RawFd; 2] {
        [
            uring::fd(&self.rings[i]),
            uring::fd(&self.rings[(i + 1) % n]),
        ]
    }

    fn pending(&self, i: usize) -> bool {
        uring::queued(&self.rings[i]) > 0
    }

    fn stop_from_outside(&self, i: usize) -> Hop<()> {
        let ring = self.outside.lock().unwrap_or_else(|p| p.into_inner());
        uring::submit(&ring, &self.message(i, crate::wire::STOP))?;
        // This send posts its own completion: reap it, so the caller's queue never fills.
        loop {
            let sent = uring::reap(&ring, |cqe| Some(cqe.result()));
            match sent {
                Some(res) if res < 0 => return Err(HopError::Errno(-res)),
                Some(_) => return Ok(()),
                None => uring::wait(&ring)?,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::checks;
    use super::MsgRing;

    #[test]
    fn round_trip() {
        checks::round_trip::<MsgRing>();
    }

    #[test]
    fn poison_wakes_a_waiter() {
        checks::poison_wakes_a_waiter::<MsgRing>();
    }
}
