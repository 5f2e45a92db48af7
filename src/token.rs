//! The token protocol, the same for every engine that uses a transport: what participant 0
//! (the caller, which times) and every other participant do per hop.

use crate::error::{Error, Result};
use crate::hops::HopLog;
use crate::sys::{Guards, Slot};
use crate::transport::{HopError, Scope, Transport};
use crate::wire::{advance, check_count, STOP};
#[cfg(test)]
use crate::workload::Shape;
use crate::workload::Workload;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Exit codes of a participant, so the caller can tell a cascade from its cause.
pub const EXIT_STOPPED: i32 = 0;
pub const EXIT_UPSTREAM_GONE: i32 = 10;
pub const EXIT_DOWNSTREAM_GONE: i32 = 11;
pub const EXIT_ERRNO: i32 = 12;

/// What a participant that left with `EXIT_ERRNO` was doing; kept in its slot with the errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum Step {
    /// Mapping its work array.
    Setup = 1,
    Receive = 2,
    Send = 3,
    /// Pinning itself to its CPU.
    Pin = 4,
}

impl Step {
    /// Records in `slot` that `self` failed with `errno` and that the participant leaves
    /// with `EXIT_ERRNO` (the watchdog tells a failure from a death by it). Raw atomics:
    /// safe after `fork`.
    pub fn failed(self, slot: &Slot, errno: i32) -> i32 {
        slot.errno.store(errno, Ordering::Relaxed);
        slot.failed_step.store(self as i32, Ordering::Release);
        slot.exit.store(EXIT_ERRNO, Ordering::Release);
        EXIT_ERRNO
    }
}

/// What participant `i`'s slot says about the syscall it failed, with the transport's
/// explanation of the errno: "could not pass the token on: … (os error 11): queued-signal
/// limit reached …".
pub fn failure<T: Transport>(slot: &Slot) -> String {
    let errno = slot.errno.load(Ordering::Relaxed);
    let what = match slot.failed_step.load(Ordering::Acquire) {
        s if s == Step::Setup as i32 => "could not set itself up (map its work array)",
        s if s == Step::Pin as i32 => {
            let why = "the CPU is offline or outside this process's cpuset now?";
            return format!(
                "could not pin itself to its CPU: {} ({why})",
                errno_text::<T>(errno)
            );
        }
        s if s == Step::Receive as i32 => "could not receive the token",
        s if s == Step::Send as i32 => "could not pass the token on",
        _ => return "failed a syscall".into(),
    };
    format!("{what}: {}", errno_text::<T>(errno))
}

/// An errno of a hop as text, with the transport's explanation where it has one.
fn errno_text<T: Transport>(errno: i32) -> String {
    let os = std::io::Error::from_raw_os_error(errno);
    match T::explain(errno) {
        Some(why) => format!("{os}: {why}"),
        None => os.to_string(),
    }
}

/// Participant `i` (i > 0): receive, work, pass on, until STOP. Allocation-free and made of
/// raw syscalls only, because in the process engine it runs between `fork` and `_exit`.
/// The exit code also goes into the slot, where the watchdog tells a clean exit from a death.
pub fn participant<T: Transport>(
    t: &T,
    i: usize,
    n: usize,
    work: &Workload,
    slot: &Slot,
    log: Option<&HopLog>,
) -> i32 {
    let code = pass_tokens(t, i, n, work, slot, log);
    slot.exit.store(code, Ordering::Release);
    code
}

fn pass_tokens<T: Transport>(
    t: &T,
    i: usize,
    n: usize,
    work: &Workload,
    slot: &Slot,
    log: Option<&HopLog>,
) -> i32 {
    let next = (i + 1) % n;
    let mut checksum = 0u64;
    let mut passes = 0u64;
    loop {
        let token = match t.recv(i) {
            Ok(tok) => tok,
            Err(HopError::Closed) => return EXIT_UPSTREAM_GONE,
            Err(HopError::Errno(e)) => return Step::Receive.failed(slot, e),
        };
        if token == STOP {
            let (voluntary, involuntary) = crate::sys::thread_switches();
            slot.nvcsw.store(voluntary, Ordering::Relaxed);
            slot.nivcsw.store(involuntary, Ordering::Relaxed);
            slot.cpu.store(crate::sys::current_cpu(), Ordering::Relaxed);
            slot.checksum.store(checksum, Ordering::Relaxed);
            // After the last timed hop: proof of the working set, off the measured path.
            slot.resident_kb.store(
                work.resident_kb().map_or(-1, |kb| kb as i64),
                Ordering::Relaxed,
            );
            slot.passes.store(passes, Ordering::Release);
            // The ring is coming down: a neighbour that already left is not an error.
            let _ = t.send(next, STOP);
            return EXIT_STOPPED;
        }
        if let Some(log) = log {
            log.received(i);
        }
        checksum = checksum.wrapping_add(work.sum());
        passes += 1;
        if let Some(log) = log {
            log.sending(next);
        }
        match t.send(next, advance(token)) {
            Ok(()) => {}
            Err(HopError::Closed) => return EXIT_DOWNSTREAM_GONE,
            Err(HopError::Errno(e)) => return Step::Send.failed(slot, e),
        }
    }
}

/// Checks that every participant of ring `r` other than the driver received as many tokens as
/// the driver sent round it (`received[i - 1]` is participant i's count): none lost in a
/// wake-up nobody noticed, none counted twice.
pub fn check_receipts(r: usize, sent: u64, received: &[u64]) -> Result<()> {
    match received.iter().position(|&got| got != sent) {
        None => Ok(()),
        Some(k) => Err(Error::Peer(format!(
            "token count mismatch: participant {} of ring {r} received {} tokens, its driver \
             sent {sent}: a token was lost or taken twice",
            k + 1,
            received[k]
        ))),
    }
}

/// Participant 0 of one ring: drives and times the trips, and the hot-cache overhead loop.
pub struct Driver<T: Transport> {
    ring: Arc<T>,
    overhead: T,
    work: Workload,
    n: usize,
    token: u32,
    checksum: u64,
    passes: u64,
    /// Trips sent round the ring, warm-up included: every other participant should have
    /// received exactly as many tokens (`check_receipts`).
    sent: u64,
    /// Bumped once per trip; the watchdog reads it to tell a slow ring from a hung one.
    pub progress: Arc<AtomicU64>,
    pub log: Option<Arc<HopLog>>,
}

impl<T: Transport> Driver<T> {
    pub fn new(ring: Arc<T>, work: Workload, n: usize, log: Option<Arc<HopLog>>) -> Result<Self> {
        Ok(Driver {
            ring,
            // Only the caller's thread ever uses these: a thread-scoped ring.
            overhead: T::ring(n, Scope::Threads)?,
            work,
            n,
            token: 0,
            checksum: 0,
            passes: 0,
            sent: 0,
            progress: Arc::new(AtomicU64::new(0)),
            log,
        })
    }

    fn hop_error(&self, e: HopError, from: usize, to: usize) -> Error {
        match e {
            HopError::Closed => Error::Peer(format!(
                "hop {from}->{to}: the peer is gone (EOF/EPIPE): a participant died mid-run"
            )),
            HopError::Errno(e) => Error::Peer(format!("hop {from}->{to}: {}", errno_text::<T>(e))),
        }
    }

    /// `trips` times round the ring. Checks afterwards that the token counted every hop.
    pub fn trips(&mut self, trips: u64) -> Result<()> {
        let n = self.n;
        let start = self.token;
        let mut token = start;
        let log = self.log.as_deref();
        for _ in 0..trips {
            if let Some(log) = log {
                log.sending(1);
            }
            self.ring
                .send(1, token)
                .map_err(|e| self.hop_error(e, 0, 1))?;
            token = self.ring.recv(0).map_err(|e| self.hop_error(e, n - 1, 0))?;
            if token == STOP {
                return Err(Error::Peer("the ring was torn down mid-run".into()));
            }
            if let Some(log) = log {
                log.received(0);
            }
            self.checksum = self.checksum.wrapping_add(self.work.sum());
            self.passes += 1;
            self.sent += 1;
            token = advance(token);
            self.progress.fetch_add(1, Ordering::Relaxed);
        }
        check_count(start, trips, n, token)?;
        self.token = token;
        Ok(())
    }

    /// lmbench's overhead: per hop, write the token into inbox i and read it back, cycling over
    /// `n` inboxes, with the same work on the same (hot) array. `rounds` × `n` hops.
    pub fn overhead(&mut self, rounds: u64) -> Result<()> {
        let mut token = self.token;
        for _ in 0..rounds {
            for i in 0..self.n {
                let t = &self.overhead;
                t.send(i, token).map_err(|e| self.hop_error(e, i, i))?;
                token = t.recv(i).map_err(|e| self.hop_error(e, i, i))?;
                self.checksum = self.checksum.wrapping_add(self.work.sum());
                self.passes += 1;
            }
            self.progress.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Sends STOP round the ring and waits for it to come back: every participant has then
    /// recorded its report and is leaving.
    pub fn stop(&mut self) -> Result<()> {
        self.ring
            .send(1, STOP)
            .map_err(|e| self.hop_error(e, 0, 1))?;
        match self.ring.recv(0) {
            Ok(STOP) => Ok(()),
            Ok(t) => Err(Error::Peer(format!("expected STOP back, got token {t}"))),
            Err(e) => Err(self.hop_error(e, self.n - 1, 0)),
        }
    }

    /// Registers the calling thread as participant 0, and as every inbox of the overhead
    /// ring. Must run on the thread that then drives; the guards restore its signal mask.
    pub fn attach(&self) -> Guards {
        let mut g = Guards::default();
        g.0.extend(self.ring.attach(0));
        g.0.extend((0..self.n).filter_map(|i| self.overhead.attach(i)));
        g
    }

    /// Trips sent round the ring so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// The caller's own workload passes and checksum, to check against `Shape::expected_sum`.
    pub fn work_done(&self) -> (u64, u64) {
        (self.passes, self.checksum)
    }

    /// KiB of the caller's own array resident and private (`Workload::resident_kb`).
    pub fn resident_kb(&self) -> Option<u64> {
        self.work.resident_kb()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::Shared;
    use crate::transport::pipe::Pipe;

    #[test]
    fn driver_and_participant_pass_every_hop_then_stop() {
        let ring = Arc::new(Pipe::ring(2, Scope::Threads).unwrap());
        let slots = Shared::<Slot>::new(2).unwrap();
        let mut driver = Driver::new(
            Arc::clone(&ring),
            Workload::new(Shape::every_word(0).unwrap()).unwrap(),
            2,
            None,
        )
        .unwrap();
        let code = std::thread::scope(|s| {
            let peer = s.spawn(|| {
                let work = Workload::new(Shape::every_word(0).unwrap()).unwrap();
                participant(&*ring, 1, 2, &work, &slots[1], None)
            });
            driver.trips(100).unwrap();
            driver.overhead(10).unwrap();
            driver.stop().unwrap();
            peer.join().unwrap()
        });
        assert_eq!(code, EXIT_STOPPED);
        assert_eq!(slots[1].exit.load(Ordering::Acquire), EXIT_STOPPED);
        assert_eq!(slots[1].passes.load(Ordering::Acquire), 100);
        assert_eq!(driver.work_done().0, 100 + 10 * 2);
        assert_eq!(driver.progress.load(Ordering::Relaxed), 100 + 10);
    }

    #[test]
    fn a_participant_that_skips_a_count_breaks_the_protocol() {
        let ring = Arc::new(Pipe::ring(2, Scope::Threads).unwrap());
        let mut driver = Driver::new(
            Arc::clone(&ring),
            Workload::new(Shape::every_word(0).unwrap()).unwrap(),
            2,
            None,
        )
        .unwrap();
        std::thread::scope(|s| {
            // Echoes the token without counting its hop.
            s.spawn(|| {
                let token = ring.recv(1).unwrap();
                ring.send(0, token).unwrap();
            });
            let e = driver.trips(1).unwrap_err();
            assert!(e.to_string().contains("token protocol broken"), "{e}");
        });
    }

    #[test]
    fn receipts_must_match_what_the_driver_sent() {
        assert!(check_receipts(0, 7, &[7, 7]).is_ok());
        let e = check_receipts(2, 7, &[7, 6]).unwrap_err().to_string();
        assert!(
            e.contains("participant 2 of ring 2 received 6 tokens, its driver sent 7"),
            "{e}"
        );
    }

    #[test]
    fn a_closed_ring_is_a_peer_error() {
        let mut ring = Pipe::ring(2, Scope::Processes).unwrap();
        ring.keep_only(0, 2);
        let _sigpipe = crate::sys::Blocked::new(libc::SIGPIPE);
        let mut driver = Driver::new(
            Arc::new(ring),
            Workload::new(Shape::every_word(0).unwrap()).unwrap(),
            2,
            None,
        )
        .unwrap();
        let e = driver.trips(1).unwrap_err();
        assert!(e.to_string().contains("the peer is gone"), "{e}");
    }
}
