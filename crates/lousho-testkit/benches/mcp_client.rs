//! MCP client benchmark: lousho's client vs a plain rmcp client vs the
//! official TypeScript SDK's client (Node; `interop/clients/bench_client.mjs`,
//! timed inside Node) vs a raw client, all against the same servers — a bare newline-JSON / bare-HTTP
//! echo that speaks just enough MCP to connect (the floor) — over stdio and
//! Streamable HTTP, in one run; plus connect time for 1 vs 10 stdio servers
//! (lousho, plain rmcp, and a raw spawn-and-handshake floor); and big
//! messages: one echo round trip of 64 KiB, 1 MiB and 8 MiB per client.
//! Prints a table.
//!
//! Run: `cargo bench -p lousho-testkit --bench mcp_client`
//! (`MCP_BENCH_SECS` sets the throughput window, default 5;
//! `MCP_BENCH_CALLS` the sequential calls, default 2000;
//! `MCP_BENCH_ROUNDS` the interleaved rounds whose median is shown, default 3;
//! `MCP_BENCH_SERVER=fixture` points lousho's and rmcp's clients at the rmcp
//! fixture server instead, to see a real server's share;
//! `MCP_BENCH_ONLY="stdio lousho"` runs only the subjects whose
//! "transport client" starts with that text, and no big-message or connect
//! rows — for profiling one client; `MCP_BENCH_ONLY=connect` runs only the
//! connect rows; `MCP_BENCH_BALLAST_MIB=256` makes the benchmark process
//! hold that much touched heap while it connects, as a busy agent would: a
//! `fork` copies page tables in proportion to it, a `posix_spawn` does not).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use lousho::mcp::ConnectOptions;
use lousho::mcp::rmcp::ServiceExt;
use lousho::mcp::rmcp::model::CallToolRequestParams;
use lousho::mcp::rmcp::transport::{
    ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess,
};
use lousho::{McpServer, connect_mcp};
use lousho::{Tool, ToolContext};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::oneshot;

const BIN: &str = env!("CARGO_BIN_EXE_lousho-fixture-mcp");

type CallFn = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// The text every echo call sends ("hi"; the big-message rows set it large).
static PAYLOAD: std::sync::LazyLock<std::sync::RwLock<Arc<str>>> =
    std::sync::LazyLock::new(|| std::sync::RwLock::new(Arc::from("hi")));

fn payload() -> Arc<str> {
    PAYLOAD.read().unwrap().clone()
}

fn set_payload(bytes: usize) {
    *PAYLOAD.write().unwrap() = Arc::from("x".repeat(bytes));
}

/// The sizes of the big-message rows, with the round trips timed at each.
const BIG: [(usize, &str, usize); 3] = [
    (64 << 10, "64 KiB", 30),
    (1 << 20, "1 MiB", 15),
    (8 << 20, "8 MiB", 5),
];

struct Row {
    transport: &'static str,
    client: &'static str,
    p50: Duration,
    p99: Duration,
    rate: f64,
}

/// The median of each figure over the rounds of one client.
fn median_row(runs: Vec<Row>) -> Row {
    fn median<T: Copy + PartialOrd>(mut v: Vec<T>) -> T {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    }
    Row {
        transport: runs[0].transport,
        client: runs[0].client,
        p50: median(runs.iter().map(|r| r.p50).collect()),
        p99: median(runs.iter().map(|r| r.p99).collect()),
        rate: median(runs.iter().map(|r| r.rate).collect()),
    }
}

/// The times of `n` calls made one after another, sorted.
async fn sequential(call: &CallFn, n: usize) -> Vec<Duration> {
    let mut lat = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        call().await;
        lat.push(t.elapsed());
    }
    lat.sort();
    lat
}

async fn measure(
    transport: &'static str,
    client: &'static str,
    call: CallFn,
    calls: usize,
    window: Duration,
) -> Row {
    for _ in 0..100 {
        call().await;
    }
    let lat = sequential(&call, calls).await;
    let p50 = lat[lat.len() / 2];
    let p99 = lat[lat.len() * 99 / 100];
    let done = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + window;
    let workers: Vec<_> = (0..32)
        .map(|_| {
            let call = call.clone();
            let done = done.clone();
            tokio::spawn(async move {
                while Instant::now() < deadline {
                    call().await;
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let started = Instant::now();
    for w in workers {
        w.await.unwrap();
    }
    let rate = done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64();
    eprintln!("  {transport:5} {client:12} p50 {p50:?} p99 {p99:?} {rate:.0}/s");
    Row {
        transport,
        client,
        p50,
        p99,
        rate,
    }
}

/// What is measured: a client in this process (a call to time), or the
/// TypeScript SDK's client in Node, which times itself.
#[derive(Clone)]
enum Subject {
    InProcess(CallFn),
    Node(Arc<NodeClient>),
}

/// The official TypeScript SDK's client in a Node process
/// (`interop/clients/bench_client.mjs`), connected once; it measures what it
/// is asked, so no pipe hop is counted per call.
struct NodeClient {
    io: tokio::sync::Mutex<(
        tokio::process::ChildStdin,
        tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    )>,
    _child: tokio::process::Child,
}

impl NodeClient {
    /// Starts the script against `target` (`stdio <command> <args>` or
    /// `http <url>`); `None` when the TypeScript SDK is not installed.
    async fn start(target: &[&str]) -> Option<Arc<Self>> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        if !root
            .join("interop/node_modules/@modelcontextprotocol/sdk")
            .exists()
        {
            eprintln!(
                "the TypeScript SDK is not installed (interop/install.sh): no TypeScript rows"
            );
            return None;
        }
        let mut child = tokio::process::Command::new("node")
            .arg(root.join("interop/clients/bench_client.mjs"))
            .args(target)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .ok()?;
        let stdin = child.stdin.take().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = lines.next_line().await.unwrap().unwrap();
        assert!(ready.contains("ready"), "{ready}");
        Some(Arc::new(Self {
            io: tokio::sync::Mutex::new((stdin, lines)),
            _child: child,
        }))
    }

    async fn ask(&self, task: Value) -> Value {
        let mut io = self.io.lock().await;
        io.0.write_all(format!("{task}\n").as_bytes())
            .await
            .unwrap();
        let line = io.1.next_line().await.unwrap().unwrap();
        serde_json::from_str(&line).unwrap()
    }

    async fn measure(&self, calls: usize, window: Duration) -> (Duration, Duration, f64) {
        let a = self
            .ask(json!({"op": "measure", "text": &*payload(), "calls": calls, "secs": window.as_secs_f64(), "inflight": 32}))
            .await;
        let us = |k: &str| Duration::from_secs_f64(a[k].as_f64().unwrap() / 1e6);
        (us("p50_us"), us("p99_us"), a["rate"].as_f64().unwrap())
    }

    async fn trip(&self, calls: usize) -> Duration {
        let a = self
            .ask(json!({"op": "trip", "text": &*payload(), "calls": calls}))
            .await;
        Duration::from_secs_f64(a["median_us"].as_f64().unwrap() / 1e6)
    }
}

/// `measure` for either kind of subject.
async fn measure_subject(
    transport: &'static str,
    client: &'static str,
    subject: &Subject,
    calls: usize,
    window: Duration,
) -> Row {
    match subject {
        Subject::InProcess(call) => measure(transport, client, call.clone(), calls, window).await,
        Subject::Node(node) => {
            let (p50, p99, rate) = node.measure(calls, window).await;
            eprintln!("  {transport:5} {client:12} p50 {p50:?} p99 {p99:?} {rate:.0}/s");
            Row {
                transport,
                client,
                p50,
                p99,
                rate,
            }
        }
    }
}

/// The median of `n` round trips at the current payload, after a warm-up.
async fn trip_subject(subject: &Subject, n: usize) -> Duration {
    match subject {
        Subject::InProcess(call) => {
            call().await; // warm-up at this size (buffers grown)
            let lat = sequential(call, n).await;
            lat[n / 2]
        }
        Subject::Node(node) => node.trip(n).await,
    }
}

/// A raw newline-JSON client over a child's pipes, with id-routed replies.
struct RawStdio {
    tx: tokio::sync::mpsc::UnboundedSender<String>,
    pending: Arc<Mutex<HashMap<u64, oneshot::Sender<()>>>>,
    next: AtomicU64,
    _child: tokio::process::Child,
}

/// The floor server over pipes (no process group, no parent-death signal).
fn floor_child() -> tokio::process::Child {
    tokio::process::Command::new(BIN)
        .arg("floor")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

impl RawStdio {
    async fn spawn() -> Arc<Self> {
        let mut child = floor_child();
        let mut stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(line) = rx.recv().await {
                if stdin.write_all(line.as_bytes()).await.is_err() {
                    break;
                }
            }
        });
        let pending: Arc<Mutex<HashMap<u64, oneshot::Sender<()>>>> = Arc::default();
        let p2 = pending.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let v: Value = serde_json::from_str(&line).unwrap();
                let id = v["id"].as_u64().unwrap();
                if let Some(s) = p2.lock().unwrap().remove(&id) {
                    let _ = s.send(());
                }
            }
        });
        Arc::new(Self {
            tx,
            pending,
            next: AtomicU64::new(1),
            _child: child,
        })
    }

    async fn call(&self) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (s, r) = oneshot::channel();
        self.pending.lock().unwrap().insert(id, s);
        let req = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": &*payload()}}});
        self.tx.send(format!("{req}\n")).unwrap();
        r.await.unwrap();
    }
}

/// Starts the fixture binary in an HTTP mode; returns its URL and the child.
async fn http_child(mode: &str) -> (String, tokio::process::Child) {
    let mut child = tokio::process::Command::new(BIN)
        .arg(mode)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let url = BufReader::new(stdout)
        .lines()
        .next_line()
        .await
        .unwrap()
        .unwrap();
    (url, child)
}

fn lousho_call(tool: Arc<dyn Tool>) -> CallFn {
    Arc::new(move || {
        let tool = tool.clone();
        Box::pin(async move {
            let out = tool
                .call(json!({"text": &*payload()}), ToolContext::new("b"))
                .await
                .unwrap();
            assert!(!out.is_error, "{out:?}");
        })
    })
}

fn args() -> lousho::mcp::rmcp::model::JsonObject {
    json!({"text": &*payload()}).as_object().unwrap().clone()
}

/// The server mode lousho's and rmcp's clients talk to over stdio.
fn stdio_mode() -> &'static str {
    if std::env::var("MCP_BENCH_SERVER").is_ok_and(|s| s == "fixture") {
        "serve"
    } else {
        "floor"
    }
}

/// Who connects in the connect-time rows.
#[derive(Clone, Copy)]
enum Connector {
    Lousho,
    Rmcp,
    Raw,
}

/// Median time to connect to `n` stdio servers at once (spawn, handshake,
/// `tools/list`), over 7 rounds; every round's processes are stopped after.
async fn connect_time(who: Connector, n: usize) -> Duration {
    let mut times = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        match who {
            Connector::Lousho => {
                let servers: Vec<(String, McpServer)> = (0..n)
                    .map(|i| (format!("s{i}"), McpServer::stdio(BIN).arg(stdio_mode())))
                    .collect();
                let mcp = connect_mcp(servers, ConnectOptions::default())
                    .await
                    .unwrap();
                times.push(t.elapsed());
                mcp.close().await;
            }
            Connector::Rmcp => {
                let clients = futures::future::join_all((0..n).map(|_| async {
                    let cmd = tokio::process::Command::new(BIN).configure(|c| {
                        c.arg(stdio_mode()).kill_on_drop(true);
                    });
                    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
                    client.list_all_tools().await.unwrap();
                    client
                }))
                .await;
                times.push(t.elapsed());
                for c in clients {
                    let _ = c.cancel().await;
                }
            }
            Connector::Raw => {
                let children = futures::future::join_all((0..n).map(|_| raw_connect())).await;
                times.push(t.elapsed());
                for mut child in children {
                    drop(child.stdin.take());
                    let _ = child.wait().await;
                }
            }
        }
    }
    times.sort();
    times[times.len() / 2]
}

/// The floor of a connect: spawn the floor server, write `initialize`, `initialized` and `tools/list`
/// at once, read the two answers.
async fn raw_connect() -> tokio::process::Child {
    let mut child = floor_child();
    let mut stdin = child.stdin.take().unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    stdin
        .write_all(format!("{init}\n{initialized}\n{list}\n").as_bytes())
        .await
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for _ in 0..2 {
        lines.next_line().await.unwrap().unwrap();
    }
    child.stdin = Some(stdin);
    child
}

/// Connect times (1 and 10 servers) for each connector, with the ballast
/// `MCP_BENCH_BALLAST_MIB` asks for held while connecting.
async fn connect_rows() -> Vec<(&'static str, Duration, Duration)> {
    let mib: usize = std::env::var("MCP_BENCH_BALLAST_MIB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    // Touched, so its pages are mapped.
    let ballast = vec![1u8; mib << 20];
    let mut connects = Vec::new();
    for (name, who) in [
        ("lousho", Connector::Lousho),
        ("plain rmcp", Connector::Rmcp),
        ("raw (floor)", Connector::Raw),
    ] {
        connects.push((
            name,
            connect_time(who, 1).await,
            connect_time(who, 10).await,
        ));
    }
    std::hint::black_box(&ballast);
    connects
}

fn print_connects(connects: &[(&str, Duration, Duration)]) {
    let ballast = std::env::var("MCP_BENCH_BALLAST_MIB").unwrap_or_else(|_| "0".into());
    println!();
    println!(
        "Connect to stdio servers at once (spawn, handshake, tools/list; median of 7), {} cores, {ballast} MiB ballast",
        std::thread::available_parallelism().map_or(1, usize::from)
    );
    println!();
    println!("| client | 1 server ms | 10 servers ms | 10 vs 1 |");
    println!("| --- | ---: | ---: | ---: |");
    for (name, one, ten) in connects {
        println!(
            "| {name} | {:.1} | {:.1} | {:.2}× |",
            one.as_secs_f64() * 1000.0,
            ten.as_secs_f64() * 1000.0,
            ten.as_secs_f64() / one.as_secs_f64()
        );
    }
}

#[tokio::main]
async fn main() {
    if std::env::var("MCP_BENCH_ONLY").as_deref() == Ok("connect") {
        print_connects(&connect_rows().await);
        return;
    }
    let secs: u64 = std::env::var("MCP_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let calls: usize = std::env::var("MCP_BENCH_CALLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let rounds: usize = std::env::var("MCP_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3)
        .max(1);
    let window = Duration::from_secs(secs);
    // Every client is connected first and stays connected; the rounds then
    // take turns (lousho, rmcp, floor, ...) so drift on the machine hits all
    // of them alike, and each figure is the median over the rounds.
    let mut subjects: Vec<(&'static str, &'static str, Subject)> = Vec::new();

    // ---- stdio ----
    let stdio_mcp = connect_mcp(
        [("fx", McpServer::stdio(BIN).arg(stdio_mode()))],
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    let tool = stdio_mcp.tools().get("fx__echo").unwrap().clone();
    subjects.push(("stdio", "lousho", Subject::InProcess(lousho_call(tool))));

    let cmd = tokio::process::Command::new(BIN).configure(|c| {
        c.arg(stdio_mode()).kill_on_drop(true);
    });
    let rmcp_stdio = Arc::new(
        ().serve(TokioChildProcess::new(cmd).unwrap())
            .await
            .unwrap(),
    );
    let c = rmcp_stdio.clone();
    let call: CallFn = Arc::new(move || {
        let c = c.clone();
        Box::pin(async move {
            c.call_tool(CallToolRequestParams::new("echo").with_arguments(args()))
                .await
                .unwrap();
        })
    });
    subjects.push(("stdio", "plain rmcp", Subject::InProcess(call)));
    if let Some(node) = NodeClient::start(&["stdio", BIN, stdio_mode()]).await {
        subjects.push(("stdio", "TypeScript SDK", Subject::Node(node)));
    }

    let raw = RawStdio::spawn().await;
    let r = raw.clone();
    let call: CallFn = Arc::new(move || {
        let r = r.clone();
        Box::pin(async move { r.call().await })
    });
    subjects.push(("stdio", "raw (floor)", Subject::InProcess(call)));

    // ---- HTTP (servers in their own processes) ----
    let (floor_url, _floor) = http_child("floor-http").await;
    let (url, _server) = if stdio_mode() == "serve" {
        let (url, child) = http_child("http").await;
        (url, Some(child))
    } else {
        (floor_url.clone(), None)
    };
    let http_mcp = connect_mcp([("web", McpServer::http(&url))], ConnectOptions::default())
        .await
        .unwrap();
    let tool = http_mcp.tools().get("web__echo").unwrap().clone();
    subjects.push(("http", "lousho", Subject::InProcess(lousho_call(tool))));

    let rmcp_http = Arc::new(
        ().serve(StreamableHttpClientTransport::from_uri(url.as_str()))
            .await
            .unwrap(),
    );
    let c = rmcp_http.clone();
    let call: CallFn = Arc::new(move || {
        let c = c.clone();
        Box::pin(async move {
            c.call_tool(CallToolRequestParams::new("echo").with_arguments(args()))
                .await
                .unwrap();
        })
    });
    subjects.push(("http", "plain rmcp", Subject::InProcess(call)));
    if let Some(node) = NodeClient::start(&["http", &url]).await {
        subjects.push(("http", "TypeScript SDK", Subject::Node(node)));
    }

    let http = reqwest::Client::new();
    let next = Arc::new(AtomicU64::new(1));
    let call: CallFn = Arc::new(move || {
        let (http, url, next) = (http.clone(), floor_url.clone(), next.clone());
        Box::pin(async move {
            let id = next.fetch_add(1, Ordering::Relaxed);
            let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": &*payload()}}});
            let r = http
                .post(&url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(body.to_string())
                .send()
                .await
                .unwrap();
            let _ = r.bytes().await.unwrap();
        })
    });
    subjects.push(("http", "raw (floor)", Subject::InProcess(call)));

    let only = std::env::var("MCP_BENCH_ONLY").ok();
    if let Some(only) = &only {
        subjects.retain(|(t, c, _)| format!("{t} {c}").starts_with(only.as_str()));
        for (t, c, subject) in &subjects {
            eprintln!("only {t} {c}");
            measure_subject(t, c, subject, calls, window).await;
        }
        return;
    }
    let mut runs: Vec<Vec<Row>> = subjects.iter().map(|_| Vec::new()).collect();
    for round in 1..=rounds {
        eprintln!("round {round}/{rounds}");
        for ((transport, client, subject), runs) in subjects.iter().zip(&mut runs) {
            runs.push(measure_subject(transport, client, subject, calls, window).await);
        }
    }
    let rows: Vec<Row> = runs.into_iter().map(median_row).collect();

    // ---- big messages: the median echo round trip at each size ----
    // [size][subject] → per-round medians
    let mut big: Vec<Vec<Vec<Duration>>> = BIG
        .iter()
        .map(|_| subjects.iter().map(|_| Vec::new()).collect())
        .collect();
    for round in 1..=rounds {
        eprintln!("big messages, round {round}/{rounds}");
        for (b, &(bytes, _, n)) in BIG.iter().enumerate() {
            set_payload(bytes);
            for (s, (_, _, subject)) in subjects.iter().enumerate() {
                big[b][s].push(trip_subject(subject, n).await);
            }
        }
    }
    set_payload(2);
    stdio_mcp.close().await;
    http_mcp.close().await;
    let labels: Vec<(&str, &str)> = subjects.iter().map(|(t, c, _)| (*t, *c)).collect();
    drop(subjects);
    for client in [rmcp_stdio, rmcp_http] {
        if let Ok(client) = Arc::try_unwrap(client) {
            let _ = client.cancel().await;
        }
    }

    let connects = connect_rows().await;

    println!();
    println!(
        "MCP tool-call latency ({calls} sequential calls) and throughput (32 in flight, {secs} s); echo tool; median of {rounds} interleaved rounds"
    );
    println!();
    println!(
        "| transport | client | p50 µs | p99 µs | calls/s | p50 vs floor | calls/s vs floor |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: |");
    for t in ["stdio", "http"] {
        let floor = rows
            .iter()
            .find(|r| r.transport == t && r.client == "raw (floor)")
            .unwrap();
        for r in rows.iter().filter(|r| r.transport == t) {
            println!(
                "| {} | {} | {} | {} | {:.0} | {:.2}× | {:.2}× |",
                r.transport,
                r.client,
                r.p50.as_micros(),
                r.p99.as_micros(),
                r.rate,
                r.p50.as_secs_f64() / floor.p50.as_secs_f64(),
                r.rate / floor.rate,
            );
        }
    }
    println!();
    println!(
        "Big messages: one echo round trip (the text sent and returned), median of {rounds} interleaved rounds"
    );
    println!();
    println!("| size | transport | client | round trip ms | vs floor |");
    println!("| --- | --- | --- | ---: | ---: |");
    for (b, &(_, label, _)) in BIG.iter().enumerate() {
        let medians: Vec<Duration> = big[b]
            .iter()
            .map(|per_round| {
                let mut v = per_round.clone();
                v.sort();
                v[v.len() / 2]
            })
            .collect();
        for t in ["stdio", "http"] {
            let floor = labels
                .iter()
                .position(|(tr, c)| *tr == t && *c == "raw (floor)")
                .map(|i| medians[i])
                .unwrap();
            for (i, (tr, client)) in labels.iter().enumerate() {
                if *tr != t {
                    continue;
                }
                println!(
                    "| {label} | {t} | {client} | {:.2} | {:.2}× |",
                    medians[i].as_secs_f64() * 1e3,
                    medians[i].as_secs_f64() / floor.as_secs_f64()
                );
            }
        }
    }
    println!();
    for t in ["stdio", "http"] {
        let row = |client: &str| rows.iter().find(|r| r.transport == t && r.client == client);
        let lousho = row("lousho").unwrap();
        for other in ["plain rmcp", "TypeScript SDK"] {
            if let Some(o) = row(other) {
                println!(
                    "{t} lousho vs {other}: p50 {:.2}× (lower is better), calls/s {:.2}×",
                    lousho.p50.as_secs_f64() / o.p50.as_secs_f64(),
                    lousho.rate / o.rate
                );
            }
        }
    }
    print_connects(&connects);
}
