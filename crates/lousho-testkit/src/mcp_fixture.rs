//! A fixture MCP server (rmcp, hand-written handler) with tools of every kind
//! and observable misbehaviour, served over stdio by the `lousho-fixture-mcp`
//! binary or over Streamable HTTP in-process ([`serve_http`]).
//!
//! Behaviour switches (environment variables of the stdio binary):
//! `FIXTURE_SPAWN_LOG` (append `<mode> <pid>` on start; the launcher and
//! sleeper modes log too), `FIXTURE_SLOW_START_MS`,
//! `FIXTURE_START_WHEN_SPAWNED` (N: answer nothing until the spawn log holds
//! N lines — servers that can only start if they were all spawned together),
//! `FIXTURE_BANNER` (print a non-JSON line to stdout first),
//! `FIXTURE_STDERR` (write it to stderr on start), `FIXTURE_EXIT_UNLESS`
//! (exit 1 unless that file exists), `FIXTURE_CANCEL_FILE` (the slow tool
//! appends `started` there when called and `cancelled` when cancelled), `FIXTURE_GRANDCHILD=1` (spawn a
//! long-lived grandchild that ignores stdin), `FIXTURE_IGNORE_EOF=1` (keep
//! running for an hour after stdin closes, like a server that ignores EOF),
//! `FIXTURE_TOOLS_FILE` (list the tools of that JSON file — an array of MCP
//! tool definitions — instead of the built-in ones, read afresh on every
//! `tools/list`: a server whose definitions change between connects),
//! `FIXTURE_TTL_MS` (the `ttlMs` of its `tools/list` result).

use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion,
    ServerCapabilities, ServerConfig, SubscriptionFilter, Tool,
};
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::broadcast;

/// The fixture server's state.
#[derive(Clone, Debug)]
pub struct Fixture {
    tools: Arc<RwLock<BTreeMap<String, Tool>>>,
    changed: broadcast::Sender<()>,
    tools_file: Option<std::path::PathBuf>,
    /// Speaks only 2026-07-28 (refuses `initialize`); `FIXTURE_ONLY_2026=1`.
    only_2026: bool,
}

impl Default for Fixture {
    fn default() -> Self {
        Self::new()
    }
}

fn initial_tools() -> Vec<Value> {
    let text = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    let empty = json!({"type": "object", "properties": {}});
    let ms = json!({"type": "object", "properties": {"ms": {"type": "integer"}, "steps": {"type": "integer"}}});
    vec![
        json!({"name": "echo", "title": "Echo", "description": "Echoes text", "inputSchema": text,
               "annotations": {"readOnlyHint": true}}),
        json!({"name": "destroy", "description": "Deletes things", "inputSchema": empty,
               "annotations": {"destructiveHint": true}}),
        json!({"name": "gentle", "description": "Changes things, harmlessly", "inputSchema": empty,
               "annotations": {"destructiveHint": false, "title": "Gentle change"}}),
        json!({"name": "plain", "description": "No annotations at all", "inputSchema": empty}),
        json!({"name": "fetch:url", "description": "A name with a colon", "inputSchema": text,
               "annotations": {"readOnlyHint": true, "openWorldHint": true, "idempotentHint": true}}),
        json!({"name": "mixed", "description": "Returns every content kind", "inputSchema": empty,
               "annotations": {"readOnlyHint": true}}),
        json!({"name": "fail", "description": "Always returns isError", "inputSchema": empty,
               "annotations": {"readOnlyHint": true}}),
        json!({"name": "env", "description": "Returns an environment variable", "inputSchema":
               {"type": "object", "properties": {"name": {"type": "string"}}}, "annotations": {"readOnlyHint": true}}),
        json!({"name": "slow", "description": "Sleeps ms milliseconds", "inputSchema": ms,
               "annotations": {"readOnlyHint": true}}),
        json!({"name": "progress", "description": "Sleeps ms per step, reporting progress", "inputSchema": ms,
               "annotations": {"readOnlyHint": true}}),
        json!({"name": "crash", "description": "Exits in the middle of the call", "inputSchema": empty,
               "annotations": {"readOnlyHint": true}}),
        json!({"name": "huge", "description": "Returns 17 MB of text", "inputSchema": empty,
               "annotations": {"readOnlyHint": true}}),
        json!({"name": "add_tool", "description": "Adds a tool named `text`", "inputSchema": text,
               "annotations": {"readOnlyHint": true}}),
    ]
}

fn result(v: Value) -> Result<CallToolResponse, ErrorData> {
    let r: CallToolResult =
        serde_json::from_value(v).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(r.into())
}

fn text(t: impl Into<String>) -> Result<CallToolResponse, ErrorData> {
    result(json!({"content": [{"type": "text", "text": t.into()}]}))
}

impl Fixture {
    /// A fixture with the initial tools; with `FIXTURE_DUP_NAMES=1` also
    /// `dup.name` and `dup_name`, two valid MCP names that normalise to one.
    pub fn new() -> Self {
        let mut listed = initial_tools();
        if std::env::var("FIXTURE_DUP_NAMES").is_ok_and(|v| v == "1") {
            let empty = json!({"type": "object", "properties": {}});
            for name in ["dup.name", "dup_name"] {
                listed.push(
                    json!({"name": name, "description": format!("Answers {name}"),
                                   "inputSchema": empty, "annotations": {"readOnlyHint": true}}),
                );
            }
        }
        let tools = listed
            .into_iter()
            .map(|v| serde_json::from_value::<Tool>(v).unwrap())
            .map(|t| (t.name.to_string(), t))
            .collect();
        Self {
            tools: Arc::new(RwLock::new(tools)),
            changed: broadcast::channel(16).0,
            tools_file: std::env::var_os("FIXTURE_TOOLS_FILE").map(Into::into),
            only_2026: std::env::var("FIXTURE_ONLY_2026").is_ok_and(|v| v == "1"),
        }
    }

    /// The same fixture speaking only protocol 2026-07-28: it refuses the
    /// `initialize` handshake, so clients use per-request metadata.
    pub fn only_2026_07_28(mut self) -> Self {
        self.only_2026 = true;
        self
    }

    /// A fixture whose tools are the definitions in `path` (a JSON array),
    /// read again on every `tools/list`; a tool of the file answers
    /// `called <name>` (`destroy`: `destroyed`).
    pub fn with_tools_file(path: impl Into<std::path::PathBuf>) -> Self {
        Self {
            tools_file: Some(path.into()),
            ..Self::new()
        }
    }

    /// Re-reads the tools file, when there is one.
    fn reload(&self) {
        let Some(path) = &self.tools_file else { return };
        let text = std::fs::read_to_string(path).unwrap();
        let listed: Vec<Tool> = serde_json::from_str(&text).unwrap();
        *self.tools.write().unwrap() = listed
            .into_iter()
            .map(|t| (t.name.to_string(), t))
            .collect();
    }
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("lousho-fixture", "1.0.0"))
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        if self.only_2026 {
            std::borrow::Cow::Owned(vec![ProtocolVersion::V_2026_07_28])
        } else {
            std::borrow::Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.reload();
        let mut result =
            ListToolsResult::with_all_items(self.tools.read().unwrap().values().cloned().collect());
        if let Some(ttl) = std::env::var("FIXTURE_TTL_MS")
            .ok()
            .and_then(|v| v.parse().ok())
        {
            result.ttl_ms = Some(ttl);
        }
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.read().unwrap().get(name).cloned()
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    async fn listen(&self, cx: SubscriptionContext) -> Result<(), ErrorData> {
        let mut rx = self.changed.subscribe();
        loop {
            tokio::select! {
                () = cx.cancelled() => return Ok(()),
                r = rx.recv() => {
                    if r.is_err() { return Ok(()); }
                    let _ = cx.sink().notify_tool_list_changed().await;
                }
            }
        }
    }

    async fn call_tool(
        &self,
        req: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = req.arguments.clone().unwrap_or_default();
        let int = |k: &str, d: u64| args.get(k).and_then(Value::as_u64).unwrap_or(d);
        let string = |k: &str| {
            args.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        match req.name.as_ref() {
            "echo" | "fetch:url" => text(string("text")),
            "destroy" => text("destroyed"),
            name @ ("dup.name" | "dup_name") => text(name),
            "huge" => text("x".repeat(17 * 1024 * 1024)),
            "gentle" => text("changed"),
            "plain" => text("plain"),
            "mixed" => result(json!({
                "content": [
                    {"type": "text", "text": "some text"},
                    {"type": "image", "data": "aW1hZ2U=", "mimeType": "image/png"},
                    {"type": "audio", "data": "YXVkaW8=", "mimeType": "audio/wav"},
                    {"type": "resource", "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "embedded notes"}}
                ],
                "structuredContent": {"answer": 42}
            })),
            "fail" => result(
                json!({"content": [{"type": "text", "text": "it went wrong"}], "isError": true}),
            ),
            "env" => text(std::env::var(string("name")).unwrap_or_else(|_| "<unset>".into())),
            "slow" => {
                let ms = int("ms", 10_000);
                if let Ok(path) = std::env::var("FIXTURE_CANCEL_FILE") {
                    append_line(&path, "started");
                }
                tokio::select! {
                    () = cx.ct.cancelled() => {
                        if let Ok(path) = std::env::var("FIXTURE_CANCEL_FILE") {
                            append_line(&path, "cancelled");
                        }
                        Err(ErrorData::internal_error("cancelled", None))
                    }
                    () = tokio::time::sleep(Duration::from_millis(ms)) => text(format!("slept {ms} ms")),
                }
            }
            "progress" => {
                let (ms, steps) = (int("ms", 100), int("steps", 5));
                let token = cx.meta.get_progress_token();
                for i in 0..steps {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    if let Some(t) = &token {
                        let _ = cx
                            .peer
                            .notify_progress(ProgressNotificationParam::new(
                                t.clone(),
                                (i + 1) as f64,
                            ))
                            .await;
                    }
                }
                text(format!("done after {steps} steps"))
            }
            "crash" => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                std::process::exit(3);
            }
            "add_tool" => {
                let name = string("text");
                let tool: Tool = serde_json::from_value(json!({
                    "name": name, "description": "Added at run time",
                    "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}
                }))
                .unwrap();
                self.tools.write().unwrap().insert(name.clone(), tool);
                let _ = self.changed.send(());
                let _ = cx.peer.notify_tool_list_changed().await;
                text(format!("added {name}"))
            }
            other if self.tools.read().unwrap().contains_key(other) => {
                text(format!("called {other}"))
            }
            other => Err(ErrorData::invalid_params(
                format!("unknown tool {other}"),
                None,
            )),
        }
    }
}

/// A fixture served over Streamable HTTP on 127.0.0.1 (a free port).
#[derive(Debug)]
pub struct HttpFixture {
    /// The MCP endpoint (`http://127.0.0.1:<port>/mcp`).
    pub url: String,
    /// Headers seen on requests (lower-case name → value), newest last.
    pub seen_headers: Arc<std::sync::Mutex<Vec<BTreeMap<String, String>>>>,
    shutdown: tokio_util::sync::CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl HttpFixture {
    /// Stops the server.
    pub async fn stop(mut self) {
        self.shutdown.cancel();
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
    }
}

/// Serves a fresh [`Fixture`] over Streamable HTTP (stateful by default, as
/// most servers are); `stateless` uses JSON responses without sessions.
pub async fn serve_http(stateless: bool) -> HttpFixture {
    serve_http_fixture(Fixture::new(), stateless).await
}

/// Serves `fixture` over Streamable HTTP, like [`serve_http`].
pub async fn serve_http_fixture(fixture: Fixture, stateless: bool) -> HttpFixture {
    serve_http_at(fixture, stateless, "127.0.0.1:0").await
}

/// Serves `fixture` over Streamable HTTP on `addr` (say, the address of a
/// stopped fixture: a restarted server that knows none of its sessions).
pub async fn serve_http_at(fixture: Fixture, stateless: bool, addr: &str) -> HttpFixture {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let ct = tokio_util::sync::CancellationToken::new();
    let mut cfg = StreamableHttpServerConfig::default().with_cancellation_token(ct.child_token());
    if stateless {
        cfg = cfg.with_legacy_session_mode(false).with_json_response(true);
    }
    let svc = StreamableHttpService::new(
        move || Ok(fixture.clone()),
        Arc::new(LocalSessionManager::default()),
        cfg,
    );
    let seen: Arc<std::sync::Mutex<Vec<BTreeMap<String, String>>>> = Arc::default();
    let seen2 = seen.clone();
    let app = axum::Router::new()
        .nest_service("/mcp", svc)
        .layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                let seen = seen2.clone();
                async move {
                    let h = req
                        .headers()
                        .iter()
                        .map(|(k, v)| {
                            (
                                k.as_str().to_owned(),
                                v.to_str().unwrap_or_default().to_owned(),
                            )
                        })
                        .collect();
                    seen.lock().unwrap().push(h);
                    next.run(req).await
                }
            },
        ));
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = ct.clone();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await;
    });
    HttpFixture {
        url: format!("http://{addr}/mcp"),
        seen_headers: seen,
        shutdown: ct,
        task: Some(task),
    }
}

/// Appends `line` and a newline to the file at `path` in one `write` call, so
/// that processes appending to one log at once never interleave their lines
/// (`writeln!` on a `File` writes each formatted piece with its own call).
pub fn append_line(path: &str, line: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    f.write_all(format!("{line}\n").as_bytes()).unwrap();
}

/// The stdio binary's entry: applies the behaviour switches, then serves.
pub async fn run_stdio() {
    use rmcp::ServiceExt;
    if let Ok(path) = std::env::var("FIXTURE_SPAWN_LOG") {
        append_line(&path, &format!("serve {}", std::process::id()));
    }
    if let (Ok(n), Ok(path)) = (
        std::env::var("FIXTURE_START_WHEN_SPAWNED"),
        std::env::var("FIXTURE_SPAWN_LOG"),
    ) {
        let n: usize = n.parse().unwrap_or(0);
        while std::fs::read_to_string(&path).map_or(0, |s| s.lines().count()) < n {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    if let Ok(msg) = std::env::var("FIXTURE_STDERR") {
        eprintln!("{msg}");
    }
    if let Ok(path) = std::env::var("FIXTURE_EXIT_UNLESS")
        && !std::path::Path::new(&path).exists()
    {
        eprintln!("fixture: required file {path} is missing");
        std::process::exit(1);
    }
    if let Ok(ms) = std::env::var("FIXTURE_SLOW_START_MS") {
        tokio::time::sleep(Duration::from_millis(ms.parse().unwrap_or(0))).await;
    }
    if let Ok(banner) = std::env::var("FIXTURE_BANNER") {
        println!("{banner}");
    }
    let _grandchild = if std::env::var("FIXTURE_GRANDCHILD").is_ok_and(|v| v == "1") {
        let exe = std::env::current_exe().unwrap();
        Some(
            std::process::Command::new(exe)
                .arg("sleeper")
                .args(std::env::args().skip(1).filter(|a| a.starts_with("--tag")))
                .stdin(std::process::Stdio::null())
                .spawn()
                .unwrap(),
        )
    } else {
        None
    };
    let service = Fixture::new().serve(rmcp::transport::stdio_pipes()).await;
    if let Ok(service) = service {
        let _ = service.waiting().await;
    }
    if std::env::var("FIXTURE_IGNORE_EOF").is_ok_and(|v| v == "1") {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
}

/// The floor over HTTP: every POST answered with
/// [`floor_answer`](crate::bench::floor_answer) (202 for notifications). The
/// benchmark's floor. Bodies up to 64 MiB (the big-message rows send 8 MiB).
/// Returns its URL.
pub async fn serve_floor_http() -> String {
    let app = axum::Router::new()
        .route(
            "/mcp",
            axum::routing::post(|body: axum::body::Bytes| async move {
                let json = [(axum::http::header::CONTENT_TYPE, "application/json")];
                match crate::bench::floor_answer(&body) {
                    Some(reply) => (axum::http::StatusCode::OK, json, reply),
                    None => (axum::http::StatusCode::ACCEPTED, json, Vec::new()),
                }
            }),
        )
        .layer(axum::extract::DefaultBodyLimit::max(64 << 20));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}/mcp")
}
