//! The no-MCP floor of the serve benchmark: answers each newline-delimited
//! JSON-RPC request (stdio) or POST (`--http`) with a canned `echo` result
//! carrying the request's id. What the transport alone costs.

use axum::body::Bytes;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn answer(line: &[u8]) -> Option<Vec<u8>> {
    let v: Value = serde_json::from_slice(line).ok()?;
    let id = v.get("id")?.clone();
    let result = match v.get("method").and_then(Value::as_str) {
        Some("initialize") => serde_json::json!({
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "floor", "version": "0"}
        }),
        Some("tools/list") => serde_json::json!({"tools": [{
            "name": "echo", "description": "Echo", "inputSchema": {"type": "object"}
        }]}),
        _ => {
            let text = v
                .pointer("/params/arguments/text")
                .cloned()
                .unwrap_or(Value::Null);
            serde_json::json!({"content": [{"type": "text", "text": text}], "isError": false})
        }
    };
    let mut out =
        serde_json::to_vec(&serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}))
            .ok()?;
    out.push(b'\n');
    Some(out)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().any(|a| a == "--http") {
        let app = axum::Router::new().route(
            "/mcp",
            axum::routing::post(|body: Bytes| async move {
                let out = answer(&body).unwrap_or_default();
                ([("content-type", "application/json")], out)
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        println!("listening on http://{}/mcp", listener.local_addr()?);
        axum::serve(listener, app).await?;
        return Ok(());
    }
    let (stdin, mut stdout) = (
        lousho_testkit::bench::stdin_pipe()?,
        lousho_testkit::bench::stdout_pipe()?,
    );
    let mut reader = BufReader::new(stdin);
    let mut line = Vec::new();
    let mut batch = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).await? == 0 {
            break;
        }
        if let Some(out) = answer(&line) {
            batch.extend_from_slice(&out);
        }
        // Write when nothing more is buffered.
        if reader.buffer().is_empty() {
            stdout.write_all(&batch).await?;
            batch.clear();
        }
    }
    stdout.write_all(&batch).await?;
    Ok(())
}
