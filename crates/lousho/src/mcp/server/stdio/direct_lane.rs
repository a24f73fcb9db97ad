//! Stdio `tools/call` of a directly served tool, answered by the transport
//! instead of rmcp's service. For every request rmcp's service loop makes two
//! cancellation tokens, builds a request context, spawns a task carrying the
//! handler's whole future, and passes the answer back over a channel to the
//! loop, which writes it: about half of a served echo's CPU. A direct tool's
//! call needs none of that: the transport reads it (in one typed pass),
//! spawns a small task that runs the tool, and writes the answer itself.
//!
//! Only calls whose answer cannot differ from rmcp's take this path:
//! - on a session opened with the `initialize` handshake, once rmcp has
//!   finished it (the lane gets rmcp's peer then);
//! - of a directly served tool (not an agent's tool; unknown tools get rmcp's
//!   error);
//! - with no per-request protocol metadata in `_meta` (no
//!   `io.modelcontextprotocol/` key).
//!
//! The tool's messages to the client keep their order: its notifications
//! (progress, logs) are written to stdout directly, ahead of the answer, and
//! its requests (elicitation, sampling, approvals) go through rmcp's peer,
//! which matches their responses. As with rmcp, `notifications/cancelled`
//! stops the call and no answer is sent, and when the input ends, calls still
//! running get a few seconds to answer before they are stopped.

use super::super::handler::LoushoServer;
use super::super::peer_channel::{ProgressTo, write_line};
use super::super::result::call_answer;
use crate::mcp::batch_writer::BatchWriter;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientJsonRpcMessage, ClientNotification, RequestId,
};
use rmcp::service::{Peer, RoleServer};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// How long calls still running may take to answer once the transport
/// closes (rmcp gives its own handlers as long after the input ends).
const DRAIN: Duration = Duration::from_secs(5);

/// The prefix of `_meta` keys that carry per-request protocol metadata.
const PROTOCOL_META: &str = "io.modelcontextprotocol/";

/// The client, once its `initialize` handshake is done.
pub(crate) struct Handshaken {
    peer: Peer<RoleServer>,
    caps: ClientCapabilities,
}

/// Where the serving code hands the lane rmcp's peer after the handshake.
#[derive(Clone, Default)]
pub(crate) struct LaneClient(Arc<OnceLock<Handshaken>>);

impl LaneClient {
    /// Opens the lane with `peer`, when the client negotiated a protocol
    /// version with the `initialize` handshake (2026-07-28 requests carry
    /// metadata only rmcp reads).
    pub(crate) fn handshake_done(&self, peer: &Peer<RoleServer>) {
        let Some(info) = peer.peer_info() else {
            return;
        };
        if !info.protocol_version.has_initialize() {
            return;
        }
        let _ = self.0.set(Handshaken {
            peer: peer.clone(),
            caps: info.capabilities.clone(),
        });
    }
}

/// The calls the transport runs itself.
pub(crate) struct DirectLane {
    server: LoushoServer,
    client: LaneClient,
    out: BatchWriter,
    /// Each running call's token, by request id.
    running: Arc<Mutex<HashMap<RequestId, CancellationToken>>>,
    /// The calls' tasks, waited for on close.
    tasks: TaskTracker,
}

impl DirectLane {
    pub(crate) fn new(server: LoushoServer, client: LaneClient, out: BatchWriter) -> Self {
        Self {
            server,
            client,
            out,
            running: Arc::default(),
            tasks: TaskTracker::new(),
        }
    }

    /// Starts the call when the lane answers it (see the module docs);
    /// otherwise gives it back for rmcp.
    pub(crate) fn take(
        &self,
        id: RequestId,
        params: CallToolRequestParams,
    ) -> Option<(RequestId, CallToolRequestParams)> {
        let Some(client) = self.client.0.get() else {
            return Some((id, params));
        };
        // Per-request protocol metadata (2026-07-28's protocol version,
        // client info and capabilities, log level) is rmcp's to read.
        if let Some(meta) = &params.meta
            && meta.keys().any(|k| k.starts_with(PROTOCOL_META))
        {
            return Some((id, params));
        }
        if !self.server.serves_directly(&params.name) {
            return Some((id, params));
        }
        let progress = match params.meta.as_ref().and_then(|m| m.get_progress_token()) {
            Some(token) => ProgressTo::Direct(token),
            None => ProgressTo::Nowhere,
        };
        let channel = self.server.stdout_channel(
            client.peer.clone(),
            self.out.clone(),
            &client.caps,
            progress,
        );
        let cancel = CancellationToken::new();
        self.lock().insert(id.clone(), cancel.clone());
        let run = self
            .server
            .run_direct_traced(params, id.clone(), None, channel, cancel.clone());
        let out = self.out.clone();
        let running = Arc::clone(&self.running);
        // Boxed: the task then holds a pointer, not the tool's future.
        self.tasks.spawn(Box::pin(async move {
            let outcome = run.await;
            running
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&id);
            // A cancelled request gets no answer (as rmcp does).
            if cancel.is_cancelled() {
                return;
            }
            if let Err(e) = write_line(&out, &call_answer(outcome, id)) {
                tracing::debug!(error = %e, "stdout is closed; a tool call's answer was not sent");
            }
        }));
        None
    }

    /// Stops the lane's call that `message` cancels, if it is one.
    pub(crate) fn observe(&self, message: &ClientJsonRpcMessage) {
        let ClientJsonRpcMessage::Notification(n) = message else {
            return;
        };
        let ClientNotification::CancelledNotification(cancelled) = &n.notification else {
            return;
        };
        let Some(id) = &cancelled.params.request_id else {
            return;
        };
        if let Some(token) = self.lock().remove(id) {
            tracing::info!(%id, reason = cancelled.params.reason, "cancelled");
            token.cancel();
        }
    }

    /// Lets the calls still running answer (for a while), stops the rest,
    /// and takes no more writes through this handle.
    pub(crate) async fn close(&mut self) {
        self.tasks.close();
        if tokio::time::timeout(DRAIN, self.tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                calls = self.tasks.len(),
                "tool calls still running {DRAIN:?} after the input ended; stopping them"
            );
            self.stop_all();
        }
        self.out.close();
    }

    fn stop_all(&self) {
        for (_, token) in self.lock().drain() {
            token.cancel();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, CancellationToken>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for DirectLane {
    fn drop(&mut self) {
        self.stop_all();
    }
}
