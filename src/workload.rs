//! The work a participant does between receiving and passing on the token: lmbench's
//! "sum an array of `size` KB with an unrolled loop", defined as lmbench3's `bread` does it.
//!
//! The array is made of 8-byte words. It is summed in blocks of 128 words (1 KiB), each block
//! one expression of 128 terms that starts from the block's first word and is added to the
//! running sum once; then blocks of 16 words the same way, then single words (a whole number
//! of KiB never reaches those two tails, but the definition has them). Compiled by gcc 12 `-O2`
//! on x86_64, lmbench's expression is one `mov` and 127 `add reg, [mem]` into a fresh
//! register, then `add` into the sum: each block is its own dependency chain, so the CPU
//! overlaps consecutive blocks. Chaining every word into the running sum instead would
//! serialise the whole array and cost several times more per KB than lmbench3's loop.
//!
//! What keeps the sum honest: every word is read with `read_volatile`, so the compiler may not
//! delete, merge, widen (vectorise) or hoist the loads out of the caller's loop, even though
//! the array never changes; on x86_64 a volatile load still folds into `add reg, [mem]`, so it
//! costs nothing over lmbench's plain loads. An empty `asm!` that takes and returns each
//! block's sum in a register (no instruction is emitted) keeps LLVM from reassociating the
//! block's chain into the running sum, which would rebuild the serial chain. The whole pass is
//! one function that is never inlined, so its instruction-cache footprint is the same whatever
//! the caller and size.
//!
//! Per 128-word block the pass retires a `mov`, 127 `add reg, [mem]`, the `add` into the sum
//! and the loop control, as lmbench3's `bread` does; the instruction counts against it
//! (callgrind) and the cost per KB against the C reference are in the manual's accuracy page
//! "The workload against lmbench3's bread".
//!
//! The checksum: `touch` writes `a[i] = i` into word `i`, so one pass returns
//! n(n − 1)/2 for n = 128 × `size_kb` words (below 2^53 up to `MAX_SIZE_KB`, so never wraps).

use crate::error::{Error, Result};
use std::ptr;

/// Bytes per word: lmbench3's `bread` sums `long`s.
const WORD_BYTES: usize = 8;
/// Words per unrolled block (1 KiB) and per tail block.
const BLOCK_WORDS: usize = 128;
const TAIL_WORDS: usize = 16;
/// 1 GiB per participant; beyond that the benchmark measures paging, not switching.
pub const MAX_SIZE_KB: usize = 1 << 20;

/// A participant's private array. Memory comes straight from `mmap` so that a forked child
/// gets its own copy on the first write (`touch`) without calling the allocator after `fork`.
pub struct Workload {
    ptr: *mut u64,
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
            words: bytes / WORD_BYTES,
        };
        w.touch();
        Ok(w)
    }

    pub fn size_kb(&self) -> usize {
        self.words * WORD_BYTES / 1024
    }

    /// Writes the pattern `a[i] = i` into every 8-byte word: faults every page in (and, in a
    /// forked child, makes the copy-on-write pages its own) before the first timed trip.
    /// Only plain stores, so it is safe to run between `fork` and `_exit`.
    pub fn touch(&self) {
        for i in 0..self.words {
            // SAFETY: i < words, inside the mapping this value owns.
            unsafe { ptr::write_volatile(self.ptr.add(i), i as u64) };
        }
    }

    /// One pass over the array (see the module doc); the result is the workload's checksum.
    /// Allocation-free, no system calls.
    #[inline]
    pub fn sum(&self) -> u64 {
        if self.words == 0 {
            return 0;
        }
        // SAFETY: the mapping holds `words` initialised, aligned u64s.
        unsafe { sum_words(self.ptr, self.words) }
    }

    /// What `sum` returns for an array of `size_kb` KiB holding the `touch` pattern:
    /// 0 + 1 + … + (n − 1) over its n = 128 × `size_kb` words, wrapping like the sum.
    pub fn expected_sum(size_kb: usize) -> u64 {
        let n = (size_kb * 1024 / WORD_BYTES) as u128;
        (n * n.saturating_sub(1) / 2) as u64
    }
}

impl Drop for Workload {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: unmapping exactly the mapping created in `new`.
            unsafe { libc::munmap(self.ptr.cast(), self.words * WORD_BYTES) };
        }
    }
}

macro_rules! x2 {
    ($($t:tt)*) => { $($t)* $($t)* };
}

/// Hands `v` to an empty `asm!` and takes it back: no instruction, but the compiler no longer
/// knows how `v` was computed, so it cannot fold one block's chain into the next.
#[inline(always)]
fn opaque(mut v: u64) -> u64 {
    // SAFETY: an empty template; it reads and writes only the register holding `v`.
    unsafe {
        std::arch::asm!("/* {0} */", inout(reg) v, options(pure, nomem, nostack, preserves_flags))
    };
    v
}

/// Sums `words` 8-byte words from `p` as lmbench3's `bread` does: unrolled 128-word blocks,
/// then 16-word blocks, then single words, every load volatile. Never inlined, so the code
/// (and its instruction-cache footprint) is one fixed function.
///
/// # Safety
/// `p` must point to `words` readable, initialised, aligned `u64`s.
#[inline(never)]
unsafe fn sum_words(mut p: *const u64, mut words: usize) -> u64 {
    let mut sum = 0u64;
    while words >= BLOCK_WORDS {
        let mut block = 0u64;
        let mut k = 0usize;
        // 2^7 = 128 terms; `k` is a constant after unrolling, so each load has its own
        // displacement, and `0 + a[0]` folds into a plain load.
        x2! { x2! { x2! { x2! { x2! { x2! { x2! {
            block = block.wrapping_add(ptr::read_volatile(p.add(k)));
            k += 1;
        } } } } } } }
        debug_assert_eq!(k, BLOCK_WORDS);
        sum = sum.wrapping_add(opaque(block));
        p = p.add(BLOCK_WORDS);
        words -= BLOCK_WORDS;
    }
    while words >= TAIL_WORDS {
        let mut block = 0u64;
        let mut k = 0usize;
        x2! { x2! { x2! { x2! {
            block = block.wrapping_add(ptr::read_volatile(p.add(k)));
            k += 1;
        } } } }
        debug_assert_eq!(k, TAIL_WORDS);
        sum = sum.wrapping_add(opaque(block));
        p = p.add(TAIL_WORDS);
        words -= TAIL_WORDS;
    }
    while words > 0 {
        sum = sum.wrapping_add(ptr::read_volatile(p));
        p = p.add(1);
        words -= 1;
    }
    sum
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
            let n = kb as u64 * 128;
            assert_eq!(w.sum(), (0..n).sum::<u64>(), "size {kb}");
        }
    }

    #[test]
    fn largest_checksum_does_not_wrap() {
        let n = (MAX_SIZE_KB * 128) as u64;
        assert_eq!(Workload::expected_sum(MAX_SIZE_KB), n / 2 * (n - 1));
    }

    #[test]
    fn every_tail_is_summed() {
        // Word counts that end in each tail: a partial 16-word block, single words, both.
        for words in [1, 15, 16, 17, 127, 128, 129, 144, 150, 3 * 128 + 2 * 16 + 5] {
            let a: Vec<u64> = (0..words as u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .collect();
            let want = a.iter().fold(0u64, |s, &x| s.wrapping_add(x));
            // SAFETY: `a` holds `words` u64s.
            assert_eq!(
                unsafe { sum_words(a.as_ptr(), words) },
                want,
                "{words} words"
            );
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
