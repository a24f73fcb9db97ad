//! Where a tool comes from: your code, lousho's built-ins, or an MCP server.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Where a tool comes from; set on its [`ToolSpec`](super::ToolSpec).
///
/// Serialises as `{ "kind": "mcp", "server": "files", "tool": "read" }`
/// (`{ "kind": "local" }`, `{ "kind": "builtin" }`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolOrigin {
    /// Your own code ([`define_tool`](crate::define_tool), a `Tool` impl): the default.
    #[default]
    Local,
    /// One of lousho's built-in tools ([`crate::builtin`]).
    Builtin,
    /// A tool of an MCP server.
    Mcp {
        /// The server's name (the config key, as given).
        server: String,
        /// The tool's name as the server reports it.
        tool: String,
    },
}

impl ToolOrigin {
    /// An MCP server's tool.
    pub fn mcp(server: impl Into<String>, tool: impl Into<String>) -> Self {
        ToolOrigin::Mcp {
            server: server.into(),
            tool: tool.into(),
        }
    }

    /// The MCP server's name, for an MCP tool.
    pub fn server(&self) -> Option<&str> {
        match self {
            ToolOrigin::Mcp { server, .. } => Some(server),
            _ => None,
        }
    }
}

/// `local`, `builtin`, or the MCP server's name.
impl fmt::Display for ToolOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolOrigin::Local => f.write_str("local"),
            ToolOrigin::Builtin => f.write_str("builtin"),
            ToolOrigin::Mcp { server, .. } => f.write_str(server),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::Tool;

    #[test]
    fn own_tools_are_local_and_built_ins_say_so() {
        let own = crate::define_tool("mine", "d", |_: serde_json::Value| async { "x" });
        assert_eq!(own.spec().origin, ToolOrigin::Local);
        #[cfg(feature = "builtin")]
        {
            let ws = crate::builtin::Workspace::new(std::env::temp_dir()).unwrap();
            for name in crate::builtin::BUILTIN_NAMES {
                let tool = crate::builtin::builtin_tool(name, &ws).unwrap();
                assert_eq!(tool.spec().origin, ToolOrigin::Builtin, "{name}");
            }
        }
        let mcp = ToolOrigin::mcp("files", "read");
        assert_eq!(mcp.server(), Some("files"));
        assert_eq!(
            serde_json::to_value(&mcp).unwrap(),
            serde_json::json!({"kind": "mcp", "server": "files", "tool": "read"})
        );
    }
}
