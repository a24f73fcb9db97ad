//! Helpers for the serve benchmark's binaries.

use std::os::fd::AsFd;
use tokio::net::unix::pipe;

/// fd 0 as a non-blocking pipe reader (the benchmark spawns its servers with pipes).
pub fn stdin_pipe() -> std::io::Result<pipe::Receiver> {
    pipe::Receiver::from_owned_fd(std::io::stdin().as_fd().try_clone_to_owned()?)
}

/// fd 1 as a non-blocking pipe writer.
pub fn stdout_pipe() -> std::io::Result<pipe::Sender> {
    pipe::Sender::from_owned_fd(std::io::stdout().as_fd().try_clone_to_owned()?)
}
