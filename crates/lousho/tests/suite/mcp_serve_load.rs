//! The HTTP server under load: every request gets an HTTP answer (`200`, or
//! `503` with `Retry-After` when the server is full, or `408` when the
//! request did not arrive in time) and none is reset.

use lousho::mcp::HttpOptions;
use lousho::serve_mcp;
use lousho_testkit::serve::{CancelProbe, fixture_options};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const SLOW: &str = r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"test-agent","arguments":{"message":"slow"}}}"#;
const ECHO: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#;

/// What became of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    /// An HTTP answer: its status, and whether it had `Retry-After`.
    Answered(u16, bool),
    /// The connection was reset, or closed with no answer.
    NoAnswer(String),
}

/// POSTs `body` on a fresh connection (`Connection: close`).
async fn post(addr: SocketAddr, body: &str) -> Outcome {
    let mut s = match TcpStream::connect(addr).await {
        Ok(s) => s,
        Err(e) => return Outcome::NoAnswer(format!("connect: {e}")),
    };
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    // A server that answered early (`408`) may have closed before the
    // request was written: what it sent is still read.
    let written = s.write_all(req.as_bytes()).await;
    let mut out = Vec::new();
    let read = s.read_to_end(&mut out).await;
    let text = String::from_utf8_lossy(&out);
    let Some(status) = text
        .strip_prefix("HTTP/1.1 ")
        .and_then(|t| t.get(..3))
        .and_then(|t| t.parse().ok())
    else {
        return Outcome::NoAnswer(format!(
            "no status line: {text:?} (write: {written:?}, read: {read:?})"
        ));
    };
    let retry_after = text
        .lines()
        .any(|l| l.to_ascii_lowercase().starts_with("retry-after:"));
    Outcome::Answered(status, retry_after)
}

/// `n` concurrent echo calls, each on its own connection.
async fn burst(addr: SocketAddr, n: usize) -> Vec<Outcome> {
    let calls = (0..n).map(|_| tokio::spawn(post(addr, ECHO)));
    let all = futures::future::join_all(calls);
    tokio::time::timeout(Duration::from_secs(60), all)
        .await
        .expect("every request is answered within a minute")
        .into_iter()
        .map(|r| r.unwrap())
        .collect()
}

/// Lets this test process hold a few thousand sockets (both ends of each
/// connection live here).
fn raise_fd_limit() {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let lim = getrlimit(Resource::Nofile);
    let want = lim.maximum.map_or(8192, |m| m.min(8192));
    if lim.current.is_some_and(|c| c < want) {
        let _ = setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(want),
                maximum: lim.maximum,
            },
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_connection_cap_every_request_gets_an_answer_and_none_is_reset() {
    raise_fd_limit();
    let probe = CancelProbe::default();
    let server =
        serve_mcp(fixture_options(&probe).http(HttpOptions::new().port(0).max_connections(16)))
            .await
            .unwrap();
    let outcomes = burst(server.local_addr().unwrap(), 1000).await;
    server.close().await.unwrap();
    let no_answer: Vec<_> = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::NoAnswer(_)))
        .collect();
    assert!(
        no_answer.is_empty(),
        "{} without an answer: {:?}",
        no_answer.len(),
        &no_answer[..no_answer.len().min(5)]
    );
    // 200; 503 with Retry-After past the cap; 408 if the request took too
    // long to arrive (on a loaded machine a client may be slow to send).
    for o in &outcomes {
        assert!(
            matches!(
                o,
                Outcome::Answered(200 | 408, _) | Outcome::Answered(503, true)
            ),
            "{o:?}"
        );
    }
    assert!(
        outcomes.contains(&Outcome::Answered(200, false)),
        "some are served"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_defaults_a_thousand_concurrent_requests_are_served() {
    raise_fd_limit();
    let probe = CancelProbe::default();
    let server = serve_mcp(fixture_options(&probe).http(HttpOptions::new().port(0)))
        .await
        .unwrap();
    let outcomes = burst(server.local_addr().unwrap(), 1000).await;
    server.close().await.unwrap();
    let ok = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Answered(200, _)))
        .count();
    let others: Vec<_> = outcomes
        .iter()
        .filter(|o| !matches!(o, Outcome::Answered(200, _)))
        .collect();
    assert!(
        ok >= 990,
        "{ok} of 1000 answered 200; the others: {:?}",
        &others[..others.len().min(5)]
    );
    assert!(
        others
            .iter()
            .all(|o| matches!(o, Outcome::Answered(503, true))),
        "{others:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_every_slot_has_a_call_in_flight_new_connections_get_503_with_retry_after() {
    raise_fd_limit();
    let probe = CancelProbe::default();
    let server =
        serve_mcp(fixture_options(&probe).http(HttpOptions::new().port(0).max_connections(16)))
            .await
            .unwrap();
    let addr = server.local_addr().unwrap();
    // 16 agent runs that wait (30 s, or until the server closes) take every
    // slot; they connect first, so they are accepted first.
    let mut slow = Vec::new();
    for _ in 0..16 {
        let mut s = TcpStream::connect(addr).await.unwrap();
        let req = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{SLOW}",
            SLOW.len()
        );
        s.write_all(req.as_bytes()).await.unwrap();
        slow.push(s);
    }
    let outcomes = burst(addr, 300).await;
    server.close().await.unwrap();
    drop(slow);
    let busy = outcomes
        .iter()
        .filter(|o| **o == Outcome::Answered(503, true))
        .count();
    let others: Vec<_> = outcomes
        .iter()
        .filter(|o| !matches!(o, Outcome::Answered(503, true) | Outcome::Answered(200, _)))
        .collect();
    assert!(others.is_empty(), "{others:?}");
    assert!(busy > 0, "with every slot busy, the burst is answered 503");
}

/// Opens a connection that sends headers announcing a 1000-byte body and
/// then only its first bytes.
async fn slow_body(addr: SocketAddr) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\""
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_bodies_hold_no_slot_a_ready_call_needs() {
    raise_fd_limit();
    let probe = CancelProbe::default();
    for max_connections in [None, Some(32)] {
        let mut http = HttpOptions::new().port(0);
        if let Some(n) = max_connections {
            http = http.max_connections(n);
        }
        let server = serve_mcp(fixture_options(&probe).http(http)).await.unwrap();
        let addr = server.local_addr().unwrap();
        let mut held = Vec::new();
        for _ in 0..200 {
            held.push(slow_body(addr).await);
        }
        // Past a cap of 32, stalled ones make room; under the default cap,
        // they hold connections but no call slot.
        let answered = tokio::time::timeout(Duration::from_secs(15), post(addr, ECHO))
            .await
            .expect("a normal call is answered while 200 slow bodies are open");
        assert_eq!(
            answered,
            Outcome::Answered(200, false),
            "cap {max_connections:?}"
        );
        drop(held);
        server.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_under_the_minimum_rate_gets_408_before_the_body_timeout() {
    let probe = CancelProbe::default();
    let server = serve_mcp(
        fixture_options(&probe).http(
            HttpOptions::new()
                .port(0)
                .body_timeout(Duration::from_secs(120))
                .min_body_rate(1000),
        ),
    )
    .await
    .unwrap();
    let mut s = slow_body(server.local_addr().unwrap()).await;
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), s.read_to_end(&mut out))
        .await
        .expect("the slow body is cut off long before the body timeout")
        .unwrap();
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("too slowly"), "{text}");
    server.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_runs_past_their_limit_get_503_and_other_calls_still_run() {
    let probe = CancelProbe::default();
    let server = serve_mcp(
        fixture_options(&probe).http(
            HttpOptions::new()
                .port(0)
                .max_agent_runs(2)
                .client_share_percent(100),
        ),
    )
    .await
    .unwrap();
    let addr = server.local_addr().unwrap();
    // Five runs that wait 30 s: two run, three are shed after their wait.
    let runs: Vec<_> = (0..5).map(|_| tokio::spawn(post(addr, SLOW))).collect();
    let mut shed = 0;
    let mut pending = runs;
    while shed < 3 {
        let (done, _, rest) = futures::future::select_all(pending).await;
        assert_eq!(done.unwrap(), Outcome::Answered(503, true));
        shed += 1;
        pending = rest;
    }
    assert_eq!(post(addr, ECHO).await, Outcome::Answered(200, false));
    server.close().await.unwrap();
    for run in pending {
        run.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_with_idle_and_silent_connections_is_prompt() {
    let probe = CancelProbe::default();
    let server = serve_mcp(fixture_options(&probe).http(HttpOptions::new().port(0)))
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    let mut held = Vec::new();
    for i in 0..100 {
        let mut s = TcpStream::connect(addr).await.unwrap();
        if i % 2 == 0 {
            // Kept alive after an answer.
            let req = format!(
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{ECHO}",
                ECHO.len()
            );
            s.write_all(req.as_bytes()).await.unwrap();
            let mut buf = [0u8; 512];
            let n = s.read(&mut buf).await.unwrap();
            assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
        }
        held.push(s);
    }
    let started = std::time::Instant::now();
    server.close().await.unwrap();
    let took = started.elapsed();
    // The grace for calls in flight is 5 s; with none, closing does not wait
    // for it (the bound leaves room for a loaded machine, not for the grace).
    assert!(took < Duration::from_secs(4), "closing took {took:?}");
}
