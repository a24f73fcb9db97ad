//! A bound on the requests a server may have open with us at once.
//!
//! rmcp answers a server's requests (pings, elicitations) itself: for each
//! one it spawns a handler task and then a task that writes the answer, and
//! it goes on reading whatever comes next. A server that floods requests and
//! reads our answers slowly (or not at all) so makes the client queue work
//! without limit: 100k pings during one call took a client to 277 MB, and
//! the answers still queued failed one by one at exit. [`PeerRequestLimit`]
//! wraps a transport and counts the server's requests from the moment one is
//! read until its answer is written (or the server cancels it). At the
//! limit (`maxServerRequests`, default 64):
//! - [`Overflow::Wait`] (stdio) reads nothing more until an answer is
//!   written: the flood waits in the pipe, the server is slowed down;
//! - [`Overflow::Drop`] (HTTP, where our answers are POSTed by the same rmcp
//!   worker that delivers the server's messages, so not reading would stall
//!   the answers too) leaves the excess requests unanswered, with one
//!   warning per connection.
//!
//! An answer that cannot be written because the server is gone is not an
//! error worth a line per answer: it is logged at debug level.

use crate::sync::MutexExt;
use rmcp::model::{RequestId, ServerJsonRpcMessage, ServerNotification};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

/// What happens to a server's request over the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overflow {
    /// Stop reading until an answer is written.
    Wait,
    /// Leave the request unanswered.
    Drop,
}

/// A transport with a bound on the server's open requests.
pub(crate) struct PeerRequestLimit<T> {
    inner: T,
    open: Arc<Open>,
    overflow: Overflow,
    warned: bool,
}

#[derive(Debug)]
struct Open {
    ids: Mutex<HashSet<RequestId>>,
    freed: Notify,
    limit: usize,
}

impl Open {
    fn release(&self, id: &RequestId) {
        if self.ids.lock_unpoisoned().remove(id) {
            self.freed.notify_waiters();
        }
    }

    /// Takes a slot for `id`; false when none is free.
    fn take(&self, id: &RequestId) -> bool {
        let mut ids = self.ids.lock_unpoisoned();
        if ids.len() >= self.limit && !ids.contains(id) {
            return false;
        }
        ids.insert(id.clone());
        true
    }

    async fn wait_for_room(&self) {
        loop {
            let freed = self.freed.notified();
            if self.ids.lock_unpoisoned().len() < self.limit {
                return;
            }
            freed.await;
        }
    }
}

impl<T> PeerRequestLimit<T> {
    /// Wraps `inner`: at most `limit` server requests open.
    pub(crate) fn new(inner: T, overflow: Overflow, limit: usize) -> Self {
        Self {
            inner,
            open: Arc::new(Open {
                ids: Mutex::new(HashSet::new()),
                freed: Notify::new(),
                limit: limit.max(1),
            }),
            overflow,
            warned: false,
        }
    }
}

/// The id a message of ours answers, when it is an answer.
fn answers(message: &TxJsonRpcMessage<RoleClient>) -> Option<RequestId> {
    match message {
        rmcp::model::ClientJsonRpcMessage::Response(r) => Some(r.id.clone()),
        rmcp::model::ClientJsonRpcMessage::Error(e) => e.id.clone(),
        _ => None,
    }
}

impl<T> Transport<RoleClient> for PeerRequestLimit<T>
where
    T: Transport<RoleClient>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answered = answers(&item);
        let sent = self.inner.send(item);
        let open = self.open.clone();
        async move {
            let result = sent.await;
            let Some(id) = answered else {
                return result;
            };
            open.release(&id);
            if let Err(e) = result {
                // The server is gone or stopped reading; rmcp would log an
                // ERROR line per answer.
                tracing::debug!(%id, error = %e, "an answer to the MCP server could not be sent");
            }
            Ok(())
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            if self.overflow == Overflow::Wait {
                self.open.wait_for_room().await;
            }
            let message = self.inner.receive().await?;
            match &message {
                ServerJsonRpcMessage::Request(r) if !self.open.take(&r.id) => {
                    if !self.warned {
                        self.warned = true;
                        tracing::warn!(
                            limit = self.open.limit,
                            "the MCP server has more requests open than the client answers at once; leaving the excess unanswered"
                        );
                    }
                    continue;
                }
                ServerJsonRpcMessage::Notification(n) => {
                    if let ServerNotification::CancelledNotification(c) = &n.notification
                        && let Some(id) = &c.params.request_id
                    {
                        self.open.release(id);
                    }
                }
                _ => {}
            }
            return Some(message);
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;
    use rmcp::model::{ClientJsonRpcMessage, ClientResult, PingRequest, ServerRequest};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::sync::Semaphore;

    /// A server that sends `count` pings; our answers' writes finish (as
    /// failures: the server is gone) only as the gate lets them.
    struct Flood {
        count: usize,
        delivered: Arc<AtomicUsize>,
        gate: Arc<Semaphore>,
    }

    impl Transport<RoleClient> for Flood {
        type Error = std::io::Error;

        fn send(
            &mut self,
            _item: TxJsonRpcMessage<RoleClient>,
        ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
            let gate = self.gate.clone();
            async move {
                let _ = gate.acquire().await.map(|p| p.forget());
                Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
            }
        }

        async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
            let n = self.delivered.fetch_add(1, Ordering::SeqCst) + 1;
            (n <= self.count).then(|| {
                ServerJsonRpcMessage::request(
                    ServerRequest::PingRequest(PingRequest::default()),
                    RequestId::Number(n as i64),
                )
            })
        }

        async fn close(&mut self) -> Result<(), Self::Error> {
            Ok(())
        }
    }

    fn flood(count: usize) -> (Flood, Arc<AtomicUsize>, Arc<Semaphore>) {
        let delivered = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new(Semaphore::new(0));
        let f = Flood {
            count,
            delivered: delivered.clone(),
            gate: gate.clone(),
        };
        (f, delivered, gate)
    }

    fn pong(id: i64) -> ClientJsonRpcMessage {
        ClientJsonRpcMessage::response(ClientResult::empty(()), RequestId::Number(id))
    }

    #[tokio::test]
    async fn a_flood_waits_at_the_limit_and_goes_on_as_answers_are_written() {
        let (inner, delivered, gate) = flood(usize::MAX);
        let mut t = PeerRequestLimit::new(inner, Overflow::Wait, 4);
        let mut answers = Vec::new();
        for i in 1..=4 {
            assert!(t.receive().await.is_some());
            answers.push(tokio::spawn(t.send(pong(i))));
        }
        assert!(t.receive().now_or_never().is_none(), "read past the limit");
        assert_eq!(delivered.load(Ordering::SeqCst), 4);
        // The writes fail (the server is gone) without an error for rmcp to
        // log, and free their slots.
        gate.add_permits(4);
        for a in answers {
            assert!(a.await.expect("joined").is_ok());
        }
        assert!(t.receive().await.is_some());
        assert_eq!(delivered.load(Ordering::SeqCst), 5);
    }

    #[tokio::test]
    async fn with_drop_the_excess_is_left_unanswered() {
        let (inner, delivered, _gate) = flood(10);
        let mut t = PeerRequestLimit::new(inner, Overflow::Drop, 4);
        for _ in 0..4 {
            assert!(t.receive().await.is_some());
        }
        // Reading goes on past the six requests over the limit to the end.
        assert!(t.receive().await.is_none());
        assert_eq!(delivered.load(Ordering::SeqCst), 11);
    }

    #[tokio::test]
    async fn a_cancelled_request_frees_its_slot() {
        let (inner, _delivered, _gate) = flood(usize::MAX);
        let t = PeerRequestLimit::new(inner, Overflow::Wait, 1);
        assert!(t.open.take(&RequestId::Number(1)));
        assert!(!t.open.take(&RequestId::Number(2)));
        t.open.release(&RequestId::Number(1));
        assert!(t.open.take(&RequestId::Number(2)));
    }
}
