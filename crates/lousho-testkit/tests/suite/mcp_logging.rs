//! The product page's `logger` option, in Rust: skipped-server and
//! skipped-tool warnings are `tracing` events with the target `lousho::mcp`
//! (`lousho::mcp::LOG_TARGET`); a subscriber captures them. This is
//! the example docs/mcp-client.md shows.

use super::fixture::fixture;
use super::mcp_handle::python_server;
use lousho::mcp::{ConnectOptions, OnError};
use lousho::{McpServer, connect_mcp};
use std::sync::{Arc, Mutex};

/// Where the warnings go: a buffer the test reads.
#[derive(Clone, Default)]
pub(super) struct Logs(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    pub(super) fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// A subscriber that keeps lousho's MCP warnings in memory, for this thread.
fn capture_mcp_warnings() -> (Logs, tracing::subscriber::DefaultGuard) {
    capture_logs("lousho::mcp=warn")
}

/// A subscriber that keeps the events `filter` lets through in memory, for
/// this thread (and so for the tasks of a current-thread test runtime).
pub(super) fn capture_logs(filter: &str) -> (Logs, tracing::subscriber::DefaultGuard) {
    let logs = Logs::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    (logs, tracing::subscriber::set_default(subscriber))
}

#[tokio::test]
async fn skipped_server_and_tool_warnings_are_captured_by_a_subscriber() {
    let (logs, _guard) = capture_mcp_warnings();
    let mcp = connect_mcp(
        [
            // Two tools that normalise to one name: the later is skipped.
            ("files", fixture("serve").env("FIXTURE_DUP_NAMES", "1")),
            ("docs", McpServer::stdio("/nonexistent/docs-server")),
        ],
        ConnectOptions::default().on_error(OnError::Skip),
    )
    .await
    .unwrap();
    let logs = logs.text();
    assert!(logs.contains("WARN"), "{logs}");
    assert!(
        logs.contains("skipping MCP server `docs`") && logs.contains("/nonexistent/docs-server"),
        "{logs}"
    );
    assert!(
        logs.contains("skipping `dup_name`") && logs.contains("`dup.name`"),
        "the skipped tool: {logs}"
    );
    assert!(
        logs.lines().all(|l| l.contains(" lousho::mcp: ")),
        "every warning has the documented target: {logs}"
    );
    mcp.close().await;
}

#[tokio::test]
async fn python_sdk_a_skipped_server_is_a_warning_a_subscriber_captures() {
    let Some(entry) = python_server("--tag=logging") else {
        return;
    };
    let (logs, _guard) = capture_mcp_warnings();
    let mcp = connect_mcp(
        [
            ("py", entry),
            ("gone", McpServer::stdio("/nonexistent/gone-server")),
        ],
        ConnectOptions::default().on_error(OnError::Skip),
    )
    .await
    .unwrap();
    assert!(mcp.tools().contains("py__add"));
    let logs = logs.text();
    assert!(logs.contains("skipping MCP server `gone`"), "{logs}");
    assert!(!logs.contains("`py`"), "{logs}");
    mcp.close().await;
}

/// `RUST_LOG=lousho=debug` says what someone debugging a slow or failing
/// server needs while lousho connects and lists it: the command and folder
/// (never environment values), the protocol version and capabilities
/// negotiated, how long spawn, handshake and listing took, and whether the
/// catalog had the server's tools and why not.
#[tokio::test]
async fn connecting_and_listing_a_server_is_told_at_debug_level() {
    use lousho::mcp::{ManifestStore, MemoryManifestStore};
    let (logs, _guard) = capture_logs("lousho=debug");
    let secret = "s3cret-env-value-never-logged";
    let dir = std::env::temp_dir();
    let entry = fixture("serve").env("FIXTURE_API_TOKEN", secret).cwd(&dir);
    let store: Arc<dyn ManifestStore> = Arc::new(MemoryManifestStore::new());
    let options = || ConnectOptions::default().manifests(store.clone());
    let mcp = connect_mcp([("fx", entry.clone())], options())
        .await
        .unwrap();
    mcp.connect_all().await.unwrap();
    mcp.close().await;
    // A second client finds the listing the first recorded.
    let again = connect_mcp([("fx", entry)], options()).await.unwrap();
    again.close().await;
    let text = logs.text();
    let lines = |words: &[&str]| {
        text.lines()
            .filter(|l| l.contains("DEBUG") && words.iter().all(|w| l.contains(w)))
            .count()
    };
    let command = super::fixture::fixture_bin();
    assert!(
        lines(&["spawning the MCP server", "fx", command, "cwd="]) >= 1,
        "{text}"
    );
    assert!(lines(&["spawned the MCP server", "took="]) >= 1, "{text}");
    assert!(
        lines(&[
            "MCP session negotiated",
            "protocol_version=2025-11-25",
            "handshake=true",
            "capabilities=",
            "took="
        ]) >= 1,
        "{text}"
    );
    assert!(
        lines(&["listed the MCP server's tools", "tools=", "took="]) >= 1,
        "{text}"
    );
    assert!(
        lines(&["catalog miss", "no tool manifest recorded"]) == 1,
        "{text}"
    );
    assert!(lines(&["catalog hit", "tools="]) == 1, "{text}");
    assert!(
        !text.contains(secret),
        "an environment value was logged: {text}"
    );
}
