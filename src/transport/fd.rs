//! Transports whose inbox is a file descriptor (pipe, socket, eventfd): the same read/write
//! loop, differing only in how the descriptors are made and how the token is encoded.

use super::{Hop, HopError, Scope, Transport};
use crate::error::{errno, Result};
use std::os::fd::RawFd;

/// One kind of descriptor inbox.
pub trait Kind: Send + Sync + 'static {
    const NAME: &'static str;
    /// Bytes per message: 4 for pipes and sockets, 8 for eventfd.
    const WIDTH: usize;
    /// (read end, write end) of a fresh inbox; both the same descriptor for eventfd.
    fn create() -> Result<(RawFd, RawFd)>;
    fn encode(token: u32) -> u64 {
        u64::from(token)
    }
    fn decode(raw: u64) -> u32 {
        raw as u32
    }
}

pub struct FdRing<K: Kind> {
    /// `ends[i]` = (read end of participant i's inbox, write end into it); -1 once closed.
    ends: Vec<(RawFd, RawFd)>,
    kind: std::marker::PhantomData<K>,
}

impl<K: Kind> Transport for FdRing<K> {
    const NAME: &'static str = K::NAME;

    fn ring(n: usize, _scope: Scope) -> Result<Self> {
        let mut ring = FdRing {
            ends: Vec::with_capacity(n),
            kind: std::marker::PhantomData,
        };
        for _ in 0..n {
            ring.ends.push(K::create()?);
        }
        Ok(ring)
    }

    #[inline]
    fn recv(&self, i: usize) -> Hop<u32> {
        let mut raw = 0u64;
        loop {
            // SAFETY: reading WIDTH <= 8 bytes into a local u64 from our own descriptor
            // (little-endian: the low bytes hold a 4-byte token).
            let n = unsafe { libc::read(self.ends[i].0, (&mut raw as *mut u64).cast(), K::WIDTH) };
            match n {
                n if n == K::WIDTH as isize => return Ok(K::decode(raw)),
                0 => return Err(HopError::Closed),
                -1 => match errno() {
                    libc::EINTR => continue,
                    e => return Err(HopError::Errno(e)),
                },
                // Messages are smaller than PIPE_BUF, so a short read means a foreign writer.
                _ => return Err(HopError::Errno(libc::EPROTO)),
            }
        }
    }

    #[inline]
    fn send(&self, i: usize, token: u32) -> Hop<()> {
        let raw = K::encode(token);
        loop {
            // SAFETY: writing WIDTH <= 8 bytes from a local u64 to our own descriptor.
            let n = unsafe { libc::write(self.ends[i].1, (&raw as *const u64).cast(), K::WIDTH) };
            match n {
                n if n == K::WIDTH as isize => return Ok(()),
                -1 => match errno() {
                    libc::EINTR => continue,
                    libc::EPIPE | libc::ECONNRESET => return Err(HopError::Closed),
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
            // An eventfd inbox is one descriptor for both ends: close it once.
            let distinct = if *r == *w { [*r, -1] } else { [*r, *w] };
            for fd in distinct {
                if fd >= 0 && !keep.contains(&fd) {
                    // SAFETY: closing a descriptor this value owns, exactly once.
                    unsafe { libc::close(fd) };
                }
            }
            for fd in [r, w] {
                if !keep.contains(fd) {
                    *fd = -1;
                }
            }
        }
    }
}

impl<K: Kind> Drop for FdRing<K> {
    fn drop(&mut self) {
        for &(r, w) in &self.ends {
            for fd in if r == w { [r, -1] } else { [r, w] } {
                if fd >= 0 {
                    // SAFETY: a descriptor this value still owns.
                    unsafe { libc::close(fd) };
                }
            }
        }
    }
}
