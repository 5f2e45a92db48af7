//! A point runs on a thread of its own while the calling thread keeps asking whether the
//! caller was interrupted (Python runs signal handlers on its main thread only).

use crate::engine::Interrupt;
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// How often the calling thread asks `interrupt` while a point runs on its own thread.
const ASK_EVERY: Duration = Duration::from_millis(100);

/// `body` on a thread named `name` that ends with it, handed a flag that says whether the
/// caller was interrupted; meanwhile this thread asks `interrupt` every `ASK_EVERY` and sets
/// the flag. The result comes back over a channel, so this thread returns the moment it is
/// ready. Waiting for the thread to be finished instead (an unpark, then `is_finished`) can
/// lose the wakeup between the unpark and the thread's exit and sleep out a whole
/// `ASK_EVERY`, which precision mode would charge to the point's time cap (docs/accuracy, the
/// lost-wakeup page).
pub fn on_own_thread<T: Send>(
    name: &str,
    body: impl FnOnce(&AtomicBool) -> T + Send,
    interrupt: Interrupt,
) -> Result<T> {
    let asked = AtomicBool::new(false);
    let (done, result) = mpsc::sync_channel(1);
    let flag = &asked;
    std::thread::scope(|s| {
        let own = std::thread::Builder::new()
            .name(name.into())
            // `done` moves in: a panicking body drops it, and the caller sees the channel
            // disconnected instead of waiting for ever.
            .spawn_scoped(s, move || {
                let _ = done.send(body(flag));
            })
            .map_err(|e| {
                let errno = e.raw_os_error().unwrap_or(libc::EAGAIN);
                Error::os(errno, "starting the thread a point runs on")
            })?;
        loop {
            match result.recv_timeout(ASK_EVERY) {
                Ok(value) => return Ok(value),
                Err(RecvTimeoutError::Timeout) => {
                    if !asked.load(Ordering::Relaxed) && interrupt() {
                        asked.store(true, Ordering::Relaxed);
                    }
                }
                // The body panicked before sending: its panic goes on in this thread.
                Err(RecvTimeoutError::Disconnected) => {
                    let panic = own.join().expect_err("a thread that sent nothing panicked");
                    std::panic::resume_unwind(panic)
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupt_reaches_the_body_and_a_panic_the_caller() {
        let mut interrupt = || true;
        let seen = on_own_thread(
            "test",
            |asked| {
                while !asked.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(5));
                }
                "interrupted"
            },
            &mut interrupt,
        );
        assert_eq!(seen.unwrap(), "interrupted");
        // A body that panics before sending: the caller must see it, not wait for ever.
        let panicked = std::panic::catch_unwind(|| {
            let _ = on_own_thread("test", |_| -> u8 { panic!("in the body") }, &mut || false);
        });
        assert!(panicked.is_err());
    }
}
