//! One live connection to a server: the rmcp service (shared for calls),
//! what its transport leaves to hold ([`Wire`]: the child process and its
//! output when stdio, the standalone stream when HTTP), the tool-list
//! refresh task, and diagnostics.

use super::handler::Handler;
use super::http::{HttpWatch, StandaloneStream};
use super::process::StdioProcess;
use super::replies::Replies;
use super::stderr::StderrBuffer;
use super::stdout_watch::StdoutNoise;
use crate::sync::MutexExt;
use rmcp::service::{Peer, RoleClient, RunningService};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long closing the protocol session may take before we move on to
/// stopping the process.
const SESSION_CLOSE_LIMIT: Duration = Duration::from_secs(2);
/// How long a call waits for a tool-list refresh its server announced.
const REFRESH_WAIT: Duration = Duration::from_secs(2);

/// What a live connection holds of its transport.
pub(crate) enum Wire {
    /// A server we spawned.
    Stdio {
        /// The child's process group (taken by `shutdown`).
        process: tokio::sync::Mutex<Option<StdioProcess>>,
        /// Its captured stderr (when captured).
        stderr: Option<StderrBuffer>,
        /// What it wrote to stdout besides MCP.
        noise: StdoutNoise,
        /// Invalid replies the transport turned into errors.
        replies: Replies,
    },
    /// A Streamable HTTP server.
    Http(HttpWatch),
    /// A server replayed from a cassette: no process, no socket.
    Replay(Replies),
}

impl Wire {
    /// A spawned server's wire.
    pub(crate) fn stdio(process: StdioProcess, noise: StdoutNoise, replies: Replies) -> Self {
        Self::Stdio {
            stderr: process.stderr_buffer(),
            process: tokio::sync::Mutex::new(Some(process)),
            noise,
            replies,
        }
    }
}

pub(crate) struct Live {
    service: Mutex<Option<RunningService<RoleClient, Handler>>>,
    peer: Peer<RoleClient>,
    wire: Wire,
    broken: Mutex<Option<String>>,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    pub(crate) handler: Handler,
    /// The count of list-changed notifications whose refresh is done.
    pub(crate) refreshed: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Live {
    pub(crate) fn new(
        service: RunningService<RoleClient, Handler>,
        handler: Handler,
        wire: Wire,
    ) -> Self {
        let peer = service.peer().clone();
        Self {
            service: Mutex::new(Some(service)),
            peer,
            wire,
            broken: Mutex::new(None),
            tasks: Mutex::new(Vec::new()),
            handler,
            refreshed: Arc::new(tokio::sync::watch::Sender::new(0)),
        }
    }

    /// Invalid replies the transport turned into errors.
    pub(crate) fn replies(&self) -> &Replies {
        match &self.wire {
            Wire::Stdio { replies, .. }
            | Wire::Http(HttpWatch { replies, .. })
            | Wire::Replay(replies) => replies,
        }
    }

    /// The session's standalone stream (HTTP).
    pub(crate) fn standalone(&self) -> Option<&StandaloneStream> {
        match &self.wire {
            Wire::Http(watch) => Some(&watch.standalone),
            Wire::Stdio { .. } | Wire::Replay(_) => None,
        }
    }

    fn noise(&self) -> Option<&StdoutNoise> {
        match &self.wire {
            Wire::Stdio { noise, .. } => Some(noise),
            Wire::Http(_) | Wire::Replay(_) => None,
        }
    }

    fn stderr(&self) -> Option<&StderrBuffer> {
        match &self.wire {
            Wire::Stdio { stderr, .. } => stderr.as_ref(),
            Wire::Http(_) | Wire::Replay(_) => None,
        }
    }

    /// The peer, for requests.
    pub(crate) fn peer(&self) -> &Peer<RoleClient> {
        &self.peer
    }

    /// Keeps a background task that ends with this connection.
    pub(crate) fn add_task(&self, task: tokio::task::JoinHandle<()>) {
        self.tasks.lock_unpoisoned().push(task);
    }

    /// Marks the connection dead (a call saw the transport go away).
    pub(crate) fn mark_broken(&self, reason: &str) {
        let mut b = self.broken.lock_unpoisoned();
        if b.is_none() {
            *b = Some(reason.to_owned());
        }
    }

    /// Why the connection is dead, or `None` while it is usable.
    pub(crate) fn dead_reason(&self) -> Option<String> {
        if let Some(r) = self.broken.lock_unpoisoned().clone() {
            return Some(r);
        }
        if self.peer.is_transport_closed() {
            return Some("the connection dropped (the server exited or closed it)".to_owned());
        }
        None
    }

    /// Waits (briefly) until every tool-list change announced so far is applied.
    pub(crate) async fn wait_for_tool_refresh(&self) {
        let target = self
            .handler
            .changes_seen
            .load(std::sync::atomic::Ordering::SeqCst);
        if *self.refreshed.borrow() >= target {
            return;
        }
        let mut rx = self.refreshed.subscribe();
        let _ = tokio::time::timeout(REFRESH_WAIT, rx.wait_for(|applied| *applied >= target)).await;
    }

    /// The first non-MCP line the server wrote to stdout.
    pub(crate) fn stdout_noise(&self) -> Option<String> {
        self.noise().and_then(StdoutNoise::first_line)
    }

    /// The captured stderr's tail.
    pub(crate) fn stderr_tail(&self) -> Option<String> {
        self.stderr().and_then(StderrBuffer::tail)
    }

    /// Stderr tail and stdout noise, for error messages.
    pub(crate) fn diagnostics(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(n) = self.noise().and_then(StdoutNoise::note) {
            parts.push(n);
        }
        if let Some(t) = self.stderr().and_then(StderrBuffer::tail) {
            parts.push(format!("--- server stderr (tail) ---\n{t}"));
        }
        (!parts.is_empty()).then(|| parts.join("\n"))
    }

    /// Ends the session, stops the process group and reaps it. Idempotent.
    pub(crate) async fn shutdown(&self) {
        let tasks: Vec<_> = self.tasks.lock_unpoisoned().drain(..).collect();
        for task in tasks {
            task.abort();
            // Dropping a listen subscription sends its cancellation; make
            // sure that happened before the session closes, or an rmcp server
            // waits for the subscription handler before exiting.
            let _ = task.await;
        }
        tokio::task::yield_now().await;
        let service = self.service.lock_unpoisoned().take();
        if let Some(service) = service {
            // Closing the session closes the child's stdin (stdio) or ends the
            // HTTP session.
            if tokio::time::timeout(SESSION_CLOSE_LIMIT, service.cancel())
                .await
                .is_err()
            {
                tracing::debug!("closing the MCP session took too long; stopping the process");
            }
        }
        if let Wire::Stdio { process, .. } = &self.wire
            && let Some(mut process) = process.lock().await.take()
        {
            process.shutdown().await;
        }
    }
}

impl Drop for Live {
    /// Dropped without [`shutdown`](Live::shutdown) (the last holder of the
    /// connection went away): the background tasks end with it; the session
    /// and the process group stop through their own drops.
    fn drop(&mut self) {
        for task in self.tasks.get_mut_unpoisoned().drain(..) {
            task.abort();
        }
    }
}
