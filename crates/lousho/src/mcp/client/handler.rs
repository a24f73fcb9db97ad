//! Our rmcp `ClientHandler`: identifies lousho and turns
//! `notifications/tools/list_changed` into a refresh signal.

use rmcp::ClientHandler;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, RoleClient};
use std::sync::Arc;
use tokio::sync::Notify;

/// The client side of one connection.
#[derive(Clone)]
pub(crate) struct Handler {
    /// Fires when the server says its tool list changed.
    pub(crate) tools_changed: Arc<Notify>,
}

impl Handler {
    pub(crate) fn new() -> Self {
        Self {
            tools_changed: Arc::new(Notify::new()),
        }
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("lousho", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
    }
}
