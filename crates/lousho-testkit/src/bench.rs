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

/// Starts an HTTP MCP server for a benchmark (`program args…`, stdin and
/// stderr closed, killed on drop) and reads the URL from the
/// `listening on <url>` line it prints first.
pub async fn spawn_listening(
    program: &std::path::Path,
    args: &[String],
) -> Result<(tokio::process::Child, String), Box<dyn std::error::Error + Send + Sync>> {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let mut out = tokio::io::BufReader::new(child.stdout.take().ok_or("no stdout")?);
    let mut line = String::new();
    out.read_line(&mut line).await?;
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .ok_or("no listening line")?
        .to_owned();
    Ok((child, url))
}
