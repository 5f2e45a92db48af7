//! lmbench's transport: one Unix pipe per participant, 4-byte token.

use super::fd::{FdRing, Kind};
use crate::error::{Error, Result};
use std::os::fd::RawFd;

pub struct PipeKind;
pub type Pipe = FdRing<PipeKind>;

impl Kind for PipeKind {
    const NAME: &'static str = "pipe";
    const WIDTH: usize = 4;

    fn create() -> Result<(RawFd, RawFd)> {
        let mut fds = [0; 2];
        // SAFETY: fds is a valid 2-int array. CLOEXEC so no exec'd program inherits them.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(Error::last_os("creating the ring's pipes"));
        }
        Ok((fds[0], fds[1]))
    }
}

#[cfg(test)]
mod tests {
    use super::super::checks;
    use super::Pipe;

    #[test]
    fn round_trip() {
        checks::round_trip::<Pipe>();
    }

    #[test]
    fn poison_wakes_a_waiter() {
        checks::poison_wakes_a_waiter::<Pipe>();
    }

    #[test]
    fn a_closed_inbox_is_seen() {
        checks::closed_inbox_is_seen::<Pipe>();
    }
}
