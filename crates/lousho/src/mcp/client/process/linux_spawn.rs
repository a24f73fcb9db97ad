//! Linux: starting a stdio server without `fork`.
//!
//! A server must die with lousho's process even when lousho is killed with
//! SIGKILL, so its child sets `PR_SET_PDEATHSIG` before `exec`. The standard
//! library can only run such code in a `fork`ed child (`pre_exec`), and a fork
//! copies the parent's page tables: about 1.2 ms per server for a 16 MiB
//! process and 10 ms for a 256 MiB one, against ~0.1 ms for `posix_spawn`,
//! which cannot set the signal.
//!
//! So the child is started the way `posix_spawn` starts one:
//! `clone(CLONE_VM | CLONE_VFORK)` on a small stack of its own. It shares
//! lousho's memory and the calling thread is suspended until it has called
//! `execve` (or exited), so nothing is copied. Everything it needs (paths,
//! `argv`, `envp`, descriptors) is prepared by the parent beforehand; the
//! child only makes raw system calls: it resets caught signals, sets the
//! parent-death signal, makes itself a process-group leader, moves its pipes
//! onto 0/1/2, changes directory and executes the program, trying each `PATH`
//! entry as `execvp` does. If any step fails, it leaves the error number in
//! shared memory and exits, and the parent reports it as the spawn error.
//!
//! The child is then waited for through a pidfd (readable once it exits),
//! and so are the other members of its group at `close()` ([`ExitSignal`]).
//!
//! Its `unsafe` code and [`pidfd`](super::pidfd)'s are lousho's only.
#![allow(unsafe_code)]

use super::super::config::{StderrMode, StdioTransport};
use super::pidfd::{ExitSignal, pidfd_open, try_reap};
use super::{group, orphans};
use nix::libc;
use nix::sys::signal::Signal;
use std::collections::BTreeMap;
use std::ffi::{CString, OsStr, OsString, c_char, c_int, c_void};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicI32, Ordering};
use tokio::net::unix::pipe;

/// The child's stack. It runs one small function that makes system calls.
const CHILD_STACK: usize = 64 * 1024;
/// `execvp`'s search path when `PATH` is unset.
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// A started server's process and the parent's ends of its pipes.
pub(crate) struct Spawned {
    pub(crate) child: ServerChild,
    pub(crate) stdin: pipe::Sender,
    pub(crate) stdout: pipe::Receiver,
    pub(crate) stderr: Option<pipe::Receiver>,
}

/// What the spawner thread hands back: raw descriptors, wrapped for tokio by
/// the caller (in its own runtime context). Dropped unwrapped (the connect
/// was abandoned while the spawner thread worked), it kills the process.
pub(crate) struct RawSpawn {
    pid: Option<libc::pid_t>,
    pidfd: Option<OwnedFd>,
    stdin: Option<OwnedFd>,
    stdout: Option<OwnedFd>,
    stderr: Option<OwnedFd>,
}

impl RawSpawn {
    /// Registers the descriptors with the caller's tokio runtime.
    pub(crate) fn into_spawned(mut self) -> io::Result<Spawned> {
        let Some(pid) = self.pid.take() else {
            return Err(io::Error::other("the server process was already given up"));
        };
        // From here on `child` kills and reaps the process if anything fails.
        let mut child = ServerChild {
            pid,
            pidfd: None,
            status: None,
        };
        if let Some(fd) = self.pidfd.take() {
            child.pidfd = Some(ExitSignal::register(fd)?);
        }
        let (Some(stdin), Some(stdout)) = (self.stdin.take(), self.stdout.take()) else {
            return Err(io::Error::other("the server's pipes were already given up"));
        };
        Ok(Spawned {
            stdin: pipe::Sender::from_owned_fd(stdin)?,
            stdout: pipe::Receiver::from_owned_fd(stdout)?,
            stderr: self
                .stderr
                .take()
                .map(pipe::Receiver::from_owned_fd)
                .transpose()?,
            child,
        })
    }
}

impl Drop for RawSpawn {
    fn drop(&mut self) {
        if let Some(pid) = self.pid {
            group::signal(Some(pid), Signal::SIGKILL);
            let mut raw = 0;
            // SAFETY: reaping our own child, just sent SIGKILL. This blocks
            // the spawner thread only as long as the kernel takes to end it.
            unsafe { libc::waitpid(pid, &mut raw, 0) };
        }
    }
}

/// A server process started by [`spawn`]: its pid, and its exit once reaped.
/// Dropped before it was reaped, it kills the process's group and hands the
/// process to the [orphan reaper](super::orphans).
pub(crate) struct ServerChild {
    pid: libc::pid_t,
    /// `None` on kernels before 5.3, where waiting polls instead.
    pidfd: Option<ExitSignal>,
    status: Option<ExitStatus>,
}

impl ServerChild {
    /// The process id (also its process group's id).
    pub(crate) fn id(&self) -> Option<u32> {
        u32::try_from(self.pid).ok()
    }

    /// The exit status if the process has exited (reaping it), without waiting.
    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.status = try_reap(self.pid)?;
        }
        Ok(self.status)
    }

    /// Waits for the process to exit and reaps it.
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let status = wait_exit(self.pid, self.pidfd.as_ref()).await?;
        self.status = Some(status);
        Ok(status)
    }
}

impl Drop for ServerChild {
    fn drop(&mut self) {
        if self.status.is_some() {
            return;
        }
        group::signal(Some(self.pid), Signal::SIGKILL);
        if matches!(try_reap(self.pid), Ok(None)) {
            orphans::adopt(self.pid, self.pidfd.take().map(ExitSignal::into_fd));
        }
    }
}

/// Waits for `pid` to exit (through its pidfd when there is one) and reaps it.
async fn wait_exit(pid: libc::pid_t, pidfd: Option<&ExitSignal>) -> io::Result<ExitStatus> {
    let mut pidfd = pidfd;
    loop {
        if let Some(status) = try_reap(pid)? {
            return Ok(status);
        }
        // Once the pidfd has said "exited", the reap above succeeds; should it
        // not, look again in a moment rather than spin on a ready pidfd.
        match pidfd.take() {
            Some(fd) => fd.exited().await?,
            None => tokio::time::sleep(std::time::Duration::from_millis(10)).await,
        }
    }
}

/// Everything the child reads, prepared by the parent. It lives on the
/// parent's stack, which the child shares while the parent is suspended.
struct Plan {
    /// Candidate paths of the program, tried in order (`PATH` lookup).
    programs: Vec<Candidate>,
    argv: Vec<*const c_char>,
    envp: Vec<*const c_char>,
    cwd: Option<CString>,
    stdin: RawFd,
    stdout: RawFd,
    stderr: Option<RawFd>,
    parent: libc::pid_t,
    /// The child's error number when a step failed; 0 after a clean `exec`.
    errno: AtomicI32,
}

/// A path the program may be at.
struct Candidate {
    path: CString,
    /// `/bin/sh path args…`: how `execvp` runs a file the kernel cannot
    /// execute (a script without a `#!` line).
    as_script: Vec<*const c_char>,
}

/// The shell that runs scripts without a `#!` line, as `execvp`'s.
const SHELL: &std::ffi::CStr = c"/bin/sh";

/// Starts `config`'s program as a process-group leader that dies with this
/// thread (run it on the process-lifetime spawner thread), with piped
/// stdin/stdout and stderr as `config.stderr` says.
pub(crate) fn spawn(config: &StdioTransport) -> io::Result<RawSpawn> {
    let env = environment(&config.env);
    let path = env
        .iter()
        .find(|(k, _)| k.as_os_str() == "PATH")
        .map(|(_, v)| v.clone());
    let argv_owned: Vec<CString> = std::iter::once(config.command.as_str())
        .chain(config.args.iter().map(String::as_str))
        .map(|a| c_string(a.as_bytes()))
        .collect::<io::Result<_>>()?;
    let programs = candidates(&config.command, path.as_deref())?
        .into_iter()
        .map(|path| {
            let as_script = [SHELL.as_ptr(), path.as_ptr()]
                .into_iter()
                .chain(argv_owned[1..].iter().map(|a| a.as_ptr()))
                .chain(std::iter::once(std::ptr::null()))
                .collect();
            Candidate { path, as_script }
        })
        .collect();
    let env_owned: Vec<CString> = env
        .into_iter()
        .map(|(k, v)| {
            let mut pair = k.into_vec();
            pair.push(b'=');
            pair.extend_from_slice(v.as_bytes());
            c_string(&pair)
        })
        .collect::<io::Result<_>>()?;
    let cwd = config
        .cwd
        .as_ref()
        .map(|d| c_string(d.as_os_str().as_bytes()))
        .transpose()?;

    let (stdin_child, stdin_parent) = pipe_above_stdio()?;
    let (stdout_parent, stdout_child) = pipe_above_stdio()?;
    let stderr_pipe = match config.stderr {
        StderrMode::Inherit => None,
        StderrMode::Capture(_) => Some(pipe_above_stdio()?),
    };

    let plan = Plan {
        programs,
        argv: null_terminated(&argv_owned),
        envp: null_terminated(&env_owned),
        cwd,
        stdin: stdin_child.as_raw_fd(),
        stdout: stdout_child.as_raw_fd(),
        stderr: stderr_pipe.as_ref().map(|(_, w)| w.as_raw_fd()),
        // SAFETY: getpid(2) cannot fail.
        parent: unsafe { libc::getpid() },
        errno: AtomicI32::new(0),
    };
    let pid = clone_child(&plan)?;
    // The child's ends close here; the child has its own copies on 0/1/2.
    drop((stdin_child, stdout_child));
    let stderr = stderr_pipe.map(|(r, _w)| r);
    let failed = plan.errno.load(Ordering::SeqCst);
    if failed != 0 {
        let mut raw = 0;
        // SAFETY: reaping our own child, which has exited (it never exec'd).
        unsafe { libc::waitpid(pid, &mut raw, 0) };
        return Err(io::Error::from_raw_os_error(failed));
    }
    Ok(RawSpawn {
        pid: Some(pid),
        pidfd: pidfd_open(pid),
        stdin: Some(stdin_parent),
        stdout: Some(stdout_parent),
        stderr,
    })
}

/// Runs [`child_main`] in a `CLONE_VM | CLONE_VFORK` child and returns its
/// pid once it has called `execve` or exited.
fn clone_child(plan: &Plan) -> io::Result<libc::pid_t> {
    let mut stack = vec![0u8; CHILD_STACK];
    // The stack grows down from its 16-byte aligned top.
    let top = (stack.as_mut_ptr() as usize + CHILD_STACK) & !15;
    // SAFETY: sigfillset/pthread_sigmask only touch the sets passed in. All
    // signals are blocked across the clone so that no handler of lousho's
    // runs in the child, which shares lousho's memory; the child resets the
    // handlers and unblocks its signals itself.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
    }
    // SAFETY: `top` is the top of a live, writable stack that outlives the
    // child's use of it (CLONE_VFORK suspends this thread until the child has
    // exec'd or exited), and `plan` stays borrowed for as long. The child
    // runs `child_main`, which only reads `plan` and makes system calls.
    let pid = unsafe {
        libc::clone(
            child_main,
            top as *mut c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            std::ptr::from_ref(plan).cast_mut().cast(),
        )
    };
    let cloned = if pid < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(pid)
    };
    // SAFETY: restores this thread's own signal mask.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    drop(stack);
    cloned
}

/// The child, between `clone` and `execve`. It shares lousho's memory, so it
/// must not allocate, lock, or return into Rust code: only raw system calls
/// on the prepared [`Plan`], then `execve` or `_exit`.
extern "C" fn child_main(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `&Plan` passed to clone(2), alive while the parent
    // is suspended. Every call below is an async-signal-safe system call
    // wrapper on prepared, NUL-terminated data.
    unsafe {
        let plan = &*(arg as *const Plan);
        let fail = |errno: c_int| -> c_int {
            plan.errno.store(errno.max(1), Ordering::SeqCst);
            libc::_exit(127)
        };
        let last = || *libc::__errno_location();

        // Handlers are lousho's code: the child must not run them. Caught
        // signals go back to their defaults (exec would do it anyway);
        // ignored ones stay ignored, except SIGPIPE, which Rust ignores for
        // itself (as std's spawn does). Then the child unblocks everything.
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        for signal in 1..65 {
            let mut current: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut current) == 0
                && (current.sa_sigaction != libc::SIG_IGN || signal == libc::SIGPIPE)
                && current.sa_sigaction != libc::SIG_DFL
            {
                libc::sigaction(signal, &default, std::ptr::null_mut());
            }
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::pthread_sigmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());

        // Die with the thread that started us; if lousho already died, don't
        // start at all.
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
            return fail(last());
        }
        if libc::getppid() != plan.parent {
            return fail(libc::ESRCH);
        }
        if libc::setpgid(0, 0) != 0 {
            return fail(last());
        }
        // The pipes are above 2 (see `pipe_above_stdio`), so no dup2 clobbers
        // another; the copies on 0/1/2 are not close-on-exec.
        let moves = [
            (Some(plan.stdin), 0),
            (Some(plan.stdout), 1),
            (plan.stderr, 2),
        ];
        for (from, to) in moves {
            if let Some(from) = from
                && libc::dup2(from, to) < 0
            {
                return fail(last());
            }
        }
        if let Some(cwd) = &plan.cwd
            && libc::chdir(cwd.as_ptr()) != 0
        {
            return fail(last());
        }
        // execvp's rules: a missing or inaccessible entry moves on to the
        // next one (EACCES is reported if nothing else worked); a file the
        // kernel cannot execute is run by the shell; any other error stops
        // the search.
        let mut denied = false;
        let mut errno = libc::ENOENT;
        for program in &plan.programs {
            let path = program.path.as_ptr();
            libc::execve(path, plan.argv.as_ptr(), plan.envp.as_ptr());
            errno = last();
            match errno {
                libc::ENOEXEC => {
                    libc::execve(
                        SHELL.as_ptr(),
                        program.as_script.as_ptr(),
                        plan.envp.as_ptr(),
                    );
                    return fail(last());
                }
                libc::EACCES => denied = true,
                libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT => {}
                _ => return fail(errno),
            }
        }
        fail(if denied { libc::EACCES } else { errno })
    }
}

/// The inherited environment with `added` on top.
fn environment(added: &BTreeMap<String, String>) -> BTreeMap<OsString, OsString> {
    let mut env: BTreeMap<OsString, OsString> = std::env::vars_os().collect();
    for (k, v) in added {
        env.insert(k.into(), v.into());
    }
    env
}

/// The paths `execvp` would try for `command` with the child's `PATH`.
fn candidates(command: &str, path: Option<&OsStr>) -> io::Result<Vec<CString>> {
    if command.is_empty() {
        return Err(io::Error::from_raw_os_error(libc::ENOENT));
    }
    if command.contains('/') {
        return Ok(vec![c_string(command.as_bytes())?]);
    }
    let path = path.unwrap_or(OsStr::new(DEFAULT_PATH));
    std::env::split_paths(path)
        .map(|dir| c_string(dir.join(command).as_os_str().as_bytes()))
        .collect()
}

fn c_string(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the command, an argument, an environment variable or the directory contains a NUL byte",
        )
    })
}

fn null_terminated(strings: &[CString]) -> Vec<*const c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// A close-on-exec pipe (read end, write end) whose descriptors are both
/// above 2, so moving them onto the child's 0/1/2 never overwrites one
/// another (lousho may run with its own stdio closed).
fn pipe_above_stdio() -> io::Result<(OwnedFd, OwnedFd)> {
    let (read, write) = std::io::pipe()?;
    let lift = |fd: OwnedFd| -> io::Result<OwnedFd> {
        // try_clone duplicates with F_DUPFD_CLOEXEC from 3 up.
        if fd.as_raw_fd() < 3 {
            fd.try_clone()
        } else {
            Ok(fd)
        }
    };
    Ok((lift(read.into())?, lift(write.into())?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sleeper() -> StdioTransport {
        StdioTransport {
            command: "sleep".into(),
            args: vec!["30".into()],
            env: BTreeMap::new(),
            cwd: None,
            stderr: StderrMode::Inherit,
        }
    }

    /// Whether `pid` is still a process (a zombie counts: not reaped).
    fn exists(pid: libc::pid_t) -> bool {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
    }

    #[test]
    fn a_spawn_given_up_before_it_was_used_kills_and_reaps_the_process() {
        let raw = spawn(&sleeper()).unwrap();
        let pid = raw.pid.unwrap();
        assert!(exists(pid));
        drop(raw);
        assert!(!exists(pid), "killed and reaped at once");
    }

    #[tokio::test]
    async fn a_child_dropped_while_running_is_killed_and_reaped() {
        let spawned = spawn(&sleeper()).unwrap().into_spawned().unwrap();
        let pid = spawned.child.pid;
        drop(spawned);
        for _ in 0..1000 {
            if !exists(pid) {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("the dropped server {pid} is still there");
    }

    #[test]
    fn a_child_dropped_by_a_runtime_shutting_down_is_killed_and_reaped() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let spawned = runtime
            .block_on(async { spawn(&sleeper()).unwrap().into_spawned() })
            .unwrap();
        let pid = spawned.child.pid;
        // Shutting down drops this task inside the runtime, where no task
        // can be spawned any more: the orphan reaper (a thread) reaps it.
        runtime.spawn(async move {
            let _held = spawned;
            std::future::pending::<()>().await;
        });
        drop(runtime);
        for _ in 0..1000 {
            if !exists(pid) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("the server {pid} is still there (running or a zombie)");
    }

    #[test]
    fn the_path_is_searched_as_execvp_does() {
        let found = candidates("srv", Some(OsStr::new("/a:/b/c::rel"))).unwrap();
        let found: Vec<&[u8]> = found.iter().map(|c| c.as_bytes()).collect();
        assert_eq!(
            found,
            [&b"/a/srv"[..], b"/b/c/srv", b"srv", b"rel/srv"],
            "an empty entry is the working directory"
        );
        let direct = candidates("./bin/srv", Some(OsStr::new("/a"))).unwrap();
        assert_eq!(direct[0].as_bytes(), b"./bin/srv");
        let default = candidates("sh", None).unwrap();
        assert_eq!(default[0].as_bytes(), b"/bin/sh");
        assert!(candidates("", None).is_err());
        assert_eq!(
            c_string(b"a\0b").unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
    }
}
