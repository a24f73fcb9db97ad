//! Replicas of a served agent on one session store, as behind a load
//! balancer: `lousho mcp SPEC --http --port 0` processes (the real CLI
//! binary, given by the test) whose store is one fresh database of the
//! shared throwaway PostgreSQL server ([`PgServer::shared`], see
//! [`Replicas::start`]) or any store the test names
//! ([`Replicas::start_on`], e.g. a SQLite file). The test gives the spec
//! (its model typically the mock provider, through the environment) and
//! talks to each replica by its URL ([`post`] for raw JSON-RPC, or lousho's
//! MCP client through [`connect`]).
//!
//! A [`Replica`] is one such process; it is killed when dropped, and
//! [`Replica::kill`] kills it early, as a crash does.

use crate::postgres::PgServer;
use lousho::mcp::{ConnectOptions, McpClient};
use lousho::{McpServer, Tool, connect_mcp};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

/// One running `lousho mcp --http` process, killed when dropped.
#[derive(Debug)]
pub struct Replica {
    child: Child,
    url: String,
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Replica {
    /// Runs `cmd` (the CLI binary with the environment the test wants) as
    /// `lousho mcp SPEC --http --port 0` and waits for the line that names
    /// its URL. Panics if it exits before serving (with what it wrote).
    pub fn serve(mut cmd: Command, spec: &str) -> Self {
        cmd.args(["mcp", spec, "--http", "--port", "0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
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
        Replica { child, url }
    }

    /// Its MCP endpoint.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Kills the process with SIGKILL and waits until it is gone, as a
    /// crash would: it gets no chance to close anything (its leases run
    /// out, its journaled runs stay running). Give the replicas
    /// `LOUSHO_SUPERVISOR=0` for the kill to hit the server itself: by
    /// default the process is a supervisor, whose child would be told to
    /// close gracefully instead.
    pub fn kill(&mut self) {
        self.child.kill().expect("the replica can be killed");
        self.child.wait().expect("the killed replica is reaped");
    }
}

/// Two running `lousho mcp --http` processes sharing one store.
#[derive(Debug)]
pub struct Replicas {
    replicas: Vec<Replica>,
    /// The shared store, as the `LOUSHO_STORE` the replicas were given (a
    /// `postgres://` URL from [`Replicas::start`]).
    pub store: String,
}

impl Replicas {
    /// Starts two replicas of `spec` (a spec file's path) on a fresh
    /// PostgreSQL database: `lousho` makes the command for the CLI binary
    /// (with the environment the test wants; `env` is added, `LOUSHO_STORE`
    /// set). `None` when PostgreSQL is not installed (the test skips; a
    /// panic under `CI=true`).
    pub fn start(lousho: impl Fn() -> Command, spec: &str, env: &[(&str, &str)]) -> Option<Self> {
        let store = database_url(PgServer::shared()?);
        Some(Self::start_on(lousho, store, spec, env))
    }

    /// [`Replicas::start`] on `store`: a `postgres://` URL or a SQLite
    /// file's path, whatever `LOUSHO_STORE` takes.
    pub fn start_on(
        lousho: impl Fn() -> Command,
        store: String,
        spec: &str,
        env: &[(&str, &str)],
    ) -> Self {
        let replicas = (0..2)
            .map(|_| {
                let mut cmd = lousho();
                cmd.env("LOUSHO_STORE", &store).envs(env.iter().copied());
                Replica::serve(cmd, spec)
            })
            .collect();
        Replicas { replicas, store }
    }

    /// Replica `i`'s MCP endpoint (0 or 1).
    pub fn url(&self, i: usize) -> &str {
        self.replicas[i].url()
    }

    /// Replica `i` (0 or 1), e.g. to [`kill`](Replica::kill) it.
    pub fn replica(&mut self, i: usize) -> &mut Replica {
        &mut self.replicas[i]
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

/// A fresh database of the shared throwaway server as a `postgres://` URL;
/// `None` when PostgreSQL is not installed (the test skips; a panic under
/// `CI=true`).
pub fn postgres_store() -> Option<String> {
    PgServer::shared().map(database_url)
}

/// Lousho's MCP client connected to the servers at `urls` (named `r0` and
/// `r1`), with each one's `tool` in that order.
pub async fn connect(urls: [&str; 2], tool: &str) -> (McpClient, [Arc<dyn Tool>; 2]) {
    let mcp = connect_mcp(
        [
            ("r0", McpServer::http(urls[0])),
            ("r1", McpServer::http(urls[1])),
        ],
        ConnectOptions::default(),
    )
    .await
    .expect("both replicas answer");
    let tools = mcp.tools();
    let tool = |server: &str| {
        tools
            .get(&format!("{server}__{tool}"))
            .unwrap_or_else(|| panic!("{server} offers {tool}"))
            .clone()
    };
    let pair = [tool("r0"), tool("r1")];
    (mcp, pair)
}

/// `_meta` of a stateless 2026-07-28 request from a client that takes
/// tasks (it declares the `io.modelcontextprotocol/tasks` extension).
pub fn tasks_client_meta() -> Value {
    serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "replica-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
    })
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
