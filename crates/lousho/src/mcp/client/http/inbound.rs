//! rmcp's HTTP transport with a second source of received messages: what the
//! direct lane ([`lane`](super::lane)) read on a call's SSE stream besides the
//! call's result (progress, logs, the server's requests). rmcp handles those
//! as if its own worker had read them; its answers to the server's requests
//! go out through the worker as usual. When the transport closes, so does
//! the lane.

use rmcp::model::ServerJsonRpcMessage;
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How many messages from the lane may wait for rmcp before the lane's
/// readers wait too.
pub(super) const INBOUND_QUEUE: usize = 64;

/// `inner`, also receiving what the lane hands over.
pub(crate) struct Inbound<T> {
    inner: T,
    lane: mpsc::Receiver<ServerJsonRpcMessage>,
    closed: CancellationToken,
}

impl<T> Inbound<T> {
    /// `inner` plus the messages from `lane`; `closed` is cancelled when the
    /// transport ends.
    pub(super) fn new(
        inner: T,
        lane: mpsc::Receiver<ServerJsonRpcMessage>,
        closed: CancellationToken,
    ) -> Self {
        Self {
            inner,
            lane,
            closed,
        }
    }
}

impl<T> Drop for Inbound<T> {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}

impl<T> Transport<RoleClient> for Inbound<T>
where
    T: Transport<RoleClient>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        // Both sources are channels, so a receive dropped by rmcp's select
        // loses nothing.
        tokio::select! {
            message = self.inner.receive() => {
                if message.is_none() {
                    self.closed.cancel();
                }
                message
            }
            Some(message) = self.lane.recv() => Some(message),
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.closed.cancel();
        self.inner.close().await
    }
}
