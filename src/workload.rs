//! The work a participant does between receiving and passing on the token: lmbench's
//! "sum an array of `size` KB with an unrolled loop".
//!
//! Each 4 KiB chunk is summed by one straight-line function of 1024 volatile loads and adds.
//! Volatile loads keep the compiler from vectorising, hoisting or deleting the sum (the array
//! never changes, so anything else would be legal), which keeps the instruction-cache
//! footprint constant. Measured on x86_64 (rustc 1.95, release) with
//! `valgrind --tool=callgrind --toggle-collect='*chunk_sum*'`: one call retires 1,025
//! instructions (1,024 loads folded into `add reg, [mem]`, and `ret`) in 6,048 bytes of code.
//! lmbench's "about 2.7 thousand" is the SPARC-era count of the same unrolled `sum += *p++`
//! (separate load, add and pointer step); compiled for x86_64, lmbench's loop folds the same way.

use crate::error::{Error, Result};
use std::ptr;

pub const CHUNK_BYTES: usize = 4096;
const CHUNK_WORDS: usize = CHUNK_BYTES / 4;
/// 1 GiB per participant; beyond that the benchmark measures paging, not switching.
pub const MAX_SIZE_KB: usize = 1 << 20;

/// A participant's private array. Memory comes straight from `mmap` so that a forked child
/// gets its own copy on the first write (`touch`) without calling the allocator after `fork`.
pub struct Workload {
    ptr: *mut u32,
    words: usize,
}

// SAFETY: the buffer is owned by this value; threads get it by move, never share it mutably.
unsafe impl Send for Workload {}

impl Workload {
    pub fn new(size_kb: usize) -> Result<Self> {
        if size_kb > MAX_SIZE_KB {
            return Err(Error::invalid(
                "size_kb",
                format!("must be between 0 and {MAX_SIZE_KB} (1 GiB), got {size_kb}"),
            ));
        }
        let bytes = size_kb * 1024;
        if bytes == 0 {
            return Ok(Workload {
                ptr: ptr::null_mut(),
                words: 0,
            });
        }
        // SAFETY: anonymous private mapping with no address hint; the result is checked.
        let p = unsafe {
            libc::mmap(
                ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(Error::last_os(format!(
                "allocating the {size_kb} KiB work array"
            )));
        }
        let w = Workload {
            ptr: p.cast(),
            words: bytes / 4,
        };
        w.touch();
        Ok(w)
    }

    pub fn size_kb(&self) -> usize {
        self.words * 4 / 1024
    }

    /// Writes the pattern `a[i] = i` into every word: faults every page in (and, in a forked
    /// child, makes the copy-on-write pages its own) before the first timed trip.
    /// Only plain stores, so it is safe to run between `fork` and `_exit`.
    pub fn touch(&self) {
        for i in 0..self.words {
            // SAFETY: i < words, inside the mapping this value owns.
            unsafe { ptr::write_volatile(self.ptr.add(i), i as u32) };
        }
    }

    /// One pass over the array; the result is the workload's checksum. Allocation-free.
    /// A size that is not a multiple of 4 KiB ends with a short rolled loop over the rest.
    #[inline]
    pub fn sum(&self) -> u64 {
        let full = self.words - self.words % CHUNK_WORDS;
        let mut total = 0u64;
        let mut off = 0;
        while off < full {
            // SAFETY: off + CHUNK_WORDS <= full <= words, so the whole chunk is mapped.
            total += u64::from(unsafe { chunk_sum(self.ptr.add(off)) });
            off += CHUNK_WORDS;
        }
        let mut tail = 0u32;
        for i in full..self.words {
            // SAFETY: i < words.
            tail = tail.wrapping_add(unsafe { ptr::read_volatile(self.ptr.add(i)) });
        }
        total + u64::from(tail)
    }

    /// What `sum` returns for an array of `size_kb` KiB holding the `touch` pattern.
    pub fn expected_sum(size_kb: usize) -> u64 {
        let words = (size_kb * 256) as u64;
        let chunk = CHUNK_WORDS as u64;
        let piece =
            |lo: u64, hi: u64| u64::from((lo..hi).fold(0u32, |s, i| s.wrapping_add(i as u32)));
        let full = words - words % chunk;
        (0..full / chunk)
            .map(|c| piece(c * chunk, (c + 1) * chunk))
            .sum::<u64>()
            + piece(full, words)
    }
}

impl Drop for Workload {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: unmapping exactly the mapping created in `new`.
            unsafe { libc::munmap(self.ptr.cast(), self.words * 4) };
        }
    }
}

macro_rules! x4 {
    ($($t:tt)*) => { $($t)* $($t)* $($t)* $($t)* };
}

/// Sums one 4 KiB chunk: 1024 volatile loads and adds, no loop. Never inlined, so the
/// instruction-cache footprint is the same whatever the caller.
///
/// # Safety
/// `p` must point to 1024 readable, aligned `u32`s.
#[inline(never)]
unsafe fn chunk_sum(p: *const u32) -> u32 {
    let mut s = 0u32;
    let mut k = 0usize;
    // 4^5 = 1024 copies of the body; `k` is a constant after unrolling, so every load has
    // its own displacement.
    x4! { x4! { x4! { x4! { x4! {
        s = s.wrapping_add(ptr::read_volatile(p.add(k)));
        k += 1;
    } } } } }
    debug_assert_eq!(k, CHUNK_WORDS);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_size_does_nothing() {
        let w = Workload::new(0).unwrap();
        assert_eq!(w.sum(), 0);
        assert_eq!(Workload::expected_sum(0), 0);
    }

    #[test]
    fn checksum_matches_pattern() {
        for kb in [1, 4, 6, 16, 64, 260] {
            let w = Workload::new(kb).unwrap();
            assert_eq!(w.size_kb(), kb);
            assert_eq!(w.sum(), Workload::expected_sum(kb), "size {kb}");
        }
    }

    #[test]
    fn absurd_size_is_rejected() {
        let e = Workload::new(MAX_SIZE_KB + 1).err().unwrap();
        assert!(matches!(
            e,
            Error::Invalid {
                param: "size_kb",
                ..
            }
        ));
    }
}
