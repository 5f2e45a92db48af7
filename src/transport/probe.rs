//! Whether this kernel offers a wake-up path a transport needs: asked once per process, before
//! any participant starts, so that a transport the kernel lacks is refused with the kernel
//! version it needs instead of failing in a forked child.
//!
//! `CTXBENCH_KERNEL_LACKS` (a comma-separated list of `Need::key`s) makes the probe answer
//! "missing" for those: how tests show the refusal of a kernel this machine is not.

use crate::error::Error;
use crate::host::restrictions::{self, kernel_release, Host, Kind};
use std::path::Path;
use std::sync::OnceLock;

/// What a transport needs from the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// The futex2 `futex_waitv` syscall.
    FutexWaitv,
    /// io_uring itself: `io_uring_setup` allowed (not disabled by sysctl or seccomp).
    IoUring,
    /// `IORING_OP_MSG_RING`.
    MsgRing,
    /// `IORING_OP_FUTEX_WAIT` and `IORING_OP_FUTEX_WAKE`.
    UringFutex,
    /// `IORING_OP_READ` and `IORING_OP_WRITE`.
    UringRead,
}

pub const LACKS_VAR: &str = "CTXBENCH_KERNEL_LACKS";

impl Need {
    const ALL: [Need; 5] = [
        Need::FutexWaitv,
        Need::IoUring,
        Need::MsgRing,
        Need::UringFutex,
        Need::UringRead,
    ];

    /// The name `CTXBENCH_KERNEL_LACKS` uses.
    pub fn key(self) -> &'static str {
        match self {
            Need::FutexWaitv => "futex_waitv",
            Need::IoUring => "io_uring",
            Need::MsgRing => "msg_ring",
            Need::UringFutex => "uring_futex",
            Need::UringRead => "uring_read",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Need::FutexWaitv => "the futex_waitv syscall (futex2)",
            Need::IoUring => "io_uring",
            Need::MsgRing => "io_uring's IORING_OP_MSG_RING",
            Need::UringFutex => "io_uring's IORING_OP_FUTEX_WAIT and IORING_OP_FUTEX_WAKE",
            Need::UringRead => "io_uring's IORING_OP_READ and IORING_OP_WRITE",
        }
    }

    /// The first mainline Linux release that has it.
    pub fn since(self) -> &'static str {
        match self {
            Need::FutexWaitv => "5.16",
            Need::IoUring => "5.1",
            Need::MsgRing => "5.18",
            Need::UringFutex => "6.7",
            Need::UringRead => "5.6",
        }
    }

    /// The errno of the probe, `None` when the kernel offers it. Asked once per process.
    fn probed(self) -> Option<i32> {
        static CACHE: [OnceLock<Option<i32>>; 5] = [const { OnceLock::new() }; 5];
        let k = Need::ALL.iter().position(|&n| n == self).unwrap_or(0);
        *CACHE[k].get_or_init(|| match self {
            Need::FutexWaitv => futex_waitv_errno(),
            Need::IoUring => uring_op_errno(None),
            Need::MsgRing => uring_op_errno(Some(io_uring::opcode::MsgRingData::CODE)),
            Need::UringFutex => uring_op_errno(Some(io_uring::opcode::FutexWait::CODE))
                .or_else(|| uring_op_errno(Some(io_uring::opcode::FutexWake::CODE))),
            Need::UringRead => uring_op_errno(Some(io_uring::opcode::Read::CODE))
                .or_else(|| uring_op_errno(Some(io_uring::opcode::Write::CODE))),
        })
    }
}

/// Checks that the kernel offers everything `transport` needs, in order; the first missing
/// piece is an `OSError` naming it and the kernel release that brought it.
pub fn require(transport: &str, needs: &[Need]) -> crate::error::Result<()> {
    let faked = std::env::var(LACKS_VAR).unwrap_or_default();
    for &need in needs {
        let errno = if faked.split(',').any(|k| k.trim() == need.key()) {
            Some(libc::ENOSYS)
        } else {
            need.probed()
        };
        if let Some(errno) = errno {
            return Err(refusal(transport, need, errno));
        }
    }
    Ok(())
}

/// The refusal of `transport` for lack of `need`. io_uring itself refused is a restriction
/// of the host (`host::restrictions`), named with its cause and what to do.
fn refusal(transport: &str, need: Need, errno: i32) -> Error {
    let (why, hint) = match need {
        Need::IoUring => {
            let kind = Kind::IoUringRefused;
            let cause = restrictions::io_uring_cause(&Host::at(Path::new("/sys")), errno);
            (format!("restriction {}: {cause}", kind.name()), kind.hint())
        }
        _ => (
            "this kernel does not offer it".to_string(),
            "choose another transport, e.g. \"eventfd\" or \"futex\"",
        ),
    };
    Error::Os {
        errno,
        context: format!(
            "transport {transport:?} needs {} (Linux >= {}); {why} (running Linux {})",
            need.what(),
            need.since(),
            kernel_release(),
        ),
        hint,
    }
}

/// futex_waitv with no futexes: EINVAL where the syscall exists, ENOSYS where it does not.
fn futex_waitv_errno() -> Option<i32> {
    // SAFETY: a syscall with no futexes and null pointers: the kernel reads nothing.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex_waitv,
            std::ptr::null::<u8>(),
            0u32,
            0u32,
            std::ptr::null::<libc::timespec>(),
            libc::CLOCK_MONOTONIC,
        )
    };
    match (r, std::io::Error::last_os_error().raw_os_error()) {
        (0, _) | (_, Some(libc::EINVAL)) => None,
        (_, e) => Some(e.unwrap_or(libc::ENOSYS)),
    }
}

/// Whether an io_uring can be made and (with `op`) offers that opcode.
fn uring_op_errno(op: Option<u8>) -> Option<i32> {
    let ring = match io_uring::IoUring::new(2) {
        Ok(r) => r,
        Err(e) => return Some(e.raw_os_error().unwrap_or(libc::ENOSYS)),
    };
    let op = op?;
    let mut probe = io_uring::Probe::new();
    if ring.submitter().register_probe(&mut probe).is_err() || !probe.is_supported(op) {
        return Some(libc::ENOSYS);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_need_is_refused_with_the_kernel_it_needs() {
        let e = refusal("msg_ring", Need::MsgRing, libc::ENOSYS).to_string();
        assert!(
            e.contains("transport \"msg_ring\" needs io_uring's IORING_OP_MSG_RING"),
            "{e}"
        );
        assert!(e.contains("(Linux >= 5.18)"), "{e}");
        assert!(
            e.contains(&format!("running Linux {}", kernel_release())),
            "{e}"
        );
        let e = refusal("uring_futex", Need::IoUring, libc::EPERM).to_string();
        assert!(e.contains("restriction io_uring_refused: "), "{e}");
        assert!(e.contains("io_uring_disabled=0"), "names what to do: {e}");
    }

    #[test]
    fn every_need_has_its_own_key_and_release() {
        let keys: Vec<_> = Need::ALL.iter().map(|n| n.key()).collect();
        assert_eq!(
            keys,
            [
                "futex_waitv",
                "io_uring",
                "msg_ring",
                "uring_futex",
                "uring_read"
            ]
        );
        assert_eq!(Need::UringFutex.since(), "6.7");
        assert_eq!(Need::FutexWaitv.since(), "5.16");
    }
}
