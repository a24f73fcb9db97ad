//! How far a tool's own hints count: an MCP server's annotations are claims
//! the server makes about itself, and a server may lie. Public as
//! `lousho::policy::Trust`; it rides on the tool's
//! [`ToolSpec::trust`](crate::tool::ToolSpec::trust).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Whether a tool's annotations (`readOnlyHint`, `destructiveHint`, …) count
/// in the decision order. Set per MCP server
/// ([`McpServer::trust`](crate::McpServer::trust), `trust:` in a spec file);
/// it lands on each tool's [`ToolSpec::trust`](crate::tool::ToolSpec::trust).
///
/// | trust | the approval policy sees |
/// | --- | --- |
/// | `Annotations` (default) | the server's hints: under [`Approval::Annotations`](crate::Approval::Annotations) a `readOnlyHint: true` tool runs without asking |
/// | `None` | no hints at all: under `Approval::Annotations` every tool asks; a custom policy gets empty annotations |
///
/// With `None`, permission rules, the `can_use_tool` callback and an
/// `always` / `never` policy decide as before; the hints are still shown
/// (`lousho tools`, [`ApprovalRequest::annotations`](crate::policy::ApprovalRequest::annotations)),
/// they just decide nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Trust {
    /// The server's annotations decide under the `annotations` approval policy.
    #[default]
    Annotations,
    /// The server's annotations are ignored for decisions.
    None,
}

impl Trust {
    /// Whether the tool's annotations count for decisions.
    pub fn trusts_annotations(self) -> bool {
        matches!(self, Trust::Annotations)
    }
}

/// `annotations` or `none`.
impl fmt::Display for Trust {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Trust::Annotations => "annotations",
            Trust::None => "none",
        })
    }
}
