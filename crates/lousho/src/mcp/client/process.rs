//! A stdio server's child process: spawned in its own process group with
//! kill-on-drop; stopped by closing stdin, then SIGTERM to the group, then
//! SIGKILL, and reaped — grandchildren (the `node` under `npx`) included
//! ([`group`]). On Linux the server also dies with lousho's process
//! ([`parent_death`]), is started without `fork` ([`linux_spawn`]), is waited
//! for through [`pidfd`]s, and one dropped without `close()` is reaped by the
//! [`orphans`] thread (elsewhere by tokio's own orphan queue).

mod group;
#[cfg(target_os = "linux")]
mod linux_spawn;
#[cfg(target_os = "linux")]
mod orphans;
#[cfg(target_os = "linux")]
mod parent_death;
#[cfg(target_os = "linux")]
mod pidfd;

use super::config::{StderrMode, StdioTransport};
use super::stderr::StderrBuffer;
use nix::sys::signal::Signal;
use std::time::Duration;

/// The server process's handle.
#[cfg(target_os = "linux")]
type Child = linux_spawn::ServerChild;
#[cfg(not(target_os = "linux"))]
type Child = Box<dyn process_wrap::tokio::ChildWrapper>;
/// lousho's end of the server's stdout.
#[cfg(target_os = "linux")]
pub(crate) type ServerStdout = tokio::net::unix::pipe::Receiver;
#[cfg(not(target_os = "linux"))]
pub(crate) type ServerStdout = tokio::process::ChildStdout;
/// lousho's end of the server's stdin.
#[cfg(target_os = "linux")]
pub(crate) type ServerStdin = tokio::net::unix::pipe::Sender;
#[cfg(not(target_os = "linux"))]
pub(crate) type ServerStdin = tokio::process::ChildStdin;

/// How long a server gets to exit after its stdin closes.
const STDIN_GRACE: Duration = Duration::from_millis(500);
/// How long the group gets after SIGTERM before SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(2);
/// How long the kernel gets to take SIGKILLed members away.
const KILL_GRACE: Duration = Duration::from_millis(500);

/// Why a server process could not be started.
#[derive(Debug)]
pub(crate) enum SpawnError {
    /// The working directory is missing or not a directory.
    WorkingDirectory(std::path::PathBuf, std::io::Error),
    /// The command could not be run.
    Command(std::io::Error),
}

/// The buffer for the server's stderr, when it is captured.
fn stderr_capture(config: &StdioTransport) -> Option<StderrBuffer> {
    match config.stderr {
        StderrMode::Capture(bytes) => Some(StderrBuffer::new(bytes)),
        StderrMode::Inherit => None,
    }
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
    child: Option<Child>,
    pgid: Option<i32>,
    stderr: Option<StderrBuffer>,
    stderr_task: Option<tokio::task::JoinHandle<()>>,
}

impl StdioProcess {
    /// Spawns the command; returns the process and its stdout/stdin.
    pub(crate) async fn spawn(
        config: &StdioTransport,
    ) -> Result<(Self, ServerStdout, ServerStdin), SpawnError> {
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

    #[cfg(target_os = "linux")]
    async fn spawn_command(
        config: &StdioTransport,
    ) -> std::io::Result<(Self, ServerStdout, ServerStdin)> {
        let owned = config.clone();
        let raw = parent_death::on_spawner_thread(move || linux_spawn::spawn(&owned)).await?;
        let spawned = raw.into_spawned()?;
        let capture = stderr_capture(config);
        Ok(Self::started(
            spawned.child,
            capture,
            spawned.stderr,
            spawned.stdout,
            spawned.stdin,
        ))
    }

    #[cfg(not(target_os = "linux"))]
    async fn spawn_command(
        config: &StdioTransport,
    ) -> std::io::Result<(Self, ServerStdout, ServerStdin)> {
        use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
        use std::process::Stdio;
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
        cmd.stderr(match config.stderr {
            StderrMode::Inherit => Stdio::inherit(),
            StderrMode::Capture(_) => Stdio::piped(),
        });
        let mut wrapped = CommandWrap::from(cmd);
        wrapped.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
        let mut child = wrapped.spawn()?;
        let (Some(stdout), Some(stdin)) = (child.stdout().take(), child.stdin().take()) else {
            return Err(std::io::Error::other(
                "the child's stdio pipes were not set up",
            ));
        };
        let stderr = child.stderr().take();
        let capture = stderr_capture(config);
        Ok(Self::started(child, capture, stderr, stdout, stdin))
    }

    /// The process, with a reader copying its stderr into `capture` if set.
    fn started(
        child: Child,
        capture: Option<StderrBuffer>,
        stderr: Option<impl tokio::io::AsyncRead + Unpin + Send + 'static>,
        stdout: ServerStdout,
        stdin: ServerStdin,
    ) -> (Self, ServerStdout, ServerStdin) {
        let pgid = child.id().and_then(|id| i32::try_from(id).ok());
        let stderr_task = match (&capture, stderr) {
            (Some(buf), Some(pipe)) => Some(buf.spawn_reader(pipe)),
            _ => None,
        };
        let process = Self {
            child: Some(child),
            pgid,
            stderr: capture,
            stderr_task,
        };
        (process, stdout, stdin)
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
        if !stopped(&mut child, pgid, STDIN_GRACE).await {
            group::signal(pgid, Signal::SIGTERM);
            if !stopped(&mut child, pgid, TERM_GRACE).await {
                group::signal(pgid, Signal::SIGKILL);
                stopped(&mut child, pgid, KILL_GRACE).await;
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

/// Waits until the leader has exited and no member of its group is left
/// running; true when that happened within `limit`.
async fn stopped(child: &mut Child, pgid: Option<i32>, limit: Duration) -> bool {
    let ended = async {
        let _ = child.wait().await;
        group::members_ended(pgid).await;
    };
    tokio::time::timeout(limit, ended).await.is_ok()
}

impl Drop for StdioProcess {
    fn drop(&mut self) {
        // Not shut down properly (the runtime is going away, or a connect was
        // abandoned): kill the whole group now, synchronously. The dropped
        // leader goes to an orphan queue that reaps it (on Linux lousho's,
        // elsewhere tokio's: its child is `kill_on_drop`).
        if let Some(child) = self.child.take() {
            group::signal(self.pgid, Signal::SIGKILL);
            drop(child);
        }
        if let Some(task) = self.stderr_task.take() {
            task.abort();
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::os::unix::fs::PermissionsExt;
    use tokio::io::AsyncReadExt;

    /// Prints what the child was started with: argv, directory, an added
    /// variable; and a line on stderr.
    const REPORT: &str = r#"printf '%s\n' "$0" "$PWD" "$LOUSHO_SPAWN_TEST"; echo oops >&2"#;

    fn config(command: &str, args: &[&str]) -> StdioTransport {
        StdioTransport {
            command: command.into(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: BTreeMap::new(),
            cwd: None,
            stderr: StderrMode::Inherit,
        }
    }

    /// The child's whole stdout, once it has exited successfully.
    async fn output(
        mut process: StdioProcess,
        mut stdout: ServerStdout,
    ) -> std::io::Result<String> {
        let mut text = String::new();
        stdout.read_to_string(&mut text).await?;
        if let Some(child) = process.child.as_mut() {
            let status = child.wait().await?;
            if !status.success() {
                return Err(std::io::Error::other(format!("{status}")));
            }
        }
        process.shutdown().await;
        Ok(text)
    }

    #[tokio::test]
    async fn a_server_starts_as_std_would_start_it_in_its_own_group() {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config("sh", &["-c", REPORT, "srv-name"]);
        cfg.env.insert("LOUSHO_SPAWN_TEST".into(), "added".into());
        cfg.cwd = Some(dir.path().to_owned());
        cfg.stderr = StderrMode::Capture(64);
        let (process, stdout, _stdin) = StdioProcess::spawn(&cfg).await.unwrap();
        let stderr = process.stderr_buffer().unwrap();
        let text = output(process, stdout).await.unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let cwd = dir.path().canonicalize().unwrap();
        assert_eq!(lines, ["srv-name", cwd.to_str().unwrap(), "added"]);
        // stderr went to the capture buffer.
        for _ in 0..500 {
            if stderr.tail().is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(stderr.tail().as_deref().map(str::trim), Some("oops"));

        // The signal mask and ignored set are what std's spawn gives (read by
        // the started process itself: a shell blocks signals around forks).
        let args = ["-E", "^Sig(Blk|Ign)", "/proc/self/status"];
        let (process, stdout, _stdin) = StdioProcess::spawn(&config("grep", &args)).await.unwrap();
        let ours = output(process, stdout).await.unwrap();
        let std_run = std::process::Command::new("grep")
            .args(args)
            .output()
            .unwrap();
        let theirs = String::from_utf8(std_run.stdout).unwrap();
        // glibc's own signals 32 and 33 are left out: its posix_spawn
        // ignores them in the child, a fork leaves them as they were.
        let masks = |text: &str| -> Vec<(String, u64)> {
            text.lines()
                .map(|line| {
                    let (name, hex) = line.split_once(":\t").unwrap();
                    let bits = u64::from_str_radix(hex, 16).unwrap() & !0x1_8000_0000;
                    (name.to_owned(), bits)
                })
                .collect()
        };
        let ours = masks(&ours);
        assert_eq!(ours, masks(&theirs), "signal state differs from std's");
        assert_eq!(ours[0], ("SigBlk".to_owned(), 0), "no signal is blocked");
        assert_eq!(ours[1].1 & (1 << (13 - 1)), 0, "SIGPIPE is not ignored");

        // Its own process-group leader.
        let args = ["-d", " ", "-f1,5", "/proc/self/stat"];
        let (process, stdout, _stdin) = StdioProcess::spawn(&config("cut", &args)).await.unwrap();
        let stat = output(process, stdout).await.unwrap();
        let (pid, pgrp) = stat.trim().split_once(' ').unwrap();
        assert_eq!(pid, pgrp);
    }

    #[tokio::test]
    async fn the_program_is_looked_up_on_the_childs_path() {
        let dir = tempfile::tempdir().unwrap();
        let denied = dir.path().join("denied");
        std::fs::create_dir(&denied).unwrap();
        let script = |path: &std::path::Path, mode: u32| {
            std::fs::write(path, "#!/bin/sh\necho found \"$@\"\n").unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        // A non-executable match earlier on PATH is skipped, as execvp does.
        script(&denied.join("lousho-path-srv"), 0o644);
        script(&dir.path().join("lousho-path-srv"), 0o755);
        let mut cfg = config("lousho-path-srv", &["a b"]);
        let path = format!("/nonexistent:{}:{}", denied.display(), dir.path().display());
        cfg.env.insert("PATH".into(), path);
        let (process, stdout, _stdin) = StdioProcess::spawn(&cfg).await.unwrap();
        assert_eq!(output(process, stdout).await.unwrap(), "found a b\n");

        // A script without a `#!` line runs through /bin/sh, as execvp runs it.
        let bare = dir.path().join("bare-script");
        std::fs::write(&bare, "echo bare \"$@\"\n").unwrap();
        std::fs::set_permissions(&bare, std::fs::Permissions::from_mode(0o755)).unwrap();
        let cfg_bare = config(bare.to_str().unwrap(), &["x"]);
        let (process, stdout, _stdin) = StdioProcess::spawn(&cfg_bare).await.unwrap();
        assert_eq!(output(process, stdout).await.unwrap(), "bare x\n");

        // Only the non-executable one: permission denied, not "not found".
        let cfg_denied = {
            let mut c = config("lousho-path-srv", &[]);
            c.env.insert("PATH".into(), denied.display().to_string());
            c
        };
        match StdioProcess::spawn(&cfg_denied).await {
            Err(SpawnError::Command(e)) => {
                assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{e}")
            }
            _ => panic!("a non-executable program was started"),
        }
        match StdioProcess::spawn(&config("lousho-no-such-program", &[])).await {
            Err(SpawnError::Command(e)) => assert_eq!(e.kind(), std::io::ErrorKind::NotFound),
            _ => panic!("a missing program was started"),
        }
        let mut missing_dir = config("sh", &["-c", "true"]);
        missing_dir.cwd = Some(dir.path().join("gone"));
        assert!(matches!(
            StdioProcess::spawn(&missing_dir).await,
            Err(SpawnError::WorkingDirectory(..))
        ));
    }
}
