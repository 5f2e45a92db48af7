//! Memory on a named NUMA node, verified. While a cell runs, the calling thread's memory
//! policy binds to one node (`MPOL_BIND`); the participants inherit it (threads and forked
//! children copy their creator's policy), so every page the ring first touches — the token's
//! shared words, pipe buffers, stacks, work arrays — comes from that node, and `MPOL_BIND`
//! never falls back to another. Verified with a page faulted under the same policy just
//! before the cell, whose node `move_pages` reports.

use crate::error::{Error, Result};
use crate::sys::Shared;
use std::ffi::c_ulong;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bits in the node masks passed to the kernel: as many nodes as Linux supports.
const MASK_BITS: usize = 1024;
const WORDS: usize = MASK_BITS / c_ulong::BITS as usize;

type Mask = [c_ulong; WORDS];

fn set_mempolicy(mode: i32, mask: Option<&Mask>) -> i64 {
    let ptr = mask.map_or(std::ptr::null(), |m| m.as_ptr());
    // SAFETY: the mask (or null for MPOL_DEFAULT) holds MASK_BITS bits, as maxnode says.
    unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, ptr, MASK_BITS + 1) }
}

/// The calling thread's memory policy bound to one node until dropped, then restored.
pub struct Bound {
    old_mode: i32,
    old_mask: Mask,
}

/// Binds the calling thread's allocations to `node`.
pub fn bind(node: usize) -> Result<Bound> {
    if node >= MASK_BITS {
        return Err(Error::invalid(
            "memory_node",
            format!("must be below {MASK_BITS}, got {node}"),
        ));
    }
    let mut old = Bound {
        old_mode: 0,
        old_mask: [0; WORDS],
    };
    // SAFETY: valid out-pointers for the mode and a mask of MASK_BITS bits; no address.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut old.old_mode as *mut i32,
            old.old_mask.as_mut_ptr(),
            MASK_BITS + 1,
            std::ptr::null::<u8>(),
            0 as c_ulong,
        )
    };
    if rc != 0 {
        return Err(numa_error("reading this thread's memory policy"));
    }
    let mut mask: Mask = [0; WORDS];
    let bits = c_ulong::BITS as usize;
    mask[node / bits] |= 1 << (node % bits);
    if set_mempolicy(libc::MPOL_BIND, Some(&mask)) != 0 {
        return Err(numa_error(&format!("binding memory to NUMA node {node}")));
    }
    Ok(old)
}

impl Drop for Bound {
    fn drop(&mut self) {
        let mask = (self.old_mode != libc::MPOL_DEFAULT).then_some(&self.old_mask);
        set_mempolicy(self.old_mode, mask);
    }
}

fn numa_error(what: &str) -> Error {
    let errno = crate::error::errno();
    match errno {
        libc::ENOSYS => Error::Os {
            errno,
            context: format!("{what}: this kernel has no NUMA support"),
            hint: "leave memory_node unset on a machine without NUMA",
        },
        libc::EINVAL => Error::Os {
            errno,
            context: format!("{what}: the kernel refused the node"),
            hint: "the node may have no memory or lie outside this cgroup's cpuset.mems",
        },
        _ => Error::os(errno, what.to_string()),
    }
}

/// The node a page faulted now, under the calling thread's policy, lands on (as
/// `move_pages` reports it: a node id, or a negative errno).
pub fn probe_node() -> Result<i32> {
    let page: Shared<AtomicU64> = Shared::new(512)?;
    page[0].store(1, Ordering::Relaxed);
    let mut addr = &page[0] as *const AtomicU64 as *mut libc::c_void;
    let mut status: i32 = i32::MIN;
    // SAFETY: one page address of our own mapping; nodes NULL asks where it is, into status.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            0,
            1 as c_ulong,
            &mut addr as *mut *mut libc::c_void,
            std::ptr::null::<i32>(),
            &mut status as *mut i32,
            0,
        )
    };
    if rc < 0 {
        return Err(numa_error("asking move_pages where a page is"));
    }
    Ok(status)
}

/// What a cell's memory placement came to: the node asked for and the node the probe page
/// landed on (a negative errno where move_pages could not tell).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    pub node: usize,
    pub seen: i32,
}

impl Placed {
    pub fn verified(&self) -> bool {
        usize::try_from(self.seen) == Ok(self.node)
    }

    /// Why the placement is not verified, for the result's warnings.
    pub fn problem(&self, cell: &str) -> Option<String> {
        if self.verified() {
            return None;
        }
        Some(if self.seen < 0 {
            let why = std::io::Error::from_raw_os_error(-self.seen);
            format!(
                "{cell}: memory placement on node {} not verified: {why}",
                self.node
            )
        } else {
            format!(
                "{cell}: memory was to be on node {} but a page landed on node {}",
                self.node, self.seen
            )
        })
    }
}

/// Binds to `node`, faults a probe page and records where it landed.
pub fn place(node: usize) -> Result<(Bound, Placed)> {
    let bound = bind(node)?;
    let seen = probe_node()?;
    Ok((bound, Placed { node, seen }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placement_is_verified_only_where_the_page_landed() {
        let ok = Placed { node: 1, seen: 1 };
        assert!(ok.verified() && ok.problem("0->4").is_none());
        let elsewhere = Placed { node: 1, seen: 0 };
        assert!(!elsewhere.verified());
        let text = elsewhere.problem("0->4").unwrap();
        assert!(
            text.contains("node 1") && text.contains("landed on node 0"),
            "{text}"
        );
        let unknown = Placed {
            node: 0,
            seen: -libc::ENOENT,
        };
        assert!(!unknown.verified());
        assert!(unknown.problem("1->1").unwrap().contains("not verified"));
    }

    #[test]
    fn node_0_binds_verifies_and_restores_the_policy() {
        let mode = || {
            let mut m = -1;
            // SAFETY: out-pointer for the mode only; no mask, no address.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_get_mempolicy,
                    &mut m as *mut i32,
                    std::ptr::null_mut::<c_ulong>(),
                    0 as c_ulong,
                    std::ptr::null::<u8>(),
                    0 as c_ulong,
                )
            };
            assert_eq!(rc, 0);
            m
        };
        let before = mode();
        {
            let (_bound, placed) = place(0).unwrap();
            assert_eq!(mode(), libc::MPOL_BIND);
            assert!(placed.verified(), "{placed:?}");
        }
        assert_eq!(mode(), before);
        assert!(matches!(
            bind(MASK_BITS),
            Err(Error::Invalid {
                param: "memory_node",
                ..
            })
        ));
        // A node that does not exist is the kernel's refusal, with a hint.
        assert!(matches!(bind(MASK_BITS - 1), Err(Error::Os { .. })));
    }
}
