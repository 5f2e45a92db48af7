//! Transports whose inbox is a word of shared memory (futex, signal, yield): the token is
//! stored into the word, and they differ only in how a waiting participant sleeps and is
//! woken.

use super::{Hop, Scope, Transport};
use crate::error::Result;
use crate::sys::{Blocked, Shared};
use crate::wire::{EMPTY, STOP};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, Ordering};

/// How a participant sleeps until its word is filled, and how the sender wakes it.
pub trait Wake: Sized + Send + Sync + 'static {
    const NAME: &'static str;
    const SINGLE_CPU_ONLY: bool = false;
    /// See `Transport::BUSY_WAITS`.
    const BUSY_WAITS: bool = false;
    /// Every send leaves something the receiver must consume (a queued signal): wait first,
    /// once per token, even when the word is already filled.
    const WAIT_FIRST: bool = false;
    fn new(n: usize, scope: Scope) -> Result<Self>;
    fn attach(&self, _i: usize) -> Option<Blocked> {
        None
    }
    /// Sleeps while `word` may still be EMPTY; spurious returns are fine.
    fn wait(&self, i: usize, word: &AtomicU32) -> Hop<()>;
    fn wake(&self, i: usize, word: &AtomicU32) -> Hop<()>;
    /// As `wake`, from a thread that is no participant (see `Transport::stop_from_outside`).
    fn wake_from_outside(&self, i: usize, word: &AtomicU32) -> Hop<()> {
        self.wake(i, word)
    }
    /// See `Transport::fds`.
    fn fds(&self, _i: usize, _n: usize) -> [RawFd; 2] {
        [-1, -1]
    }
    /// See `Transport::explain`.
    fn explain(_errno: i32) -> Option<&'static str> {
        None
    }
}

pub struct WordRing<W: Wake> {
    words: Shared<AtomicU32>,
    wake: W,
}

impl<W: Wake> Transport for WordRing<W> {
    const NAME: &'static str = W::NAME;
    const SINGLE_CPU_ONLY: bool = W::SINGLE_CPU_ONLY;
    const BUSY_WAITS: bool = W::BUSY_WAITS;

    fn ring(n: usize, scope: Scope) -> Result<Self> {
        let words = Shared::<AtomicU32>::new(n)?;
        for w in words.iter() {
            w.store(EMPTY, Ordering::Relaxed);
        }
        Ok(WordRing {
            words,
            wake: W::new(n, scope)?,
        })
    }

    fn attach(&self, i: usize) -> Option<Blocked> {
        self.wake.attach(i)
    }

    fn explain(errno: i32) -> Option<&'static str> {
        W::explain(errno)
    }

    #[inline]
    fn recv(&self, i: usize) -> Hop<u32> {
        let word = &self.words[i];
        loop {
            if W::WAIT_FIRST {
                self.wake.wait(i, word)?;
            }
            let token = word.swap(EMPTY, Ordering::AcqRel);
            if token != EMPTY {
                return Ok(token);
            }
            if !W::WAIT_FIRST {
                self.wake.wait(i, word)?;
            }
        }
    }

    #[inline]
    fn send(&self, i: usize, token: u32) -> Hop<()> {
        let word = &self.words[i];
        word.store(token, Ordering::Release);
        self.wake.wake(i, word)
    }

    fn pending(&self, i: usize) -> bool {
        self.words[i].load(Ordering::Acquire) != EMPTY
    }

    fn stop_from_outside(&self, i: usize) -> Hop<()> {
        let word = &self.words[i];
        word.store(STOP, Ordering::Release);
        self.wake.wake_from_outside(i, word)
    }

    fn fds(&self, i: usize, n: usize) -> [RawFd; 2] {
        self.wake.fds(i, n)
    }
}
