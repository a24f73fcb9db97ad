//! `lousho --version`: the crate version and the MCP protocol versions the
//! client and the server speak.

use lousho::mcp::rmcp::model::ProtocolVersion;

/// `0.1.0 (MCP 2024-11-05, 2025-03-26, …)`, computed once for clap.
pub fn long() -> &'static str {
    let versions: Vec<&str> = ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .map(ProtocolVersion::as_str)
        .collect();
    let text = format!(
        "{} (MCP protocol versions: {})",
        env!("CARGO_PKG_VERSION"),
        versions.join(", ")
    );
    // Once per process, for clap's `&'static str`.
    Box::leak(text.into_boxed_str())
}
