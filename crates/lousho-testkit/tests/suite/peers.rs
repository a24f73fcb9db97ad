//! Finding the pinned third-party peers installed by `interop/install.sh`,
//! and running the lousho test server.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

pub fn test_server() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_lousho-test-server"))
}

/// A peer is missing: a failure under `CI=true`, a visible skip otherwise.
fn missing(what: &str) -> Option<PathBuf> {
    let msg = format!("{what} is not installed: run interop/install.sh");
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{msg}");
    }
    eprintln!("SKIPPED: {msg}");
    None
}

/// The interop venv's Python with the official `mcp` SDK.
pub fn python() -> Option<PathBuf> {
    let py = repo_root().join("interop/.venv/bin/python");
    let sdk = repo_root().join("interop/.venv/lib");
    if py.exists() && sdk.exists() {
        Some(py)
    } else {
        missing("the Python MCP SDK (interop/.venv)")
    }
}

/// Node, when the TypeScript SDK is installed under interop/node_modules.
pub fn node() -> Option<PathBuf> {
    let sdk = repo_root().join("interop/node_modules/@modelcontextprotocol/sdk/package.json");
    if sdk.exists() {
        Some(PathBuf::from("node"))
    } else {
        missing("the TypeScript MCP SDK (interop/node_modules)")
    }
}

/// Runs an interop client script and parses the JSON report it prints.
pub fn run_client(program: &Path, script: &str, args: &[&str]) -> Value {
    let out = Command::new(program)
        .current_dir(repo_root().join("interop"))
        .arg(format!("clients/{script}"))
        .args(args)
        .stderr(Stdio::piped())
        .output()
        .expect("the client runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{script} {args:?} failed: {}\nstdout: {stdout}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("bad report ({e}): {stdout}"))
}

/// Runs `script` against `lousho-test-server` started with `flags`: over
/// stdio (`<script> stdio <server> <flags>`) or over stateless HTTP
/// (`<script> http <url>`).
pub fn run_against_test_server(
    program: &Path,
    script: &str,
    transport: &str,
    flags: &[&str],
) -> Value {
    if transport == "stdio" {
        let server = test_server();
        let mut args = vec!["stdio", server.to_str().unwrap()];
        args.extend(flags);
        run_client(program, script, &args)
    } else {
        let server = HttpServer::start(flags);
        run_client(program, script, &["http", &server.url])
    }
}

/// The test server serving HTTP on a free port; killed on drop.
pub struct HttpServer {
    child: Child,
    pub url: String,
}

impl HttpServer {
    pub fn start(extra: &[&str]) -> Self {
        let mut child = Command::new(test_server())
            .args(["--http", "--port", "0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the test server starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .expect("a listening line")
            .to_owned();
        Self { child, url }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for a child to exit, up to `limit`.
pub fn wait_with_limit(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// `text` without its ANSI colour sequences (`ESC [ ... m`).
pub fn without_ansi_colours(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
