//! Our rmcp `ClientHandler`: identifies lousho and turns
//! `notifications/tools/list_changed` into a refresh signal.

use rmcp::ClientHandler;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{NotificationContext, RoleClient};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::Notify;

/// The client side of one connection.
#[derive(Clone)]
pub(crate) struct Handler {
    /// Fires when the server says its tool list changed.
    pub(crate) tools_changed: Arc<Notify>,
    /// How many list-changed notifications arrived.
    pub(crate) changes_seen: Arc<AtomicU64>,
}

impl Handler {
    pub(crate) fn new() -> Self {
        Self {
            tools_changed: Arc::new(Notify::new()),
            changes_seen: Arc::new(AtomicU64::new(0)),
        }
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        // The newest version that has the `initialize` handshake; 2026-07-28
        // is reached through discovery when a server refuses `initialize`.
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("lousho", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changes_seen.fetch_add(1, Ordering::SeqCst);
        self.tools_changed.notify_one();
    }
}
