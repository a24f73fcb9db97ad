//! Linux: a stdio server dies with lousho's process, even when lousho is
//! killed with SIGKILL and cannot stop it, through `PR_SET_PDEATHSIG`.
//!
//! The kernel sends the parent-death signal when the *thread* that forked the
//! child exits, not the process. A tokio worker or blocking-pool thread can
//! exit long before the process does (the blocking pool retires idle threads
//! after seconds), so every server is forked from one dedicated thread that
//! lives as long as the process.
//!
//! This module holds lousho's only `unsafe` block: `pre_exec`, which runs in
//! the forked child before `exec` (see the SAFETY note).
#![allow(unsafe_code)]

use std::io;
use std::sync::OnceLock;
use std::sync::mpsc;

type Job = Box<dyn FnOnce() + Send>;

/// Sets SIGKILL as `cmd`'s parent-death signal. If lousho already died
/// between fork and `prctl`, the child fails to start instead of running
/// orphaned.
pub(super) fn kill_with_parent(cmd: &mut tokio::process::Command) {
    let parent = nix::unistd::getpid();
    let pre_exec = move || -> io::Result<()> {
        nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)?;
        if nix::unistd::getppid() != parent {
            return Err(io::Error::from(nix::errno::Errno::ESRCH));
        }
        Ok(())
    };
    // SAFETY: the closure runs in the forked child before `exec`. It only makes
    // the async-signal-safe system calls prctl(2) and getppid(2), takes no lock
    // and does not allocate (the error is built from a raw OS error code).
    unsafe {
        cmd.pre_exec(pre_exec);
    }
}

/// Runs `spawn` (which forks) on the process-lifetime spawner thread, inside
/// the caller's tokio runtime, and returns its result. The caller's task
/// waits without holding its worker thread, so connects to several servers
/// overlap: one forks while the others' handshakes run.
pub(super) async fn on_spawner_thread<T, F>(spawn: F) -> io::Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> io::Result<T> + Send + 'static,
{
    let runtime = tokio::runtime::Handle::try_current().ok();
    let (reply, answer) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let _entered = runtime.as_ref().map(tokio::runtime::Handle::enter);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(spawn))
            .unwrap_or_else(|_| Err(io::Error::other("spawning the server panicked")));
        let _ = reply.send(result);
    });
    let gone = || io::Error::other("lousho's process-spawning thread is not running");
    spawner().ok_or_else(gone)?.send(job).map_err(|_| gone())?;
    answer.await.map_err(|_| gone())?
}

fn spawner() -> Option<&'static mpsc::Sender<Job>> {
    static SPAWNER: OnceLock<Option<mpsc::Sender<Job>>> = OnceLock::new();
    SPAWNER
        .get_or_init(|| {
            let (jobs, queue) = mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("lousho-spawner".into())
                .spawn(move || {
                    for job in queue {
                        job();
                    }
                })
                .ok()
                .map(|_| jobs)
        })
        .as_ref()
}
