//! A stdio server's child process: spawned in its own process group with
//! kill-on-drop; stopped by closing stdin, then SIGTERM to the group, then
//! SIGKILL, and reaped — grandchildren (the `node` under `npx`) included.
//! On Linux the server also dies with lousho's process ([`parent_death`]).

#[cfg(target_os = "linux")]
mod parent_death;

use super::config::{StderrMode, StdioTransport};
use super::stderr::StderrBuffer;
use process_wrap::tokio::{ChildWrapper, CommandWrap, KillOnDrop, ProcessGroup};
use std::process::Stdio;
use std::time::Duration;
use tokio::process::{ChildStdin, ChildStdout};

/// How long a server gets to exit after its stdin closes.
const STDIN_GRACE: Duration = Duration::from_millis(500);
/// How long the group gets after SIGTERM before SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(2);
/// How often the group is checked while waiting.
const POLL: Duration = Duration::from_millis(10);

/// Why a server process could not be started.
#[derive(Debug)]
pub(crate) enum SpawnError {
    /// The working directory is missing or not a directory.
    WorkingDirectory(std::path::PathBuf, std::io::Error),
    /// The command could not be run.
    Command(std::io::Error),
}

/// Why `dir` cannot be a child's working directory, if it cannot.
fn unusable_dir(dir: &std::path::Path) -> Option<std::io::Error> {
    match std::fs::metadata(dir) {
        Err(e) => Some(e),
        Ok(m) if !m.is_dir() => Some(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            "not a directory",
        )),
        Ok(_) => None,
    }
}

/// A running stdio server process.
pub(crate) struct StdioProcess {
    child: Option<Box<dyn ChildWrapper>>,
    pgid: Option<i32>,
    stderr: Option<StderrBuffer>,
    stderr_task: Option<tokio::task::JoinHandle<()>>,
}

impl StdioProcess {
    /// Spawns the command; returns the process and its stdout/stdin.
    pub(crate) async fn spawn(
        config: &StdioTransport,
    ) -> Result<(Self, ChildStdout, ChildStdin), SpawnError> {
        Self::spawn_command(config).await.map_err(|e| {
            // A missing `cwd` fails the spawn with the same ENOENT as a
            // missing command: say which it was.
            match config
                .cwd
                .as_deref()
                .and_then(|dir| Some((dir, unusable_dir(dir)?)))
            {
                Some((dir, why)) => SpawnError::WorkingDirectory(dir.to_owned(), why),
                None => SpawnError::Command(e),
            }
        })
    }

    async fn spawn_command(
        config: &StdioTransport,
    ) -> std::io::Result<(Self, ChildStdout, ChildStdin)> {
        let mut cmd = tokio::process::Command::new(&config.command);
        // `env` is added to the inherited environment (PATH and the like stay).
        cmd.args(&config.args)
            .envs(&config.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        if let Some(dir) = &config.cwd {
            cmd.current_dir(dir);
        }
        let capture = match config.stderr {
            StderrMode::Inherit => {
                cmd.stderr(Stdio::inherit());
                None
            }
            StderrMode::Capture(bytes) => {
                cmd.stderr(Stdio::piped());
                Some(StderrBuffer::new(bytes))
            }
        };
        #[cfg(target_os = "linux")]
        parent_death::kill_with_parent(&mut cmd);
        let spawn = move || {
            let mut wrapped = CommandWrap::from(cmd);
            wrapped.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
            wrapped.spawn()
        };
        #[cfg(target_os = "linux")]
        let mut child = parent_death::on_spawner_thread(spawn).await?;
        #[cfg(not(target_os = "linux"))]
        let mut child = spawn()?;
        let pgid = child.id().and_then(|id| i32::try_from(id).ok());
        let (Some(stdout), Some(stdin)) = (child.stdout().take(), child.stdin().take()) else {
            return Err(std::io::Error::other(
                "the child's stdio pipes were not set up",
            ));
        };
        let stderr_task = match (&capture, child.stderr().take()) {
            (Some(buf), Some(pipe)) => Some(buf.spawn_reader(pipe)),
            _ => None,
        };
        let process = Self {
            child: Some(child),
            pgid,
            stderr: capture,
            stderr_task,
        };
        Ok((process, stdout, stdin))
    }

    /// The captured stderr's tail, when capture is on and something was written.
    pub(crate) fn stderr_buffer(&self) -> Option<StderrBuffer> {
        self.stderr.clone()
    }

    /// The leader's exit status once it has exited (reaping it).
    pub(crate) fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    }

    /// Stops the whole group: the caller has closed stdin already; waits a
    /// little, then SIGTERM, then SIGKILL; reaps the leader.
    pub(crate) async fn shutdown(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pgid = self.pgid;
        if !wait_group(&mut child, pgid, STDIN_GRACE).await {
            signal_group(pgid, nix::sys::signal::Signal::SIGTERM);
            if !wait_group(&mut child, pgid, TERM_GRACE).await {
                signal_group(pgid, nix::sys::signal::Signal::SIGKILL);
                let _ = child.wait().await;
                // Give the kernel a moment to take the killed members away.
                let _ = wait_group(&mut child, pgid, Duration::from_millis(500)).await;
            }
        }
        let _ = child.wait().await;
        if let Some(task) = self.stderr_task.take() {
            // The pipe closes once every member is gone; don't wait on strays.
            if tokio::time::timeout(Duration::from_millis(200), task)
                .await
                .is_err()
            {
                tracing::debug!("stderr reader still open after shutdown; dropping it");
            }
        }
    }
}

/// Waits until the leader has exited and no member of the group is left;
/// true when that happened within `limit`.
async fn wait_group(child: &mut Box<dyn ChildWrapper>, pgid: Option<i32>, limit: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let leader_gone = !matches!(child.try_wait(), Ok(None));
        if leader_gone && !group_alive(pgid) {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Whether any process is left in the group (signal 0 probes without sending).
fn group_alive(pgid: Option<i32>) -> bool {
    match pgid {
        Some(pgid) => nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), None).is_ok(),
        None => false,
    }
}

fn signal_group(pgid: Option<i32>, signal: nix::sys::signal::Signal) {
    if let Some(pgid) = pgid
        && let Err(e) = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), signal)
        && e != nix::errno::Errno::ESRCH
    {
        tracing::debug!(pgid, %signal, error = %e, "could not signal the server's process group");
    }
}

impl Drop for StdioProcess {
    fn drop(&mut self) {
        // Not shut down properly (the runtime is going away, or a connect was
        // abandoned): kill the whole group now, synchronously, and reap the
        // leader in the background when a runtime is still there.
        if let Some(mut child) = self.child.take() {
            signal_group(self.pgid, nix::sys::signal::Signal::SIGKILL);
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    let _ = child.wait().await;
                });
            }
        }
        if let Some(task) = self.stderr_task.take() {
            task.abort();
        }
    }
}
