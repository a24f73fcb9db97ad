//! Linux: server processes dropped without `close()` (a connect abandoned, a
//! client dropped, a runtime shutting down), killed and still to be reaped.
//!
//! They go to one queue, which one thread reaps, as tokio's process module
//! keeps one orphan queue for the children it drops. The thread is started
//! with the first orphan and sleeps in `poll(2)` on the orphans' pidfds
//! (readable once a process has exited) and a wake-up pipe, so it costs
//! nothing while there is nothing to reap. A thread rather than a tokio task:
//! an orphan is often made while a runtime shuts down, and a task would be
//! dropped with it.

use super::pidfd::try_reap;
use crate::sync::MutexExt;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use std::io::{PipeReader, PipeWriter, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

/// How long the thread sleeps between looks when an orphan has no pidfd (a
/// kernel before 5.3), in milliseconds.
const WITHOUT_PIDFD_MS: u8 = 10;

/// A killed process still to be reaped.
struct Orphan {
    pid: i32,
    /// Readable once it has exited.
    pidfd: Option<OwnedFd>,
}

/// The queue and the reaper thread's wake-up.
struct Queue {
    orphans: Mutex<Vec<Orphan>>,
    wake: PipeWriter,
    /// A wake-up byte is in the pipe and not yet read (at most one is).
    woken: AtomicBool,
}

impl Queue {
    fn wake(&self) {
        if !self.woken.swap(true, Ordering::AcqRel) {
            let _ = (&self.wake).write(&[1]);
        }
    }
}

/// Hands `pid` (already sent SIGKILL) to the reaper.
pub(super) fn adopt(pid: i32, pidfd: Option<OwnedFd>) {
    match queue() {
        Some(queue) => {
            queue.orphans.lock_unpoisoned().push(Orphan { pid, pidfd });
            queue.wake();
        }
        None => {
            tracing::debug!(pid, "no reaper thread; the killed server stays a zombie")
        }
    }
}

/// The queue, its thread started on first use (`None` if it could not be).
fn queue() -> Option<&'static Queue> {
    static QUEUE: OnceLock<Option<Queue>> = OnceLock::new();
    QUEUE
        .get_or_init(|| {
            let (woken_by, wake) = std::io::pipe().ok()?;
            std::thread::Builder::new()
                .name("lousho-reaper".into())
                .spawn(move || {
                    if let Some(queue) = queue() {
                        reap(queue, woken_by);
                    }
                })
                .ok()?;
            Some(Queue {
                orphans: Mutex::new(Vec::new()),
                wake,
                woken: AtomicBool::new(false),
            })
        })
        .as_ref()
}

/// The reaper thread: reaps what has exited, then sleeps until an orphan
/// exits or a new one comes.
fn reap(queue: &Queue, mut woken_by: PipeReader) {
    loop {
        // Taken out so that adopting never waits for the poll below.
        let mut orphans = std::mem::take(&mut *queue.orphans.lock_unpoisoned());
        // Reaped, or not ours to reap (an error): done with.
        orphans.retain(|o| matches!(try_reap(o.pid), Ok(None)));
        let timeout = if orphans.iter().any(|o| o.pidfd.is_none()) {
            PollTimeout::from(WITHOUT_PIDFD_MS)
        } else {
            PollTimeout::NONE
        };
        let mut fds: Vec<PollFd<'_>> = std::iter::once(woken_by.as_fd())
            .chain(
                orphans
                    .iter()
                    .filter_map(|o| o.pidfd.as_ref().map(AsFd::as_fd)),
            )
            .map(|fd| PollFd::new(fd, PollFlags::POLLIN))
            .collect();
        let _ = poll(&mut fds, timeout);
        let woken = fds[0]
            .revents()
            .is_some_and(|r| r.contains(PollFlags::POLLIN));
        drop(fds);
        if woken {
            queue.woken.store(false, Ordering::Release);
            let _ = woken_by.read(&mut [0; 8]);
        }
        queue.orphans.lock_unpoisoned().extend(orphans);
    }
}
