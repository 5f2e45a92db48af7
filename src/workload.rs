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
//! The stride: with `stride_bytes` = 8 (lmbench3's, the default) every word is summed; with a
//! larger stride one word every `stride_bytes` is, so that at 64 each cache line costs one
//! load and the time per pass is the time to bring lines in, not to add words (Li, Ding and
//! Shen vary it so). Each stride has its own instance of the same unrolled function, the
//! stride a constant in every load's displacement: the instruction count per load and the
//! code's footprint are the same for every stride.
//!
//! The checksum: `touch` writes `a[i] = i` into word `i`, so one pass returns the sum of the
//! indices it reads: n(n − 1)/2 for n = 128 × `size_kb` words at stride 8 (below 2^53 up to
//! `MAX_SIZE_KB`, so never wraps), step × m(m − 1)/2 for the m words read at a step of `step`.
//!
//! The working set, proven: `resident_kb` counts the array's pages that are present, not
//! swapped and mapped by this process alone (`/proc/self/pagemap`), i.e. memory the
//! participant really reads from. A page that was never written is the kernel's shared zero
//! page (one hot 4 KiB page however large the array); a forked child's page it has not
//! written is still its parent's. Both count as not resident.

use crate::error::{Error, Limit, Result};
use std::ptr;

/// Bytes per word: lmbench3's `bread` sums `long`s.
const WORD_BYTES: usize = 8;
/// Loads per unrolled block and per tail block.
const BLOCK_WORDS: usize = 128;
const TAIL_WORDS: usize = 16;
/// 1 GiB per participant; beyond that the benchmark measures paging, not switching.
pub const MAX_SIZE_KB: usize = 1 << 20;
/// KiB per participant a caller may ask: the one home of `size_kb`'s range.
pub const SIZE_KB: Limit<u64> = Limit::between("size_kb", 0, MAX_SIZE_KB as u64);
/// Bytes between two words summed: every word (lmbench3) up to one word per 4 KiB page.
pub const STRIDE_BYTES: (usize, usize) = (WORD_BYTES, 4096);
pub const DEFAULT_STRIDE_BYTES: usize = WORD_BYTES;
const PAGE_BYTES: usize = 4096;

/// What one participant's array is: its size, the stride it is read with, and (for tests
/// only) whether it is ever written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub size_kb: usize,
    pub stride_bytes: usize,
    /// False only through `never_written`: the array then reads the kernel's zero page.
    written: bool,
}

impl Shape {
    /// A checked shape: `size_kb` up to `MAX_SIZE_KB`, `stride_bytes` a power of two in
    /// `STRIDE_BYTES`.
    pub fn new(size_kb: usize, stride_bytes: usize) -> Result<Self> {
        SIZE_KB.check(size_kb as u64)?;
        check_stride(stride_bytes as i64)?;
        Ok(Shape {
            size_kb,
            stride_bytes,
            written: true,
        })
    }

    /// The checksum one pass over `size_kb` KiB read every `stride_bytes` (None: every word)
    /// produces, each checked once.
    pub fn checksum(size_kb: i64, stride_bytes: Option<i64>) -> Result<u64> {
        let shape = Shape {
            size_kb: SIZE_KB.count(size_kb)?,
            stride_bytes: stride_bytes.map_or(Ok(DEFAULT_STRIDE_BYTES), check_stride)?,
            written: true,
        };
        Ok(shape.expected_sum())
    }

    /// lmbench3's workload: every word of `size_kb` KiB.
    pub fn every_word(size_kb: usize) -> Result<Self> {
        Shape::new(size_kb, DEFAULT_STRIDE_BYTES)
    }

    /// Test-only: an array that is never written, so every page is the shared zero page —
    /// the artefact of lmbench3 built with `malloc` + `bzero` turned into `calloc`.
    #[cfg(test)]
    pub fn never_written(self) -> Self {
        Shape {
            written: false,
            ..self
        }
    }

    fn words(&self) -> usize {
        self.size_kb * 1024 / WORD_BYTES
    }

    fn step(&self) -> usize {
        self.stride_bytes / WORD_BYTES
    }

    /// Words one pass reads: indices 0, step, 2 step, ... below the array's length.
    fn loads(&self) -> usize {
        self.words().div_ceil(self.step())
    }

    /// What one pass returns: the sum of the indices it reads (see the module doc), or 0 for
    /// an array that was never written.
    pub fn expected_sum(&self) -> u64 {
        if !self.written {
            return 0;
        }
        let m = self.loads() as u128;
        (self.step() as u128 * (m * m.saturating_sub(1) / 2)) as u64
    }
}

/// `stride_bytes` as a caller typed it, if it is a power of two in `STRIDE_BYTES`.
pub fn check_stride(stride_bytes: i64) -> Result<usize> {
    let (lo, hi) = STRIDE_BYTES;
    match usize::try_from(stride_bytes) {
        Ok(s) if s.is_power_of_two() && (lo..=hi).contains(&s) => Ok(s),
        _ => Err(stride_outside(stride_bytes)),
    }
}

/// The error for a stride outside `check_stride`'s rule (`got`, as given: an int too wide for
/// 64 bits too).
pub fn stride_outside(got: impl std::fmt::Display) -> Error {
    let (lo, hi) = STRIDE_BYTES;
    Error::invalid(
        "stride_bytes",
        format!("must be a power of two between {lo} and {hi} (8, 16, 32, ..., 4096), got {got}"),
    )
}

/// One pass over `loads` words from `p`, one every step; see `sum_words`.
type SumFn = unsafe fn(*const u64, usize) -> u64;

/// The instance of `sum_words` for a step of `step` words (a power of two up to 512).
fn sum_fn(step: usize) -> SumFn {
    match step {
        1 => sum_words::<1>,
        2 => sum_words::<2>,
        4 => sum_words::<4>,
        8 => sum_words::<8>,
        16 => sum_words::<16>,
        32 => sum_words::<32>,
        64 => sum_words::<64>,
        128 => sum_words::<128>,
        256 => sum_words::<256>,
        _ => sum_words::<512>,
    }
}

/// A participant's private array. Memory comes straight from `mmap` so that a forked child
/// gets its own copy on the first write (`touch`) without calling the allocator after `fork`.
pub struct Workload {
    ptr: *mut u64,
    shape: Shape,
    sum_fn: SumFn,
}

// SAFETY: the buffer is owned by this value; threads get it by move, never share it mutably.
unsafe impl Send for Workload {}

impl Workload {
    pub fn new(shape: Shape) -> Result<Self> {
        let bytes = shape.words() * WORD_BYTES;
        let sum_fn = sum_fn(shape.step());
        if bytes == 0 {
            return Ok(Workload {
                ptr: ptr::null_mut(),
                shape,
                sum_fn,
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
                "allocating the {} KiB work array",
                shape.size_kb
            )));
        }
        let w = Workload {
            ptr: p.cast(),
            shape,
            sum_fn,
        };
        // A process forked from another thread of this one (a second ring, the user's own
        // code) would otherwise share these pages copy-on-write: they would stop being this
        // participant's own. `inherit_on_fork` undoes it for the process engine's template.
        w.advise(libc::MADV_DONTFORK)?;
        w.touch();
        Ok(w)
    }

    /// Lets forked children inherit the array (copy-on-write): the process engine's
    /// template, which each child then writes into its own copy.
    pub fn inherit_on_fork(&self) -> Result<()> {
        self.advise(libc::MADV_DOFORK)
    }

    fn advise(&self, advice: i32) -> Result<()> {
        if self.ptr.is_null() {
            return Ok(());
        }
        let bytes = self.shape.words() * WORD_BYTES;
        // SAFETY: advice on exactly the mapping this value owns.
        if unsafe { libc::madvise(self.ptr.cast(), bytes, advice) } != 0 {
            return Err(Error::last_os(format!(
                "madvise on the {} KiB work array",
                self.shape.size_kb
            )));
        }
        Ok(())
    }

    pub fn size_kb(&self) -> usize {
        self.shape.size_kb
    }

    /// Writes the pattern `a[i] = i` into every 8-byte word: faults every page in (and, in a
    /// forked child, makes the copy-on-write pages its own) before the first timed trip.
    /// Only plain stores, so it is safe to run between `fork` and `_exit`.
    pub fn touch(&self) {
        if !self.shape.written {
            return;
        }
        for i in 0..self.shape.words() {
            // SAFETY: i < words, inside the mapping this value owns.
            unsafe { ptr::write_volatile(self.ptr.add(i), i as u64) };
        }
    }

    /// One pass over the array (see the module doc); the result is the workload's checksum.
    /// Allocation-free, no system calls.
    #[inline]
    pub fn sum(&self) -> u64 {
        let loads = self.shape.loads();
        if loads == 0 {
            return 0;
        }
        // SAFETY: the mapping holds `words` aligned u64s and `sum_fn` reads `loads` of them,
        // the last at index (loads − 1) × step < words.
        unsafe { (self.sum_fn)(self.ptr, loads) }
    }

    /// KiB of the array that are resident and this process's own: pages present, not
    /// swapped, mapped exclusively (`/proc/self/pagemap` bits 63, 62 and 56). `None` where
    /// pagemap cannot be read. Raw syscalls into a buffer on the stack, so a forked child may
    /// call it; it reads about 2 KiB of pagemap per MiB of array.
    pub fn resident_kb(&self) -> Option<u64> {
        let pages = (self.shape.words() * WORD_BYTES).div_ceil(PAGE_BYTES);
        if pages == 0 {
            return Some(0);
        }
        // SAFETY: open/pread/close with a static path and a buffer of the length passed.
        unsafe {
            let fd = libc::open(
                c"/proc/self/pagemap".as_ptr(),
                libc::O_RDONLY | libc::O_CLOEXEC,
            );
            if fd < 0 {
                return None;
            }
            let mut entries = [0u64; 512];
            let first = self.ptr as usize / PAGE_BYTES;
            let (mut done, mut own) = (0usize, 0u64);
            while done < pages {
                let n = (pages - done).min(entries.len());
                let want = n * 8;
                let offset = ((first + done) * 8) as libc::off_t;
                let got = libc::pread(fd, entries.as_mut_ptr().cast(), want, offset);
                if got != want as isize {
                    libc::close(fd);
                    return None;
                }
                own += entries[..n].iter().filter(|&&e| is_own(e)).count() as u64;
                done += n;
            }
            libc::close(fd);
            // A partial last page (sizes that are not whole pages) counts by its KiB.
            Some((own * PAGE_BYTES as u64 / 1024).min(self.shape.size_kb as u64))
        }
    }
}

/// A pagemap entry of a page that is present, not swapped, and mapped by this process only.
fn is_own(entry: u64) -> bool {
    const PRESENT: u64 = 1 << 63;
    const SWAPPED: u64 = 1 << 62;
    const EXCLUSIVE: u64 = 1 << 56;
    entry & (PRESENT | SWAPPED | EXCLUSIVE) == PRESENT | EXCLUSIVE
}

impl Drop for Workload {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: unmapping exactly the mapping created in `new`.
            unsafe { libc::munmap(self.ptr.cast(), self.shape.words() * WORD_BYTES) };
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

/// Sums `loads` 8-byte words from `p`, one every `STEP` words, as lmbench3's `bread` does at
/// `STEP` = 1: unrolled blocks of 128 loads, then blocks of 16, then single loads, every load
/// volatile. Never inlined, so the code (and its instruction-cache footprint) is one fixed
/// function per step; `STEP` is a constant in each load's displacement.
///
/// # Safety
/// `p` must point to at least `(loads − 1) × STEP + 1` readable, initialised, aligned `u64`s.
#[inline(never)]
unsafe fn sum_words<const STEP: usize>(mut p: *const u64, mut loads: usize) -> u64 {
    let mut sum = 0u64;
    while loads >= BLOCK_WORDS {
        let mut block = 0u64;
        let mut k = 0usize;
        // 2^7 = 128 terms; `k` is a constant after unrolling, so each load has its own
        // displacement, and `0 + a[0]` folds into a plain load.
        x2! { x2! { x2! { x2! { x2! { x2! { x2! {
            block = block.wrapping_add(ptr::read_volatile(p.add(k * STEP)));
            k += 1;
        } } } } } } }
        debug_assert_eq!(k, BLOCK_WORDS);
        sum = sum.wrapping_add(opaque(block));
        loads -= BLOCK_WORDS;
        // The last block's pointer may point past the array; it is never read then.
        p = p.wrapping_add(BLOCK_WORDS * STEP);
    }
    while loads >= TAIL_WORDS {
        let mut block = 0u64;
        let mut k = 0usize;
        x2! { x2! { x2! { x2! {
            block = block.wrapping_add(ptr::read_volatile(p.add(k * STEP)));
            k += 1;
        } } } }
        debug_assert_eq!(k, TAIL_WORDS);
        sum = sum.wrapping_add(opaque(block));
        loads -= TAIL_WORDS;
        p = p.wrapping_add(TAIL_WORDS * STEP);
    }
    while loads > 0 {
        sum = sum.wrapping_add(ptr::read_volatile(p));
        loads -= 1;
        p = p.wrapping_add(STEP);
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_word(kb: usize) -> Workload {
        Workload::new(Shape::every_word(kb).unwrap()).unwrap()
    }

    #[test]
    fn zero_size_does_nothing() {
        let w = every_word(0);
        assert_eq!(w.sum(), 0);
        assert_eq!(Shape::every_word(0).unwrap().expected_sum(), 0);
        assert_eq!(w.resident_kb(), Some(0));
    }

    #[test]
    fn checksum_matches_pattern() {
        for kb in [1, 4, 6, 16, 64, 260] {
            let w = every_word(kb);
            assert_eq!(w.size_kb(), kb);
            assert_eq!(w.sum(), w.shape.expected_sum(), "size {kb}");
            let n = kb as u64 * 128;
            assert_eq!(w.sum(), (0..n).sum::<u64>(), "size {kb}");
        }
    }

    #[test]
    fn every_stride_sums_the_words_it_reads() {
        for stride in [8, 16, 64, 512, 4096] {
            for kb in [1, 3, 4, 64, 100] {
                let shape = Shape::new(kb, stride).unwrap();
                let w = Workload::new(shape).unwrap();
                let (n, step) = (kb as u64 * 128, stride as u64 / 8);
                let want: u64 = (0..n).step_by(step as usize).sum();
                assert_eq!(w.sum(), want, "{kb} KiB at stride {stride}");
                assert_eq!(shape.expected_sum(), want, "{kb} KiB at stride {stride}");
            }
        }
    }

    #[test]
    fn a_stride_outside_the_range_names_the_parameter() {
        for bad in [0, 4, 12, 24, 100, 8192] {
            let e = Shape::new(64, bad).unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::Invalid {
                        param: "stride_bytes",
                        ..
                    }
                ),
                "{bad}: {e}"
            );
            assert!(e.to_string().contains("power of two"), "{e}");
        }
    }

    #[test]
    fn largest_checksum_does_not_wrap() {
        let n = (MAX_SIZE_KB * 128) as u64;
        let shape = Shape::every_word(MAX_SIZE_KB).unwrap();
        assert_eq!(shape.expected_sum(), n / 2 * (n - 1));
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
                unsafe { sum_words::<1>(a.as_ptr(), words) },
                want,
                "{words} words"
            );
        }
    }

    #[test]
    fn absurd_size_is_rejected() {
        let e = Shape::every_word(MAX_SIZE_KB + 1).err().unwrap();
        assert!(matches!(
            e,
            Error::Invalid {
                param: "size_kb",
                ..
            }
        ));
    }

    #[test]
    fn a_written_array_is_resident_and_its_own() {
        for kb in [1, 4, 6, 1024] {
            assert_eq!(every_word(kb).resident_kb(), Some(kb as u64), "{kb} KiB");
        }
    }

    #[test]
    fn an_array_never_written_reads_the_zero_page_and_is_not_resident() {
        let shape = Shape::every_word(256).unwrap().never_written();
        let w = Workload::new(shape).unwrap();
        // Reading maps the shared zero page into every page of the array.
        assert_eq!(w.sum(), 0);
        assert_eq!(w.sum(), shape.expected_sum());
        assert_eq!(w.resident_kb(), Some(0));
    }

    #[test]
    fn a_forked_child_owns_only_the_pages_it_wrote() {
        let w = every_word(64);
        w.inherit_on_fork().unwrap();
        // SAFETY: the child only reads pagemap (raw syscalls), writes and `_exit`s.
        unsafe {
            match libc::fork() {
                0 => {
                    let before = w.resident_kb();
                    w.touch();
                    let after = w.resident_kb();
                    let ok = before == Some(0) && after == Some(64);
                    libc::_exit(if ok { 0 } else { 1 });
                }
                pid => {
                    let mut status = 0;
                    assert_eq!(libc::waitpid(pid, &mut status, 0), pid);
                    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
                }
            }
        }
    }
}
