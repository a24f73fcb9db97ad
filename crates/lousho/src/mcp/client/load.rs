//! `load_mcp_tools`: tools from an rmcp client the user connected themselves.

use super::call::CallTarget;
use super::config::DEFAULT_CALL_TIMEOUT;
use super::error::McpError;
use super::naming::{ToolNames, ToolNaming};
use super::pinning::PinCheck;
use super::tool::{Listing, McpTool, RemoteTool};
use crate::policy::{PinMode, ServerPins, Trust};
use crate::tool::Approval;
use crate::tool::ToolSet;
use rmcp::service::{RoleClient, RunningService, Service};
use std::sync::Arc;
use std::time::Duration;

/// Options of [`load_mcp_tools`].
#[derive(Debug, Clone)]
#[non_exhaustive]
#[must_use]
pub struct LoadOptions {
    /// When calls need approval (default [`Approval::Annotations`]).
    pub approval: Approval,
    /// Whether the server's annotations count for decisions (default
    /// [`Trust::Annotations`]).
    pub trust: Trust,
    /// How tools are named.
    pub naming: ToolNaming,
    /// The server's pins and mode, when its tools are compared with pins.
    pins: Option<PinCheck>,
    /// How long one call may take (progress restarts it; default 60 s).
    pub call_timeout: Duration,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            approval: Approval::Annotations,
            trust: Trust::Annotations,
            pins: None,
            naming: ToolNaming::Prefixed,
            call_timeout: DEFAULT_CALL_TIMEOUT,
        }
    }
}

impl LoadOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the approval policy (a custom function gets the bare tool name).
    pub fn approval(mut self, approval: Approval) -> Self {
        self.approval = approval;
        self
    }

    /// Sets whether the server's annotations count for decisions.
    pub fn trust(mut self, trust: Trust) -> Self {
        self.trust = trust;
        self
    }

    /// Compares the tools with `pins` under `mode` (see
    /// [`Pins`](crate::policy::Pins)); `PinMode::Off` compares nothing.
    pub fn pins(mut self, mode: PinMode, pins: ServerPins) -> Self {
        self.pins = PinCheck::new(Some(mode), Some(&pins));
        self
    }

    /// Sets the naming style.
    pub fn naming(mut self, naming: ToolNaming) -> Self {
        self.naming = naming;
        self
    }

    /// Sets the call timeout.
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }
}

/// Lists the tools of a client you connected with rmcp (re-exported as
/// [`lousho::mcp::rmcp`](crate::mcp::rmcp)) and turns them into tools named
/// `<server_name>__<tool>`. The tools call through the client; keep it alive
/// (and close it) yourself.
pub async fn load_mcp_tools<S>(
    client: &RunningService<RoleClient, S>,
    server_name: &str,
    options: LoadOptions,
) -> Result<ToolSet, McpError>
where
    S: Service<RoleClient>,
{
    let remote = client
        .list_all_tools()
        .await
        .map_err(|e| McpError::ListTools {
            server: server_name.to_owned(),
            source: Arc::new(e),
            diagnostics: None,
        })?;
    let target = CallTarget::Peer {
        peer: client.peer().clone(),
        timeout: options.call_timeout,
    };
    let mut names = ToolNames::new();
    let mut set = ToolSet::new();
    for t in &remote {
        let Some(name) = names.insert_listed(options.naming, server_name, &t.name)? else {
            continue;
        };
        let listing = Listing {
            approval: &options.approval,
            trust: options.trust,
            identity: None,
            pins: options.pins.as_ref(),
            defer: None,
        };
        let remote = RemoteTool::new(name, server_name, t, &listing);
        let tool = McpTool::new(remote, target.clone());
        // Names are unique per `names`, so this cannot collide.
        let _ = set.insert(Arc::new(tool));
    }
    Ok(set)
}
