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
use super::super::peer_channel::ProgressTo;
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

/// The running calls' tokens: each under its own serial number, so that a
/// request id a client reuses while its first call runs cannot hide a call
/// from [`DirectLane::close`].
#[derive(Default)]
struct Running {
    next: u64,
    tokens: HashMap<u64, CancellationToken>,
    /// The serial of the latest call with each request id.
    by_id: HashMap<RequestId, u64>,
}

impl Running {
    fn start(&mut self, id: RequestId, token: CancellationToken) -> u64 {
        let serial = self.next;
        self.next += 1;
        self.tokens.insert(serial, token);
        self.by_id.insert(id, serial);
        serial
    }

    fn end(&mut self, id: &RequestId, serial: u64) {
        self.tokens.remove(&serial);
        if self.by_id.get(id) == Some(&serial) {
            self.by_id.remove(id);
        }
    }

    /// The token of the call `id` names, no longer tracked.
    fn take(&mut self, id: &RequestId) -> Option<CancellationToken> {
        let serial = self.by_id.remove(id)?;
        self.tokens.remove(&serial)
    }
}

/// The calls the transport runs itself.
pub(crate) struct DirectLane {
    server: LoushoServer,
    client: LaneClient,
    out: BatchWriter,
    /// The running calls' tokens.
    running: Arc<Mutex<Running>>,
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
        let serial = self.lock().start(id.clone(), cancel.clone());
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
                .end(&id, serial);
            // A cancelled request gets no answer (as rmcp does).
            if cancel.is_cancelled() {
                return;
            }
            if let Err(e) = out.queue_message(&call_answer(outcome, id)) {
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
        if let Some(token) = self.lock().take(id) {
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
        let mut running = self.lock();
        running.by_id.clear();
        for (_, token) in running.tokens.drain() {
            token.cancel();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Running> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for DirectLane {
    fn drop(&mut self) {
        self.stop_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reused_request_id_hides_no_call() {
        let mut running = Running::default();
        let id = RequestId::Number(7);
        let (first, second) = (CancellationToken::new(), CancellationToken::new());
        let a = running.start(id.clone(), first.clone());
        let b = running.start(id.clone(), second.clone());
        // The first ends: the second stays cancellable by its id.
        running.end(&id, a);
        let taken = running.take(&id).expect("the second call is still known");
        taken.cancel();
        assert!(second.is_cancelled() && !first.is_cancelled());
        running.end(&id, b);
        assert!(running.tokens.is_empty() && running.by_id.is_empty());

        // Both running: a cancel names the latest; the other is still there
        // for close to stop.
        let c = running.start(id.clone(), CancellationToken::new());
        let _d = running.start(id.clone(), CancellationToken::new());
        assert!(running.take(&id).is_some());
        assert_eq!(running.tokens.keys().copied().collect::<Vec<_>>(), [c]);
    }
}
