//! The one place MCP tool names are computed: `<server>__<tool>` (or
//! `mcp__<server>__<tool>`), normalised to the providers' alphabet, capped at
//! 64 characters, with a reverse map back to (server, original tool name).
//! A qualified name is never split on `__`: look it up in [`ToolNames`].

use crate::tool::ToolOrigin;
use crate::tool::name::{cap, normalize};
use std::collections::BTreeMap;

/// How MCP tools are named.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolNaming {
    /// `<server>__<tool>` (e.g. `docs__search`), the default.
    #[default]
    Prefixed,
    /// `mcp__<server>__<tool>`, Claude's convention.
    McpPrefixed,
}

/// The name the model sees for `tool` of `server`: both segments normalised
/// (each character outside `[a-zA-Z0-9_-]` becomes `_`), and when longer than
/// 64 characters cut with a short stable hash of the full name appended (the
/// one sanitiser, [`sanitize_tool_name`](crate::tool::sanitize_tool_name)).
pub fn qualified_name(naming: ToolNaming, server: &str, tool: &str) -> String {
    let prefix = match naming {
        ToolNaming::Prefixed => "",
        ToolNaming::McpPrefixed => "mcp__",
    };
    cap(format!(
        "{prefix}{}__{}",
        normalize(server),
        normalize(tool)
    ))
}

/// Two tools ended up with one qualified name.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "tool `{first_tool}` of MCP server `{first_server}` and tool `{second_tool}` of MCP server `{second_server}` both become `{name}`; rename a server or hide one tool with `tools.deny`"
)]
pub struct NameCollision {
    /// The shared qualified name.
    pub name: String,
    /// The first tool's server.
    pub first_server: String,
    /// The first tool's original name.
    pub first_tool: String,
    /// The second tool's server.
    pub second_server: String,
    /// The second tool's original name.
    pub second_tool: String,
}

/// The reverse map: qualified name → (server, original tool name).
#[derive(Debug, Clone, Default)]
pub struct ToolNames {
    by_name: BTreeMap<String, ToolOrigin>,
}

impl ToolNames {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Names `tool` of `server` and records it; a name already taken by a
    /// different tool is an error naming both.
    pub fn insert(
        &mut self,
        naming: ToolNaming,
        server: &str,
        tool: &str,
    ) -> Result<String, NameCollision> {
        let name = qualified_name(naming, server, tool);
        let origin = ToolOrigin::mcp(server, tool);
        if let Some(existing) = self.by_name.get(&name) {
            if *existing == origin {
                return Ok(name);
            }
            let (first_server, first_tool) = match existing {
                ToolOrigin::Mcp { server, tool } => (server.clone(), tool.clone()),
                other => (other.to_string(), String::new()),
            };
            return Err(NameCollision {
                name,
                first_server,
                first_tool,
                second_server: server.to_owned(),
                second_tool: tool.to_owned(),
            });
        }
        self.by_name.insert(name.clone(), origin);
        Ok(name)
    }

    /// Names a tool of `server`'s listing. A tool whose name an earlier tool
    /// of the same server already took (`dup.name` and `dup_name`) is
    /// skipped (`None`) with a warning naming both, so the server stays; a
    /// clash with another server's tool is an error naming both.
    pub(crate) fn insert_listed(
        &mut self,
        naming: ToolNaming,
        server: &str,
        tool: &str,
    ) -> Result<Option<String>, NameCollision> {
        match self.insert(naming, server, tool) {
            Ok(name) => Ok(Some(name)),
            Err(c) if c.first_server == c.second_server => {
                tracing::warn!(
                    target: super::LOG_TARGET,
                    server = %c.first_server,
                    kept = %c.first_tool,
                    skipped = %c.second_tool,
                    name = %c.name,
                    "tools `{}` and `{}` of MCP server `{}` both become `{}`; skipping `{}`",
                    c.first_tool, c.second_tool, c.first_server, c.name, c.second_tool
                );
                Ok(None)
            }
            Err(c) => Err(c),
        }
    }

    /// Where the qualified `name` came from (a [`ToolOrigin::Mcp`]).
    pub fn origin(&self, name: &str) -> Option<&ToolOrigin> {
        self.by_name.get(name)
    }

    /// How many names.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::is_valid_tool_name;

    #[test]
    fn both_segments_are_normalised() {
        assert_eq!(
            qualified_name(ToolNaming::Prefixed, "my server.v2", "fetch:url"),
            "my_server_v2__fetch_url"
        );
        assert_eq!(
            qualified_name(ToolNaming::McpPrefixed, "docs", "search"),
            "mcp__docs__search"
        );
        assert_eq!(
            qualified_name(ToolNaming::Prefixed, "a-b", "c_d"),
            "a-b__c_d"
        );
        assert_eq!(qualified_name(ToolNaming::Prefixed, "a", "é/x"), "a____x");
    }

    #[test]
    fn long_qualified_names_are_valid() {
        let name = qualified_name(ToolNaming::Prefixed, "srv", &"t".repeat(80));
        assert!(is_valid_tool_name(&name), "{name}");
        assert_eq!(name.len(), crate::tool::MAX_TOOL_NAME_LEN);
    }

    #[test]
    fn collisions_name_both_tools_and_the_reverse_map_finds_origins() {
        let mut names = ToolNames::new();
        let n = names.insert(ToolNaming::Prefixed, "a__b", "c").unwrap();
        assert_eq!(n, "a__b__c");
        assert_eq!(names.origin("a__b__c"), Some(&ToolOrigin::mcp("a__b", "c")));
        assert!(
            names.insert(ToolNaming::Prefixed, "a__b", "c").is_ok(),
            "same tool again is fine"
        );
        let err = names.insert(ToolNaming::Prefixed, "a", "b__c").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("`c` of MCP server `a__b`") && msg.contains("`b__c` of MCP server `a`"),
            "{msg}"
        );
        names.insert(ToolNaming::Prefixed, "a_b", "c").unwrap();
        let err = names.insert(ToolNaming::Prefixed, "a.b", "c").unwrap_err();
        assert_eq!(err.name, "a_b__c");
    }
}
