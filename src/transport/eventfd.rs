//! An eventfd per participant: the 8-byte counter carries token + 1 (zero means "nothing").

use super::fd::{FdRing, Kind};
use crate::error::{Error, Result};
use crate::wire::STOP;
use std::os::fd::RawFd;

pub struct EventfdKind;
pub type Eventfd = FdRing<EventfdKind>;

/// eventfd adds what is written: STOP is encoded so large that a STOP written on top of an
/// unread token still reads as STOP.
const STOP_RAW: u64 = 1 << 40;

impl Kind for EventfdKind {
    const NAME: &'static str = "eventfd";
    const WIDTH: usize = 8;

    fn create() -> Result<(RawFd, RawFd)> {
        // SAFETY: plain syscall.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(Error::last_os("creating the ring's eventfds"));
        }
        Ok((fd, fd))
    }

    fn encode(token: u32) -> u64 {
        if token == STOP {
            STOP_RAW
        } else {
            u64::from(token) + 1
        }
    }

    fn decode(raw: u64) -> u32 {
        if raw >= STOP_RAW {
            STOP
        } else {
            (raw - 1) as u32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::checks;
    use super::Eventfd;

    #[test]
    fn round_trip() {
        checks::round_trip::<Eventfd>();
    }

    #[test]
    fn poison_wakes_a_waiter() {
        checks::poison_wakes_a_waiter::<Eventfd>();
    }
}
