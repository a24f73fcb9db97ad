//! Linux: pidfds, a process's exit as a readable descriptor, and reaping a
//! child without blocking. Unsafe code, as [`linux_spawn`](super::linux_spawn)
//! is: the two system calls, and handing a descriptor to tokio's reactor.
#![allow(unsafe_code)]

use nix::libc;
use std::ffi::c_int;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use tokio::io::unix::AsyncFd;

/// A process's pidfd, registered with the runtime: readable once the process
/// has exited. For any process, not only lousho's children.
pub(super) struct ExitSignal(AsyncFd<OwnedFd>);

impl ExitSignal {
    /// `pid`'s exit signal; `None` when the process is gone or the kernel
    /// has no pidfds (before 5.3). Call it inside a runtime.
    pub(super) fn open(pid: libc::pid_t) -> Option<Self> {
        Self::register(pidfd_open(pid)?).ok()
    }

    pub(super) fn register(pidfd: OwnedFd) -> io::Result<Self> {
        // SAFETY: the OwnedFd owns the pidfd, which nothing replaces or
        // closes while the AsyncFd holds it.
        let fd = unsafe { AsyncFd::register_with_interest(pidfd, tokio::io::Interest::READABLE)? };
        Ok(Self(fd))
    }

    /// Returns once the process has exited.
    pub(super) async fn exited(&self) -> io::Result<()> {
        // Left ready: an exit stays an exit.
        self.0.readable().await?.retain_ready();
        Ok(())
    }

    /// The pidfd, taken away from the runtime.
    pub(super) fn into_fd(self) -> OwnedFd {
        self.0.into_inner()
    }
}

/// `pid`'s exit status if it has exited (reaping it), without waiting.
pub(super) fn try_reap(pid: libc::pid_t) -> io::Result<Option<ExitStatus>> {
    let mut raw: c_int = 0;
    // SAFETY: waitpid(2) on our own child, with a valid out-pointer.
    match unsafe { libc::waitpid(pid, &mut raw, libc::WNOHANG) } {
        0 => Ok(None),
        r if r == pid => Ok(Some(ExitStatus::from_raw(raw))),
        _ => Err(io::Error::last_os_error()),
    }
}

/// A pidfd for `pid`, when the kernel has pidfd_open(2) (5.3+) and the
/// process is there.
pub(super) fn pidfd_open(pid: libc::pid_t) -> Option<OwnedFd> {
    // SAFETY: pidfd_open(2) takes a pid and flags and returns a new
    // descriptor (close-on-exec) that we then own, or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let fd = RawFd::try_from(fd).ok().filter(|fd| *fd >= 0)?;
    // SAFETY: `fd` was just returned by the kernel and is owned by no one else.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}
