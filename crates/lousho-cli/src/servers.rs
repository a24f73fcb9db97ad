//! The spec's MCP servers as the agent's tool source, able to do without
//! servers that failed to connect: `lousho call` of a tool whose server is up
//! (or a built-in) and `lousho run` with at least one server up go on, the
//! others' failures being warnings.

use async_trait::async_trait;
use lousho::mcp::{McpClient, ServerStatus};
use lousho::tool::{Tool, ToolSource, ToolSourceError};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

/// A server the command relies on is down (exit code 3, like a connect error).
#[derive(Debug)]
pub struct ServerDown {
    /// The server's name.
    pub server: String,
    /// Why (its status).
    pub reason: String,
}

impl fmt::Display for ServerDown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "MCP server `{}` is not connected: {}",
            self.server, self.reason
        )
    }
}

impl std::error::Error for ServerDown {}

/// An [`McpClient`] that skips the servers it was told to do without, or
/// relies on only the servers it was told to use.
#[derive(Clone)]
pub struct Servers {
    mcp: McpClient,
    without: Arc<Mutex<BTreeSet<String>>>,
    only: Arc<Mutex<Option<BTreeSet<String>>>>,
}

impl Servers {
    /// Wraps `mcp`; nothing is skipped yet.
    pub fn new(mcp: McpClient) -> Self {
        Self {
            mcp,
            without: Arc::default(),
            only: Arc::default(),
        }
    }

    /// Relies on these servers only (`lousho call`): getting ready connects
    /// none of the others, and their state never fails the run.
    pub fn use_only(&self, servers: impl IntoIterator<Item = String>) {
        *self.only.lock().unwrap_or_else(PoisonError::into_inner) =
            Some(servers.into_iter().collect());
    }

    /// The client.
    pub fn client(&self) -> &McpClient {
        &self.mcp
    }

    /// Each server's state.
    pub fn status(&self) -> std::collections::BTreeMap<String, ServerStatus> {
        self.mcp.status()
    }

    /// The servers whose last connect failed, with the reason.
    pub fn failed(&self) -> Vec<(String, String)> {
        self.mcp
            .status()
            .into_iter()
            .filter_map(|(name, status)| match status {
                ServerStatus::Failed(reason) => Some((name, reason)),
                _ => None,
            })
            .collect()
    }

    /// Whether every server failed (there is at least one).
    pub fn all_failed(&self) -> bool {
        let status = self.mcp.status();
        !status.is_empty()
            && status
                .values()
                .all(|s| matches!(s, ServerStatus::Failed(_)))
    }

    /// Does without the servers that failed: they no longer fail runs (their
    /// tools are absent). Prints one warning per server on stderr.
    #[allow(clippy::print_stderr)]
    pub fn do_without_failed(&self) {
        let failed = self.failed();
        let mut without = self.without.lock().unwrap_or_else(PoisonError::into_inner);
        for (name, _) in failed {
            eprintln!(
                "warning: going on without MCP server `{name}` (its tools are not available)"
            );
            without.insert(name);
        }
    }

    fn skipped(&self) -> BTreeSet<String> {
        self.without
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The first server the command relies on that is not usable.
    fn first_down(&self, skipped: &BTreeSet<String>) -> Option<ServerDown> {
        self.mcp
            .status()
            .into_iter()
            .find_map(|(server, status)| match status {
                ServerStatus::Failed(reason) if !skipped.contains(&server) => {
                    Some(ServerDown { server, reason })
                }
                ServerStatus::Idle if !skipped.contains(&server) => Some(ServerDown {
                    server,
                    reason: "not connected".into(),
                }),
                _ => None,
            })
    }
}

#[async_trait]
impl ToolSource for Servers {
    fn name(&self) -> &str {
        "mcp"
    }

    async fn ready(&self) -> Result<(), ToolSourceError> {
        let only = self
            .only
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(only) = only {
            for server in only {
                self.mcp
                    .connect_server(&server)
                    .await
                    .map_err(|e| ToolSourceError::new("mcp", e))?;
            }
            return Ok(());
        }
        let skipped = self.skipped();
        if skipped.is_empty() {
            return self
                .mcp
                .connect_needed()
                .await
                .map_err(|e| ToolSourceError::new("mcp", e));
        }
        if self.first_down(&skipped).is_none() {
            return Ok(());
        }
        // A server we rely on dropped: reconnect (the skipped ones are tried
        // again too; their failure stays a warning).
        let _ = self.mcp.connect_needed().await;
        match self.first_down(&skipped) {
            Some(down) => Err(ToolSourceError::new("mcp", down)),
            None => Ok(()),
        }
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.mcp.tools().iter().cloned().collect()
    }

    fn instructions(&self) -> Option<String> {
        ToolSource::instructions(&self.mcp)
    }

    async fn close(&self) {
        self.mcp.close().await;
    }
}
