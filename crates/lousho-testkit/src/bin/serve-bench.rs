//! The serve benchmark: `tools/call` of a trivial `echo` tool served by
//! lousho (`lousho-test-server`), a plain rmcp 3.11 server, the official
//! TypeScript SDK server (Node) and a no-MCP floor, over stdio and HTTP,
//! driven by one raw client; big messages (one echo round trip of 64 KiB,
//! 1 MiB and 8 MiB of text, stdio and HTTP); served agent runs at 32 and
//! 256 in flight (`BENCH_RUNS` each, default 100,000: throughput, p50/p99,
//! RSS early and at the end); plus cold start and idle RSS.
//! Prints tables.
//!
//! ```sh
//! ./interop/install.sh
//! cargo build --release -p lousho-testkit --bins
//! target/release/serve-bench            # BENCH_ROUNDS=3 BENCH_SECS=5 to go longer
//! # BENCH_ALSO="before=/tmp/a;after=/tmp/b" adds other builds of the server
//! ```

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const IN_FLIGHT: usize = 32;

type BoxError = Box<dyn std::error::Error>;

struct Server {
    name: &'static str,
    program: PathBuf,
    args: Vec<String>,
}

fn servers() -> Result<Vec<Server>, BoxError> {
    let dir = std::env::current_exe()?
        .parent()
        .ok_or("no exe dir")?
        .to_path_buf();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let bin = |n: &str| dir.join(n);
    let mut list = vec![
        Server {
            name: "lousho",
            program: bin("lousho-test-server"),
            args: vec![],
        },
        Server {
            name: "plain rmcp 3.11",
            program: bin("rmcp-echo-server"),
            args: vec![],
        },
    ];
    // `BENCH_ALSO="lousho (before)=/path/to/lousho-test-server"`: other
    // builds of the server in the same run (a change's before and after),
    // separated by `;`. Copy every build compared to one place first: the
    // same binary run from a fresh copy measured up to 10 % slower (and 2 MiB
    // more RSS) than from cargo's target directory here.
    for also in std::env::var("BENCH_ALSO").unwrap_or_default().split(';') {
        if let Some((name, program)) = also.split_once('=') {
            list.push(Server {
                name: Box::leak(name.to_owned().into_boxed_str()),
                program: PathBuf::from(program),
                args: vec![],
            });
        }
    }
    let ts = root.join("interop/clients/echo_server.mjs");
    if root
        .join("interop/node_modules/@modelcontextprotocol/sdk")
        .exists()
    {
        list.push(Server {
            name: "TypeScript SDK 1.32.2",
            program: PathBuf::from("node"),
            args: vec![ts.to_string_lossy().into_owned()],
        });
    } else {
        eprintln!("the TypeScript SDK is not installed (interop/install.sh): skipping it");
    }
    list.push(Server {
        name: "floor (no MCP)",
        program: bin("echo-floor"),
        args: vec![],
    });
    for s in &list {
        if s.program.is_absolute() && !s.program.exists() {
            return Err(format!(
                "{} is missing: run `cargo build --release -p lousho-testkit --bins`",
                s.program.display()
            )
            .into());
        }
    }
    Ok(list)
}

fn call(id: u64) -> Vec<u8> {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"hello\"}}}}}}\n"
    )
    .into_bytes()
}

const INIT: &str = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"0\"}}}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

/// The id of a response line, found without a full parse.
fn response_id(line: &[u8]) -> Option<u64> {
    let pos = line.windows(5).position(|w| w == b"\"id\":")?;
    let digits = line[pos + 5..].iter().take_while(|b| b.is_ascii_digit());
    let mut n: u64 = 0;
    let mut any = false;
    for d in digits {
        n = n * 10 + u64::from(d - b'0');
        any = true;
    }
    any.then_some(n)
}

#[derive(Default, Clone)]
struct Stats {
    calls_per_s: f64,
    p50: f64,
    p99: f64,
    seq_p50: f64,
    seq_p99: f64,
    errors: usize,
}

fn percentile(v: &mut [Duration], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_unstable();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i].as_secs_f64() * 1e6
}

struct StdioPeer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
}

impl StdioPeer {
    async fn spawn(s: &Server) -> Result<Self, BoxError> {
        let mut child = Command::new(&s.program)
            .args(&s.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        Ok(Self {
            child,
            stdin,
            stdout,
            line: Vec::new(),
        })
    }

    async fn read_line(&mut self) -> Result<&[u8], BoxError> {
        self.line.clear();
        if self.stdout.read_until(b'\n', &mut self.line).await? == 0 {
            return Err("the server closed stdout".into());
        }
        Ok(&self.line)
    }

    async fn init(&mut self) -> Result<(), BoxError> {
        self.stdin.write_all(INIT.as_bytes()).await?;
        self.read_line().await?;
        Ok(())
    }
}

async fn bench_stdio(s: &Server, secs: f64) -> Result<Stats, BoxError> {
    let mut peer = StdioPeer::spawn(s).await?;
    peer.init().await?;
    let mut stats = Stats::default();
    // Sequential latency.
    let mut seq = Vec::new();
    let end = Instant::now() + Duration::from_secs_f64(secs / 4.0);
    let mut id = 1u64;
    while Instant::now() < end {
        let t = Instant::now();
        peer.stdin.write_all(&call(id)).await?;
        let line = peer.read_line().await?;
        if !line.windows(7).any(|w| w == b"\"hello\"") {
            stats.errors += 1;
        }
        seq.push(t.elapsed());
        id += 1;
    }
    stats.seq_p50 = percentile(&mut seq, 0.5);
    stats.seq_p99 = percentile(&mut seq, 0.99);
    // Throughput with IN_FLIGHT outstanding.
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut run = pipelined(&mut peer, IN_FLIGHT, call, says_hello, Stop::At(end)).await?;
    stats.errors += run.errors;
    stats.calls_per_s = run.done as f64 / run.elapsed;
    stats.p50 = percentile(&mut run.lat, 0.5);
    stats.p99 = percentile(&mut run.lat, 0.99);
    drop(peer.stdin);
    let _ = tokio::time::timeout(Duration::from_secs(3), peer.child.wait()).await;
    Ok(stats)
}

fn says_hello(line: &[u8]) -> bool {
    line.windows(7).any(|w| w == b"\"hello\"")
}

/// When a pipelined run stops sending.
enum Stop {
    At(Instant),
    After(usize),
}

/// What a pipelined run measured.
struct Pipelined {
    lat: Vec<Duration>,
    done: usize,
    errors: usize,
    elapsed: f64,
    /// The server's RSS (MiB) after a tenth of the replies, and at the end.
    rss_early: f64,
    rss_end: f64,
}

/// Keeps `in_flight` requests (`request(id)`) outstanding on `peer` until
/// `stop`; a reply `good` does not accept is an error.
async fn pipelined(
    peer: &mut StdioPeer,
    in_flight: usize,
    request: fn(u64) -> Vec<u8>,
    good: fn(&[u8]) -> bool,
    stop: Stop,
) -> Result<Pipelined, BoxError> {
    let base = 1_000_000u64;
    let pid = peer.child.id().ok_or("no pid")?;
    let mut sent_at: Vec<Instant> = Vec::with_capacity(1 << 20);
    let mut run = Pipelined {
        lat: Vec::with_capacity(1 << 20),
        done: 0,
        errors: 0,
        elapsed: 0.0,
        rss_early: 0.0,
        rss_end: 0.0,
    };
    let more = |sent: usize| match stop {
        Stop::At(end) => Instant::now() < end,
        Stop::After(total) => sent < total,
    };
    let early = match stop {
        Stop::After(total) => total / 10,
        Stop::At(_) => usize::MAX,
    };
    let start = Instant::now();
    let mut outstanding = 0;
    while outstanding < in_flight && more(sent_at.len()) {
        peer.stdin
            .write_all(&request(base + sent_at.len() as u64))
            .await?;
        sent_at.push(Instant::now());
        outstanding += 1;
    }
    while outstanding > 0 {
        let line = peer.read_line().await?;
        let now = Instant::now();
        match response_id(line) {
            Some(rid) if rid >= base => {
                run.lat.push(now - sent_at[(rid - base) as usize]);
                if !good(line) {
                    run.errors += 1;
                }
            }
            _ => continue,
        }
        outstanding -= 1;
        run.done += 1;
        if run.done == early {
            run.rss_early = rss_mib(pid)?;
        }
        if more(sent_at.len()) {
            peer.stdin
                .write_all(&request(base + sent_at.len() as u64))
                .await?;
            sent_at.push(Instant::now());
            outstanding += 1;
        }
    }
    run.elapsed = start.elapsed().as_secs_f64();
    run.rss_end = rss_mib(pid)?;
    Ok(run)
}

/// A process's resident memory, MiB.
fn rss_mib(pid: u32) -> Result<f64, BoxError> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or("no VmRSS")?;
    Ok(kb / 1024.0)
}

/// A `tools/call` of the fixture agent (`test-agent`: a scripted model that
/// calls each of its tools once, then answers): one served agent run.
fn agent_run(id: u64) -> Vec<u8> {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"test-agent\",\"arguments\":{{\"message\":\"order 42?\"}}}}}}\n"
    )
    .into_bytes()
}

fn run_succeeded(line: &[u8]) -> bool {
    line.windows(8).any(|w| w == b"\"result\"")
        && !line.windows(15).any(|w| w == b"\"isError\":true")
}

/// Served agent runs over stdio (lousho only: the other servers have no
/// agent): `total` runs with `in_flight` outstanding.
async fn bench_runs(s: &Server, in_flight: usize, total: usize) -> Result<Pipelined, BoxError> {
    let mut peer = StdioPeer::spawn(s).await?;
    peer.init().await?;
    let run = pipelined(
        &mut peer,
        in_flight,
        agent_run,
        run_succeeded,
        Stop::After(total),
    )
    .await?;
    drop(peer.stdin);
    let _ = tokio::time::timeout(Duration::from_secs(3), peer.child.wait()).await;
    Ok(run)
}

/// Process start to the first `tools/list` answered, over stdio.
async fn cold_start(s: &Server) -> Result<f64, BoxError> {
    let t = Instant::now();
    let mut peer = StdioPeer::spawn(s).await?;
    peer.stdin.write_all(INIT.as_bytes()).await?;
    peer.stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n")
        .await?;
    loop {
        let line = peer.read_line().await?;
        if response_id(line) == Some(1) {
            break;
        }
    }
    let ms = t.elapsed().as_secs_f64() * 1e3;
    drop(peer.stdin);
    let _ = tokio::time::timeout(Duration::from_secs(3), peer.child.wait()).await;
    Ok(ms)
}

/// Resident memory after initialize and one `tools/list`, idle.
async fn idle_rss(s: &Server) -> Result<f64, BoxError> {
    let mut peer = StdioPeer::spawn(s).await?;
    peer.init().await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let rss = rss_mib(peer.child.id().ok_or("no pid")?)?;
    drop(peer.stdin);
    let _ = tokio::time::timeout(Duration::from_secs(3), peer.child.wait()).await;
    Ok(rss)
}

struct HttpPeer {
    child: Child,
    url: String,
}

impl HttpPeer {
    async fn spawn(s: &Server) -> Result<Self, BoxError> {
        let mut args = s.args.clone();
        args.push("--http".into());
        if s.name == "lousho" {
            args.extend(["--port".into(), "0".into()]);
        }
        let (child, url) = lousho_testkit::bench::spawn_listening(&s.program, &args)
            .await
            .map_err(|e| e as BoxError)?;
        Ok(Self { child, url })
    }
}

async fn bench_http(s: &Server, secs: f64) -> Result<Stats, BoxError> {
    let mut peer = HttpPeer::spawn(s).await?;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(IN_FLIGHT * 2)
        .build()?;
    let post = |id: u64| {
        client
            .post(&peer.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .body(call(id))
            .send()
    };
    let mut stats = Stats::default();
    let mut seq = Vec::new();
    let end = Instant::now() + Duration::from_secs_f64(secs / 4.0);
    let mut id = 1;
    while Instant::now() < end {
        let t = Instant::now();
        let body = post(id).await?.bytes().await?;
        if !body.windows(7).any(|w| w == b"\"hello\"") {
            stats.errors += 1;
        }
        seq.push(t.elapsed());
        id += 1;
    }
    stats.seq_p50 = percentile(&mut seq, 0.5);
    stats.seq_p99 = percentile(&mut seq, 0.99);
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(secs);
    let workers = (0..IN_FLIGHT).map(|w| {
        let post = &post;
        async move {
            let mut lat = Vec::new();
            let mut errors = 0;
            let mut id = 1_000_000 * (w as u64 + 1);
            while Instant::now() < end {
                let t = Instant::now();
                match post(id).await {
                    Ok(r) => match r.bytes().await {
                        Ok(b) if b.windows(7).any(|w| w == b"\"hello\"") => {}
                        _ => errors += 1,
                    },
                    Err(_) => errors += 1,
                }
                lat.push(t.elapsed());
                id += 1;
            }
            (lat, errors)
        }
    });
    let results = futures::future::join_all(workers).await;
    let elapsed = start.elapsed().as_secs_f64();
    let mut lat = Vec::new();
    for (l, e) in results {
        lat.extend(l);
        stats.errors += e;
    }
    stats.calls_per_s = lat.len() as f64 / elapsed;
    stats.p50 = percentile(&mut lat, 0.5);
    stats.p99 = percentile(&mut lat, 0.99);
    let _ = peer.child.kill().await;
    Ok(stats)
}

/// The sizes of the big-message rows, with the round trips timed at each.
const BIG: [(usize, &str, usize); 3] = [
    (64 << 10, "64 KiB", 20),
    (1 << 20, "1 MiB", 10),
    (8 << 20, "8 MiB", 4),
];

fn big_call(id: u64, text: &str) -> Vec<u8> {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"{text}\"}}}}}}\n"
    )
    .into_bytes()
}

/// The median of `n` timed echo round trips of `bytes` (ms), after one
/// untimed warm-up (buffers grown); `one(id)` makes a round trip and returns
/// the reply's length. `None` when a reply is not a full echo (an error, a
/// refused body, a closed connection).
async fn median_round_trip<F, Fut>(n: usize, bytes: usize, mut one: F) -> Option<f64>
where
    F: FnMut(u64) -> Fut,
    Fut: std::future::Future<Output = Option<usize>>,
{
    let mut lat = Vec::new();
    for i in 0..=n {
        let t = Instant::now();
        if one(i as u64 + 1).await? <= bytes {
            return None;
        }
        if i > 0 {
            lat.push(t.elapsed());
        }
    }
    Some(percentile(&mut lat, 0.5) / 1e3)
}

/// The median echo round trip (ms) at each [`BIG`] size over stdio.
async fn big_stdio(s: &Server) -> Result<Vec<Option<f64>>, BoxError> {
    let mut peer = StdioPeer::spawn(s).await?;
    peer.init().await?;
    let shared = tokio::sync::Mutex::new(peer);
    let mut medians = Vec::new();
    for (bytes, _, n) in BIG {
        let text = "x".repeat(bytes);
        medians.push(
            median_round_trip(n, bytes, |id| {
                let (line, shared) = (big_call(id, &text), &shared);
                async move {
                    let mut peer = shared.lock().await;
                    peer.stdin.write_all(&line).await.ok()?;
                    peer.read_line().await.ok().map(<[u8]>::len)
                }
            })
            .await,
        );
    }
    let mut peer = shared.into_inner();
    drop(peer.stdin);
    let _ = tokio::time::timeout(Duration::from_secs(3), peer.child.wait()).await;
    Ok(medians)
}

/// The same over stateless HTTP (one POST per round trip).
async fn big_http(s: &Server) -> Result<Vec<Option<f64>>, BoxError> {
    let mut peer = HttpPeer::spawn(s).await?;
    let client = reqwest::Client::new();
    let mut medians = Vec::new();
    for (bytes, _, n) in BIG {
        let text = "x".repeat(bytes);
        medians.push(
            median_round_trip(n, bytes, |id| {
                let post = client
                    .post(&peer.url)
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", "2025-11-25")
                    .body(big_call(id, &text))
                    .send();
                async move { post.await.ok()?.bytes().await.ok().map(|b| b.len()) }
            })
            .await,
        );
    }
    let _ = peer.child.kill().await;
    Ok(medians)
}

/// The big-message table: per size and transport, each server's median
/// round trip over the rounds and its ratio to the floor's.
fn print_big(names: &[&str], stdio: &[Vec<Vec<Option<f64>>>], http: &[Vec<Vec<Option<f64>>>]) {
    println!("\n### big messages: one `echo` round trip of the text, median over rounds\n");
    println!("| size | transport | server | round trip ms | vs floor |");
    println!("| --- | --- | --- | ---: | ---: |");
    let floor = names.len() - 1;
    for (b, (_, label, _)) in BIG.iter().enumerate() {
        for (transport, runs) in [("stdio", stdio), ("http", http)] {
            // runs[server][round][size]
            let at = |server: usize| -> Option<f64> {
                let v: Option<Vec<f64>> = runs[server].iter().map(|round| round[b]).collect();
                v.map(median)
            };
            let floor_ms = at(floor);
            for (i, n) in names.iter().enumerate() {
                match (at(i), floor_ms) {
                    (Some(ms), Some(f)) => {
                        println!("| {label} | {transport} | {n} | {ms:.2} | {:.2}× |", ms / f);
                    }
                    (Some(ms), None) => println!("| {label} | {transport} | {n} | {ms:.2} | — |"),
                    (None, _) => println!("| {label} | {transport} | {n} | refused | — |"),
                }
            }
        }
    }
    println!(
        "\nrefused: no full echo came back (over HTTP, lousho and rmcp answer a body over their 4 MiB default cap with 413; lousho's `HttpOptions::max_body_bytes` raises it)"
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn print_table(transport: &str, names: &[&str], rows: &[Stats]) {
    println!("\n### {transport}: tools/call `echo`, {IN_FLIGHT} in flight (best of rounds)\n");
    println!(
        "| server | calls/s | vs lousho | p50 µs | p99 µs | seq p50 µs | seq p99 µs | errors |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let lousho = rows[0].calls_per_s;
    for (n, r) in names.iter().zip(rows) {
        println!(
            "| {n} | {:.0} | {:.2}× | {:.0} | {:.0} | {:.0} | {:.0} | {} |",
            r.calls_per_s,
            r.calls_per_s / lousho,
            r.p50,
            r.p99,
            r.seq_p50,
            r.seq_p99,
            r.errors
        );
    }
}

fn main() -> Result<(), BoxError> {
    let rounds: usize = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let secs: f64 = std::env::var("BENCH_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3.0);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let list = servers()?;
        let names: Vec<&str> = list.iter().map(|s| s.name).collect();
        let mut stdio = vec![Stats::default(); list.len()];
        let mut http = vec![Stats::default(); list.len()];
        for round in 0..rounds {
            eprintln!("round {}/{rounds}", round + 1);
            for (i, s) in list.iter().enumerate() {
                let r = bench_stdio(s, secs).await?;
                eprintln!("  stdio {:<22} {:>9.0} calls/s", s.name, r.calls_per_s);
                if r.calls_per_s > stdio[i].calls_per_s {
                    stdio[i] = r;
                }
                let r = bench_http(s, secs).await?;
                eprintln!("  http  {:<22} {:>9.0} calls/s", s.name, r.calls_per_s);
                if r.calls_per_s > http[i].calls_per_s {
                    http[i] = r;
                }
            }
        }
        // Big messages, the servers taking turns round by round.
        let mut big_s: Vec<Vec<Vec<Option<f64>>>> = vec![Vec::new(); list.len()];
        let mut big_h: Vec<Vec<Vec<Option<f64>>>> = vec![Vec::new(); list.len()];
        for round in 0..rounds {
            eprintln!("big messages, round {}/{rounds}", round + 1);
            for (i, s) in list.iter().enumerate() {
                big_s[i].push(big_stdio(s).await?);
                big_h[i].push(big_http(s).await?);
            }
        }
        println!("# serve benchmark ({} cores, {rounds} rounds × {secs} s)", std::thread::available_parallelism().map_or(0, |n| n.get()));
        print_table("stdio", &names, &stdio);
        print_table("Streamable HTTP (stateless, JSON)", &names, &http);
        print_big(&names, &big_s, &big_h);
        let runs_total: usize = std::env::var("BENCH_RUNS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(100_000);
        println!("\n### served agent runs (`test-agent`, stdio, {runs_total} runs each)\n");
        println!("| server | in flight | runs/s | p50 ms | p99 ms | RSS after 10 % MiB | RSS at the end MiB | errors |");
        println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        for s in list.iter().filter(|s| s.name.starts_with("lousho")) {
            for in_flight in [32, 256] {
                let mut r = bench_runs(s, in_flight, runs_total).await?;
                println!(
                    "| {} | {in_flight} | {:.0} | {:.2} | {:.2} | {:.1} | {:.1} | {} |",
                    s.name,
                    r.done as f64 / r.elapsed,
                    percentile(&mut r.lat, 0.5) / 1e3,
                    percentile(&mut r.lat, 0.99) / 1e3,
                    r.rss_early,
                    r.rss_end,
                    r.errors
                );
            }
        }
        println!("\n### cold start (spawn → first tools/list answered, stdio, median of 5) and idle RSS\n");
        println!("| server | cold start ms | idle RSS MiB |");
        println!("| --- | ---: | ---: |");
        for s in &list {
            let mut starts = Vec::new();
            for _ in 0..5 {
                starts.push(cold_start(s).await?);
            }
            let rss = idle_rss(s).await?;
            println!("| {} | {:.1} | {:.1} |", s.name, median(starts), rss);
        }
        Ok::<(), BoxError>(())
    })?;
    Ok(())
}
