//! lmbench's transport: one Unix pipe per participant, 4-byte token.

use super::{Hop, HopError, Transport};
use crate::error::{Error, Result};
use std::os::fd::RawFd;

pub struct Pipe {
    /// `ends[i]` = (read end of participant i's inbox, write end into it); -1 once closed.
    ends: Vec<(RawFd, RawFd)>,
}

impl Transport for Pipe {
    const NAME: &'static str = "pipe";

    fn ring(n: usize) -> Result<Self> {
        let mut p = Pipe {
            ends: Vec::with_capacity(n),
        };
        for _ in 0..n {
            let mut fds = [0; 2];
            // SAFETY: fds is a valid 2-int array. CLOEXEC so no exec'd program inherits them.
            if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
                return Err(Error::last_os("creating the ring's pipes"));
            }
            p.ends.push((fds[0], fds[1]));
        }
        Ok(p)
    }

    #[inline]
    fn recv(&self, i: usize) -> Hop<u32> {
        let mut token = 0u32;
        loop {
            // SAFETY: reading 4 bytes into a local u32 from our own descriptor.
            let n = unsafe { libc::read(self.ends[i].0, (&mut token as *mut u32).cast(), 4) };
            match n {
                4 => return Ok(token),
                0 => return Err(HopError::Closed),
                -1 => match crate::error::errno() {
                    libc::EINTR => continue,
                    e => return Err(HopError::Errno(e)),
                },
                // A 4-byte write into a pipe is atomic (< PIPE_BUF), so a short read means a
                // foreign writer.
                _ => return Err(HopError::Errno(libc::EPROTO)),
            }
        }
    }

    #[inline]
    fn send(&self, i: usize, token: u32) -> Hop<()> {
        loop {
            // SAFETY: writing 4 bytes from a local u32 to our own descriptor.
            let n = unsafe { libc::write(self.ends[i].1, (&token as *const u32).cast(), 4) };
            match n {
                4 => return Ok(()),
                -1 => match crate::error::errno() {
                    libc::EINTR => continue,
                    libc::EPIPE => return Err(HopError::Closed),
                    e => return Err(HopError::Errno(e)),
                },
                _ => return Err(HopError::Errno(libc::EPROTO)),
            }
        }
    }

    fn fds(&self, i: usize, n: usize) -> [RawFd; 2] {
        [self.ends[i].0, self.ends[(i + 1) % n].1]
    }

    fn keep_only(&mut self, i: usize, n: usize) {
        let keep = self.fds(i, n);
        for (r, w) in self.ends.iter_mut() {
            for fd in [r, w] {
                if *fd >= 0 && !keep.contains(fd) {
                    // SAFETY: closing a descriptor this value owns, exactly once (then -1).
                    unsafe { libc::close(*fd) };
                    *fd = -1;
                }
            }
        }
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        for &(r, w) in &self.ends {
            for fd in [r, w] {
                if fd >= 0 {
                    // SAFETY: a descriptor this value still owns.
                    unsafe { libc::close(fd) };
                }
            }
        }
    }
}
