//! A Unix stream socketpair per participant, 4-byte token: the pipe ring through the
//! socket layer.

use super::fd::{FdRing, Kind};
use crate::error::{Error, Result};
use std::os::fd::RawFd;

pub struct SocketKind;
pub type Socket = FdRing<SocketKind>;

impl Kind for SocketKind {
    const NAME: &'static str = "socket";
    const WIDTH: usize = 4;

    fn create() -> Result<(RawFd, RawFd)> {
        let mut sv = [0; 2];
        // SAFETY: sv is a valid 2-int array.
        let rc = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                0,
                sv.as_mut_ptr(),
            )
        };
        if rc != 0 {
            return Err(Error::last_os("creating the ring's socketpairs"));
        }
        Ok((sv[0], sv[1]))
    }
}

#[cfg(test)]
mod tests {
    use super::super::checks;
    use super::Socket;

    #[test]
    fn round_trip() {
        checks::round_trip::<Socket>();
    }

    #[test]
    fn poison_wakes_a_waiter() {
        checks::poison_wakes_a_waiter::<Socket>();
    }

    #[test]
    fn a_closed_inbox_is_seen() {
        checks::closed_inbox_is_seen::<Socket>();
    }
}
