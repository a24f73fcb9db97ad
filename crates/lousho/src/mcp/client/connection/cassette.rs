//! A connection through a [cassette](crate::cassette): replayed without a
//! process or a socket, or recorded around the real transport; either way
//! the entry's secrets (environment and header values) are redacted.

use super::Connection;
use super::open::negotiated;
use crate::cassette::Cassette;
use crate::cassette::mcp::Replaying;
use crate::mcp::client::config::McpTransport;
use crate::mcp::client::error::McpError;
use crate::mcp::client::handler::Handler;
use crate::mcp::client::live::{Live, Wire};
use rmcp::ClientServiceExt;
use rmcp::service::ClientLifecycleMode;
use std::sync::Arc;
use std::time::Instant;

impl Connection {
    /// The cassette, with this entry's secrets added to its redaction.
    pub(super) fn cassette_with_secrets(&self) -> Option<&Cassette> {
        let cassette = self.cassette.as_ref()?;
        match &self.entry.transport {
            McpTransport::Stdio(config) => {
                cassette.add_secrets(config.env.values().cloned().collect(), Vec::new());
            }
            McpTransport::Http(config) => {
                cassette.add_secrets(Vec::new(), config.headers.values().cloned().collect());
            }
        }
        Some(cassette)
    }

    /// Runs the handshake and lists the tools against the cassette: no
    /// process is spawned, no socket opened.
    pub(super) async fn open_replay(
        &self,
        cassette: &Cassette,
        handler: Handler,
        lifecycle: ClientLifecycleMode,
    ) -> Result<Live, McpError> {
        let timeout = self.entry.startup_timeout;
        tracing::debug!(server = %self.name, cassette = %cassette.path().display(), "replaying the MCP server");
        let started = Instant::now();
        let transport = Replaying::new(cassette.clone(), &self.name);
        let served = tokio::time::timeout(
            timeout,
            handler.clone().serve_with_lifecycle(transport, lifecycle),
        )
        .await;
        match served {
            Ok(Ok(service)) => {
                negotiated(&self.name, &service, started);
                let live = Live::new(service, handler, Wire::Replay(Default::default()));
                self.finish(live, timeout).await
            }
            Ok(Err(e)) => Err(McpError::Handshake {
                server: self.name.clone(),
                exit: None,
                source: Arc::new(e),
                stdout_noise: None,
                stderr: None,
            }),
            Err(_) => Err(McpError::StartupTimeout {
                server: self.name.clone(),
                timeout,
                stdout_noise: None,
                stderr: None,
            }),
        }
    }
}
