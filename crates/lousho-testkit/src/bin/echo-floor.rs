//! The no-MCP floor of the serve benchmark: answers each newline-delimited
//! JSON-RPC request (stdio) or POST (`--http`) with
//! [`floor_answer`](lousho_testkit::bench::floor_answer). What the transport
//! alone costs.

use axum::body::Bytes;
use lousho_testkit::bench::floor_answer as answer;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().any(|a| a == "--http") {
        let app = axum::Router::new()
            .route(
                "/mcp",
                axum::routing::post(|body: Bytes| async move {
                    match answer(&body) {
                        Some(out) => (
                            axum::http::StatusCode::OK,
                            [("content-type", "application/json")],
                            out,
                        ),
                        None => (
                            axum::http::StatusCode::ACCEPTED,
                            [("content-type", "application/json")],
                            Vec::new(),
                        ),
                    }
                }),
            )
            // Big-message rows send up to 8 MiB (axum's default limit is 2 MB).
            .layer(axum::extract::DefaultBodyLimit::max(64 << 20));
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
