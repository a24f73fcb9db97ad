//! Linux: a stdio server dies with lousho's process, even when lousho is
//! killed with SIGKILL and cannot stop it, through `PR_SET_PDEATHSIG`.
//!
//! The kernel sends the parent-death signal when the *thread* that started
//! the child exits, not the process. A tokio worker or blocking-pool thread can
//! exit long before the process does (the blocking pool retires idle threads
//! after seconds), so every server is started from one dedicated thread that
//! lives as long as the process.
//!
//! The child itself is started by [`super::linux_spawn`].

use std::io;
use std::sync::OnceLock;
use std::sync::mpsc;

type Job = Box<dyn FnOnce() + Send>;

/// Runs `spawn` (which starts a child) on the process-lifetime spawner
/// thread and returns its result. The caller's task
/// waits without holding its worker thread, so connects to several servers
/// overlap: one starts while the others' handshakes run.
pub(super) async fn on_spawner_thread<T, F>(spawn: F) -> io::Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> io::Result<T> + Send + 'static,
{
    let (reply, answer) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
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
