//! Servers' progress notifications about calls (`notifications/progress`),
//! passed to a hook ([`ConnectOptions::on_progress`](super::ConnectOptions::on_progress)):
//! a command line shows them while a long call runs. Every request lousho
//! sends carries a progress token (rmcp's); each notification also restarts
//! that call's timeout, hook or not.

use std::sync::Arc;

/// One `notifications/progress` from a server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerProgress {
    /// The server's name (its key in `mcpServers`).
    pub server: String,
    /// How far along (grows with each notification).
    pub progress: f64,
    /// The total, when the server knows it.
    pub total: Option<f64>,
    /// What the server says it is doing.
    pub message: Option<String>,
}

/// What [`ConnectOptions::on_progress`](super::ConnectOptions::on_progress)
/// calls, on the connection's task: keep it quick.
pub type ProgressHook = Arc<dyn Fn(ServerProgress) + Send + Sync>;
