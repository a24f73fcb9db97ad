//! The running server: its address, `close()` and `wait()`.

use super::catalog::ServerCatalog;
use super::error::ServeError;
use super::handler::LoushoServer;
use super::http::{self, ConnLimits};
use super::stdio;
use rmcp::ServiceExt;
use std::net::SocketAddr;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// A running MCP server. Dropping it stops the server too (without waiting);
/// prefer [`close`](Self::close).
#[derive(Debug)]
pub struct McpServerHandle {
    local_addr: Option<SocketAddr>,
    path: Option<String>,
    shutdown: CancellationToken,
    task: Option<JoinHandle<Result<(), ServeError>>>,
    catalog: ServerCatalog,
}

impl McpServerHandle {
    /// The bound address (HTTP), e.g. to find the port picked for port 0.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.local_addr
    }

    /// The endpoint URL (HTTP), e.g. `http://127.0.0.1:3920/mcp`.
    pub fn url(&self) -> Option<String> {
        let path = self.path.as_deref().unwrap_or("/");
        self.local_addr.map(|a| format!("http://{a}{path}"))
    }

    /// What the server offers, to change while it serves (add or remove
    /// tools, resources, prompts; announce a resource's update).
    pub fn catalog(&self) -> &ServerCatalog {
        &self.catalog
    }

    /// Stops the server: in-flight calls are cancelled (their runs and tools
    /// see the cancellation), open connections are closed, the port is
    /// released. Returns once everything has stopped.
    pub async fn close(mut self) -> Result<(), ServeError> {
        self.shutdown.cancel();
        self.join().await
    }

    /// Waits until the server stops by itself (stdio: stdin closed) or
    /// another clone of its token closes it.
    pub async fn wait(mut self) -> Result<(), ServeError> {
        self.join().await
    }

    async fn join(&mut self) -> Result<(), ServeError> {
        let Some(task) = self.task.take() else {
            return Ok(());
        };
        match task.await {
            Ok(r) => r,
            Err(e) => Err(ServeError::Internal(e.to_string())),
        }
    }
}

impl Drop for McpServerHandle {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// Serves stdin/stdout until EOF or `shutdown`.
pub(crate) fn spawn_stdio(
    server: LoushoServer,
    max_line_bytes: usize,
    shutdown: CancellationToken,
    catalog: ServerCatalog,
) -> McpServerHandle {
    let stop = shutdown.clone();
    let task = tokio::spawn(async move {
        let (reader, writer, writer_task) = stdio::open();
        let transport = stdio::LineTransport::new(reader, writer, max_line_bytes);
        let result = match server.serve_with_ct(transport, stop.child_token()).await {
            Ok(running) => {
                let r = running.waiting().await;
                if let Err(e) = r {
                    tracing::warn!(error = %e, "the stdio MCP service stopped abnormally");
                }
                Ok(())
            }
            Err(e) => {
                // Closed before initialize (or cancelled): a clean stop.
                tracing::debug!(error = %e, "the stdio MCP client went away before initializing");
                Ok(())
            }
        };
        // Cancel whatever is still running, then let the last responses out.
        stop.cancel();
        match writer_task.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            Ok(Err(e)) => return Err(ServeError::Io(e)),
            Err(e) => return Err(ServeError::Internal(e.to_string())),
        }
        result
    });
    McpServerHandle {
        local_addr: None,
        path: None,
        shutdown,
        task: Some(task),
        catalog,
    }
}

/// Serves HTTP until `shutdown`.
pub(crate) fn spawn_http(
    listener: TcpListener,
    app: axum::Router,
    limits: ConnLimits,
    bound: SocketAddr,
    path: String,
    shutdown: CancellationToken,
    catalog: ServerCatalog,
) -> McpServerHandle {
    let task = tokio::spawn(http::serve(listener, app, limits, shutdown.clone()));
    McpServerHandle {
        local_addr: Some(bound),
        path: Some(path),
        shutdown,
        task: Some(task),
        catalog,
    }
}
