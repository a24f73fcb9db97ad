//! The HTTP load benchmark (issue 38): `lousho-test-server --http` builds
//! side by side, one run. Prints
//! - calls/s, p99 and what went wrong (503s, connections reset or closed
//!   without an answer) at 32, 256 and 1000 keep-alive connections, each at
//!   full speed for `BENCH_SECS` (default 10), against the `echo` tool and the
//!   agent tool;
//! - 1000 concurrent calls, one fresh connection each: 200 / 503 / no answer;
//! - one normal call while 200 connections trickle their bodies: its latency;
//! - SIGINT with 100 kept-alive and 100 silent connections open: time to exit.
//!
//! ```sh
//! cargo build --release -p lousho-testkit --bin lousho-test-server --bin load-bench
//! LOAD_BENCH_SERVERS="before=/tmp/before/lousho-test-server;after=target/release/lousho-test-server" \
//!   target/release/load-bench
//! ```
//!
//! `LOAD_BENCH_CELLS="echo:1000 agent:256"` runs only those keep-alive cells
//! (and no acceptance rows, unless `acceptance` is listed); the load average
//! is printed before and after, as the machine may be shared.

use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::process::Child;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const ECHO: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}"#;
const AGENT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test-agent","arguments":{"message":"order 42?"}}}"#;

struct Server {
    name: String,
    program: PathBuf,
}

fn servers() -> Result<Vec<Server>, BoxError> {
    if let Ok(list) = std::env::var("LOAD_BENCH_SERVERS") {
        return Ok(list
            .split(';')
            .filter_map(|e| e.split_once('='))
            .map(|(n, p)| Server {
                name: n.to_owned(),
                program: PathBuf::from(p),
            })
            .collect());
    }
    let dir = std::env::current_exe()?
        .parent()
        .ok_or("no exe dir")?
        .to_path_buf();
    Ok(vec![Server {
        name: "lousho".into(),
        program: dir.join("lousho-test-server"),
    }])
}

/// A running `lousho-test-server --http`.
struct Peer {
    child: Child,
    addr: String,
}

impl Peer {
    async fn spawn(s: &Server) -> Result<Self, BoxError> {
        let args = ["--http", "--port", "0"].map(String::from);
        let (child, url) = lousho_testkit::bench::spawn_listening(&s.program, &args).await?;
        let addr = url
            .strip_prefix("http://")
            .and_then(|u| u.split('/').next())
            .ok_or("no address")?
            .to_owned();
        Ok(Self { child, addr })
    }
}

fn request(addr: &str, body: &str, close: bool) -> Vec<u8> {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n{}\r\n{body}",
        body.len(),
        if close { "Connection: close\r\n" } else { "" }
    )
    .into_bytes()
}

/// What became of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Ok,
    /// 503 (with `Retry-After` or not).
    Busy,
    /// Another status, or a 200 without a successful result.
    Failed,
    /// Reset, or closed with no answer.
    NoAnswer,
}

/// Reads one response; `Ok((outcome, keep))`, `keep` false when the server
/// closes the connection after it.
async fn read_response(
    s: &mut TcpStream,
    buf: &mut Vec<u8>,
) -> Result<(Outcome, bool), std::io::Error> {
    buf.clear();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let status: u16 = head.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let keep = !head.contains("connection: close");
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok());
    match length {
        Some(len) => {
            while buf.len() < head_end + len {
                let n = s.read(&mut chunk).await?;
                if n == 0 {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
                buf.extend_from_slice(&chunk[..n]);
            }
        }
        None => {
            // Chunked or until close: read until the terminating chunk or EOF.
            while !buf.ends_with(b"0\r\n\r\n") {
                let n = s.read(&mut chunk).await?;
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
        }
    }
    let body = &buf[head_end..];
    let outcome = match status {
        200 if body.windows(8).any(|w| w == b"\"result\"")
            && !body.windows(15).any(|w| w == b"\"isError\":true") =>
        {
            Outcome::Ok
        }
        503 => Outcome::Busy,
        _ => Outcome::Failed,
    };
    Ok((outcome, keep && length.is_some()))
}

#[derive(Default, Clone)]
struct Cell {
    calls_per_s: f64,
    p50_ms: f64,
    p99_ms: f64,
    busy: usize,
    failed: usize,
    no_answer: usize,
}

/// `conns` keep-alive connections calling `body` as fast as they can.
async fn keep_alive(addr: &str, body: &str, conns: usize, secs: f64) -> Cell {
    let req = request(addr, body, false);
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(secs);
    let workers = (0..conns).map(|_| {
        let req = req.clone();
        let addr = addr.to_owned();
        tokio::spawn(async move {
            let mut lat = Vec::new();
            let (mut busy, mut failed, mut no_answer) = (0, 0, 0);
            let mut conn: Option<TcpStream> = None;
            let mut buf = Vec::new();
            while Instant::now() < end {
                let t = Instant::now();
                let mut s = match conn.take() {
                    Some(s) => s,
                    None => match TcpStream::connect(&addr).await {
                        Ok(s) => s,
                        Err(_) => {
                            no_answer += 1;
                            continue;
                        }
                    },
                };
                let _ = s.set_nodelay(true);
                if s.write_all(&req).await.is_err() {
                    no_answer += 1;
                    continue;
                }
                match read_response(&mut s, &mut buf).await {
                    Ok((outcome, keep)) => {
                        match outcome {
                            Outcome::Ok => lat.push(t.elapsed()),
                            Outcome::Busy => {
                                busy += 1;
                                // As a client honouring Retry-After would (shortened).
                                tokio::time::sleep(Duration::from_millis(50)).await;
                            }
                            Outcome::Failed | Outcome::NoAnswer => failed += 1,
                        }
                        if keep {
                            conn = Some(s);
                        }
                    }
                    Err(_) => no_answer += 1,
                }
            }
            (lat, busy, failed, no_answer)
        })
    });
    let results = futures::future::join_all(workers).await;
    let elapsed = start.elapsed().as_secs_f64();
    let mut cell = Cell::default();
    let mut lat = Vec::new();
    for r in results.into_iter().flatten() {
        lat.extend(r.0);
        cell.busy += r.1;
        cell.failed += r.2;
        cell.no_answer += r.3;
    }
    cell.calls_per_s = lat.len() as f64 / elapsed;
    lat.sort_unstable();
    let quantile = |q: f64| {
        lat.get(((lat.len() as f64 - 1.0) * q).round() as usize)
            .map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
    };
    cell.p50_ms = quantile(0.5);
    cell.p99_ms = quantile(0.99);
    cell
}

/// One call on a fresh connection (`Connection: close`).
async fn one_call(addr: &str, body: &str) -> Outcome {
    let Ok(mut s) = TcpStream::connect(addr).await else {
        return Outcome::NoAnswer;
    };
    if s.write_all(&request(addr, body, true)).await.is_err() {
        return Outcome::NoAnswer;
    }
    let mut buf = Vec::new();
    match read_response(&mut s, &mut buf).await {
        Ok((o, _)) => o,
        Err(_) => Outcome::NoAnswer,
    }
}

/// 1000 concurrent calls, a fresh connection each: (200, 503, no answer, other).
async fn burst(addr: &str) -> [usize; 4] {
    let calls = (0..1000).map(|_| {
        let addr = addr.to_owned();
        tokio::spawn(async move { one_call(&addr, ECHO).await })
    });
    let mut counts = [0; 4];
    for o in futures::future::join_all(calls).await.into_iter().flatten() {
        counts[match o {
            Outcome::Ok => 0,
            Outcome::Busy => 1,
            Outcome::NoAnswer => 2,
            Outcome::Failed => 3,
        }] += 1;
    }
    counts
}

/// The latency of one normal call while 200 connections trickle a body.
async fn slow_bodies(addr: &str) -> Result<(f64, Outcome), BoxError> {
    let mut held = Vec::new();
    for _ in 0..200 {
        let mut s = TcpStream::connect(addr).await?;
        s.write_all(
            format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\"").as_bytes(),
        )
        .await?;
        held.push(s);
    }
    let t = Instant::now();
    let outcome = tokio::time::timeout(Duration::from_secs(60), one_call(addr, ECHO))
        .await
        .unwrap_or(Outcome::NoAnswer);
    Ok((t.elapsed().as_secs_f64() * 1e3, outcome))
}

/// Seconds from SIGINT to exit with 100 kept-alive and 100 silent connections.
async fn shutdown(mut peer: Peer) -> Result<f64, BoxError> {
    let mut held = Vec::new();
    let mut buf = Vec::new();
    for i in 0..200 {
        let mut s = TcpStream::connect(&peer.addr).await?;
        if i % 2 == 0 {
            s.write_all(&request(&peer.addr, ECHO, false)).await?;
            read_response(&mut s, &mut buf).await?;
        }
        held.push(s);
    }
    let pid = peer.child.id().ok_or("no pid")?;
    let t = Instant::now();
    std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()?;
    peer.child.wait().await?;
    Ok(t.elapsed().as_secs_f64())
}

/// The 1, 5 and 15 minute load averages (`/proc/loadavg`), or `?`.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(
        |_| "?".to_owned(),
        |l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
    )
}

fn main() -> Result<(), BoxError> {
    let secs: f64 = std::env::var("BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10.0);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let list = servers()?;
        let cells = std::env::var("LOAD_BENCH_CELLS").ok();
        let wanted = |cell: &str| {
            cells
                .as_deref()
                .is_none_or(|c| c.split_whitespace().any(|w| w == cell))
        };
        println!("load average before: {}", load_average());
        println!("### Keep-alive connections at full speed, {secs} s each\n");
        println!("| tool | connections | server | calls/s | p50 ms | p99 ms | 503 | failed | reset / no answer |");
        println!("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
        for (tool, body) in [("echo", ECHO), ("agent", AGENT)] {
            for conns in [32, 256, 1000] {
                if !wanted(&format!("{tool}:{conns}")) {
                    continue;
                }
                for s in &list {
                    let peer = Peer::spawn(s).await?;
                    let c = keep_alive(&peer.addr, body, conns, secs).await;
                    drop(peer);
                    println!(
                        "| {tool} | {conns} | {} | {:.0} | {:.1} | {:.1} | {} | {} | {} |",
                        s.name, c.calls_per_s, c.p50_ms, c.p99_ms, c.busy, c.failed, c.no_answer
                    );
                }
            }
        }
        if !wanted("acceptance") {
            println!("\nload average after: {}", load_average());
            return Ok(());
        }
        println!("\n### Acceptance\n");
        println!("| server | 1000 concurrent: 200 / 503 / no answer / other | call during 200 slow bodies | SIGINT with 200 open connections |");
        println!("| --- | --- | --- | --- |");
        for s in &list {
            let peer = Peer::spawn(s).await?;
            let b = burst(&peer.addr).await;
            drop(peer);
            let peer = Peer::spawn(s).await?;
            let (ms, outcome) = slow_bodies(&peer.addr).await?;
            drop(peer);
            let peer = Peer::spawn(s).await?;
            let exit = shutdown(peer).await?;
            println!(
                "| {} | {} / {} / {} / {} | {ms:.1} ms ({outcome:?}) | {exit:.3} s |",
                s.name, b[0], b[1], b[2], b[3]
            );
        }
        println!("\nload average after: {}", load_average());
        Ok(())
    })
}
