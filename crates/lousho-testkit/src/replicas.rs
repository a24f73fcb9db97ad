//! Two replicas of a served agent on one PostgreSQL database, as behind a
//! load balancer: two `lousho mcp SPEC --http --port 0` processes (the real
//! CLI binary, given by the test) whose session store is one fresh database
//! of the shared throwaway server ([`PgServer::shared`]). The test gives the
//! spec (its model typically the mock provider, through the environment)
//! and talks to each replica by its URL ([`post`] for raw JSON-RPC, or any
//! MCP client).
//!
//! The processes are killed when the [`Replicas`] is dropped.

use crate::postgres::PgServer;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};

/// Two running `lousho mcp --http` processes sharing one store.
#[derive(Debug)]
pub struct Replicas {
    children: Vec<Child>,
    urls: Vec<String>,
    /// The shared store, as the `postgres://` URL the replicas were given.
    pub store: String,
}

impl Drop for Replicas {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Replicas {
    /// Starts two replicas of `spec` (a spec file's path) on a fresh
    /// database: `lousho` makes the command for the CLI binary (with the
    /// environment the test wants; `env` is added, `LOUSHO_STORE` set).
    /// `None` when PostgreSQL is not installed (the test skips; a panic
    /// under `CI=true`).
    pub fn start(lousho: impl Fn() -> Command, spec: &str, env: &[(&str, &str)]) -> Option<Self> {
        let store = database_url(PgServer::shared()?);
        let mut replicas = Replicas {
            children: Vec::new(),
            urls: Vec::new(),
            store,
        };
        for _ in 0..2 {
            let mut cmd = lousho();
            cmd.args(["mcp", spec, "--http", "--port", "0"])
                .env("LOUSHO_STORE", &replicas.store)
                .envs(env.iter().copied())
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            let (child, url) = start_one(cmd);
            replicas.children.push(child);
            replicas.urls.push(url);
        }
        Some(replicas)
    }

    /// Replica `i`'s MCP endpoint (0 or 1).
    pub fn url(&self, i: usize) -> &str {
        &self.urls[i]
    }
}

/// A fresh database of `pg` as a `postgres://` URL (what `--store` takes).
pub fn database_url(pg: &PgServer) -> String {
    let conn = pg.create_database();
    let dbname = conn
        .rsplit("dbname=")
        .next()
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_default()
        .to_owned();
    format!("postgres://postgres@127.0.0.1:{}/{dbname}", pg.port())
}

/// Spawns `cmd` and waits for the line that names its URL.
fn start_one(mut cmd: Command) -> (Child, String) {
    let mut child = cmd.spawn().expect("lousho mcp starts");
    let mut stderr = BufReader::new(child.stderr.take().expect("piped stderr"));
    let mut seen = String::new();
    let url = loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap_or(0) == 0 {
            let _ = child.kill();
            let _ = child.wait();
            panic!("lousho mcp exited before serving: {seen}");
        }
        seen.push_str(&line);
        if let Some(rest) = line.split(" over MCP at ").nth(1) {
            break rest
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_owned();
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || {
        let _ = stderr.read_to_end(&mut Vec::new());
    });
    (child, url)
}

/// An HTTP answer to a JSON-RPC POST.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// `Retry-After`, in seconds, when sent.
    pub retry_after: Option<u64>,
    /// The JSON body (`Null` when it was none).
    pub body: Value,
}

/// POSTs one JSON-RPC message to `url` with `token` as its bearer token (if
/// any), as a stateless client of the protocol version its
/// `params._meta["io.modelcontextprotocol/protocolVersion"]` names (else
/// 2025-11-25; from 2026-07-28 with the `Mcp-Method` and `Mcp-Name` headers).
pub async fn post(url: &str, token: Option<&str>, body: &Value) -> Answer {
    let version = body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
        .as_str()
        .unwrap_or("2025-11-25");
    let mut req = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", version)
        .body(body.to_string());
    // 2026-07-28 requests carry their method and name in headers too (SEP-2243).
    if version >= "2026" {
        if let Some(method) = body["method"].as_str() {
            req = req.header("mcp-method", method);
        }
        let params = &body["params"];
        let name = ["name", "uri", "taskId"]
            .iter()
            .find_map(|k| params[*k].as_str());
        if let Some(name) = name {
            req = req.header("mcp-name", name);
        }
    }
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let res = req.send().await.expect("the replica answers");
    let status = res.status().as_u16();
    let retry_after = res
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    let body = res.json().await.unwrap_or(Value::Null);
    Answer {
        status,
        retry_after,
        body,
    }
}
