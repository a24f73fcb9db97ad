//! The agent tool's default name.

use crate::tool::MAX_TOOL_NAME_LEN;

/// The agent tool's name for a server name: every character outside
/// `[a-zA-Z0-9_-]` becomes `_`, cut to the longest valid tool name; an empty
/// name becomes `agent`.
///
/// ```
/// use lousho::mcp::server::sanitize_tool_name;
/// assert_eq!(sanitize_tool_name("support bot v2.1"), "support_bot_v2_1");
/// assert_eq!(sanitize_tool_name(""), "agent");
/// ```
pub fn sanitize_tool_name(server_name: &str) -> String {
    let name: String = server_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_TOOL_NAME_LEN)
        .collect();
    if name.is_empty() {
        "agent".to_owned()
    } else {
        name
    }
}
