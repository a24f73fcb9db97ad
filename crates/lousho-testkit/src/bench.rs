//! Helpers for the benchmarks' binaries: the no-MCP floor's answers and
//! non-blocking stdio pipes.

use std::os::fd::AsFd;
use tokio::net::unix::pipe;

/// fd 0 as a non-blocking pipe reader (the benchmark spawns its servers with pipes).
pub fn stdin_pipe() -> std::io::Result<pipe::Receiver> {
    pipe::Receiver::from_owned_fd(std::io::stdin().as_fd().try_clone_to_owned()?)
}

/// fd 1 as a non-blocking pipe writer.
pub fn stdout_pipe() -> std::io::Result<pipe::Sender> {
    pipe::Sender::from_owned_fd(std::io::stdout().as_fd().try_clone_to_owned()?)
}

/// The floor's answer to one JSON-RPC message: just enough MCP for a real
/// client to connect (`initialize` echoes the requested protocol version,
/// `tools/list` has one `echo` tool), and a canned `echo` result for every
/// other request. Notifications get no answer (`None`). No state, no
/// validation: what the transport alone costs.
pub fn floor_answer(message: &[u8]) -> Option<Vec<u8>> {
    use serde_json::{Value, json};
    let v: Value = serde_json::from_slice(message).ok()?;
    let id = v.get("id")?.clone();
    let result = match v.get("method").and_then(Value::as_str) {
        Some("initialize") => json!({
            "protocolVersion": v.pointer("/params/protocolVersion").cloned().unwrap_or(json!("2025-11-25")),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "floor", "version": "0"}
        }),
        Some("tools/list") => json!({"tools": [{
            "name": "echo", "description": "Echo", "inputSchema": {"type": "object"}
        }]}),
        Some("ping") => json!({}),
        _ => {
            let text = v
                .pointer("/params/arguments/text")
                .cloned()
                .unwrap_or(Value::Null);
            json!({"content": [{"type": "text", "text": text}], "isError": false})
        }
    };
    let mut out =
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": result})).ok()?;
    out.push(b'\n');
    Some(out)
}
