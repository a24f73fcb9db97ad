//! Launching the fixture server in tests.

use lousho::McpServer;
use lousho::{Tool, ToolContext, ToolOutput};
use std::path::PathBuf;

/// The stdio fixture binary.
pub fn fixture_bin() -> &'static str {
    env!("CARGO_BIN_EXE_lousho-fixture-mcp")
}

/// An entry for the fixture server in `mode` (default `serve`).
pub fn fixture(mode: &str) -> McpServer {
    McpServer::stdio(fixture_bin()).arg(mode)
}

/// A fresh scratch directory.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "lousho-mcp-{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Lines in a file (0 when missing).
pub fn line_count(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path)
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

/// Waits until the file at `path` holds the line `line` (the event itself, not
/// a guess at how long it takes); panics naming `what` after a generous 30 s.
pub async fn wait_for_line(path: &std::path::Path, line: &str, what: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !std::fs::read_to_string(path).is_ok_and(|s| s.lines().any(|l| l == line)) {
        assert!(std::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// Calls a tool outside an agent.
pub async fn call(tool: &std::sync::Arc<dyn Tool>, input: serde_json::Value) -> ToolOutput {
    match tool.call(input, ToolContext::new("t")).await {
        Ok(out) => out,
        Err(e) => ToolOutput::error(e.to_string()),
    }
}

/// Processes whose command line contains `tag` (from /proc).
pub fn processes_tagged(tag: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline);
        if cmdline.split('\0').any(|a| a == tag) {
            // Zombies count too: they are processes nobody reaped.
            found.push(pid);
        }
    }
    found
}

/// A unique `--tag=…` argument.
pub fn unique_tag(name: &str) -> String {
    format!(
        "--tag={name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

/// Pids logged to a `FIXTURE_SPAWN_LOG` file, by mode.
pub fn logged_pids(path: &std::path::Path, mode: &str) -> Vec<u32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix(mode).and_then(|p| p.trim().parse().ok()))
        .collect()
}

/// Whether a process exists at all (running or zombie).
pub fn process_exists(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Collects everything `tracing` writes, at every level.
#[derive(Clone, Default)]
pub struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Captured {
    /// What was written so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Captures this thread's `tracing` output at TRACE level (no ANSI colours)
/// until the guard drops.
pub fn capture_logs() -> (Captured, tracing::subscriber::DefaultGuard) {
    let logs = Captured::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    (logs, tracing::subscriber::set_default(subscriber))
}
