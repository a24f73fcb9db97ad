//! The HTTP server under slowloris: idle, slow-header and slow-body
//! connections are closed within their timeouts (those that owe a request
//! with `408`), a connection cap holds, and a normal call still answers
//! while hundreds of such sockets are open.

use lousho::mcp::HttpOptions;
use lousho::{ServeOptions, serve_mcp};
use lousho_testkit::serve::{CancelProbe, fixture_agent};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

/// The status of a normal `initialize` POST on a fresh connection, within 10 s.
async fn initialize_status(addr: SocketAddr) -> u16 {
    let call = async {
        let mut s = TcpStream::connect(addr).await.unwrap();
        let req = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{INIT}",
            INIT.len()
        );
        s.write_all(req.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out).await;
        let text = String::from_utf8_lossy(&out).into_owned();
        text.split_whitespace()
            .nth(1)
            .unwrap_or("0")
            .parse()
            .unwrap()
    };
    tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("a normal call answers while slow connections are open")
}

/// Reads until the server closes `s` (EOF or reset); returns what it sent.
async fn until_closed(mut s: TcpStream) -> String {
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out).await;
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_slow_header_and_slow_body_connections_are_closed_within_their_timeouts() {
    let probe = CancelProbe::default();
    let server = serve_mcp(
        ServeOptions::new(fixture_agent(&probe)).http(
            HttpOptions::new()
                .port(0)
                .header_timeout(Duration::from_millis(800))
                .body_timeout(Duration::from_millis(800))
                .max_connections(1000),
        ),
    )
    .await
    .unwrap();
    let addr = server.local_addr().unwrap();

    let mut held = Vec::new();
    for i in 0..300 {
        let mut s = TcpStream::connect(addr).await.unwrap();
        match i % 3 {
            0 => {} // silent: never sends a byte
            1 => s
                .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
                .await
                .unwrap(),
            _ => s
                .write_all(
                    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"",
                )
                .await
                .unwrap(),
        }
        held.push(s);
    }
    // A kept-alive connection after one answer: idle, it owes nothing.
    let mut kept = TcpStream::connect(addr).await.unwrap();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{INIT}",
        INIT.len()
    );
    kept.write_all(req.as_bytes()).await.unwrap();
    let mut first = [0u8; 12];
    kept.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    assert_eq!(initialize_status(addr).await, 200);

    let closed = tokio::time::timeout(
        Duration::from_secs(20),
        futures::future::join_all(held.into_iter().map(until_closed)),
    )
    .await
    .expect("the server closes every slow connection within its timeout (plus slack)");
    // Silent, part of the head, part of the body: each owed a request and
    // is told it came too late, not just dropped.
    for (i, answer) in closed.iter().enumerate() {
        assert!(
            answer.starts_with("HTTP/1.1 408"),
            "connection {i} (kind {}): {answer:?}",
            i % 3
        );
    }
    let rest = tokio::time::timeout(Duration::from_secs(20), until_closed(kept))
        .await
        .expect("an idle kept-alive connection is closed after the header timeout");
    assert!(
        !rest.contains("HTTP/1.1 408"),
        "an idle connection owed nothing: {rest:?}"
    );
    server.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_connection_cap_silent_connections_make_room() {
    let probe = CancelProbe::default();
    let server = serve_mcp(
        ServeOptions::new(fixture_agent(&probe)).http(
            HttpOptions::new()
                .port(0)
                // Long enough that only eviction can free a slot in time.
                .header_timeout(Duration::from_secs(60))
                .max_connections(16),
        ),
    )
    .await
    .unwrap();
    let addr = server.local_addr().unwrap();
    let mut held = Vec::new();
    for _ in 0..200 {
        held.push(TcpStream::connect(addr).await.unwrap());
    }
    assert_eq!(initialize_status(addr).await, 200);
    // Silent ones past the cap were closed to make room (or answered and
    // closed): at most a cap's worth may still be open.
    let closed = futures::future::join_all(
        held.drain(..)
            .map(|s| tokio::time::timeout(Duration::from_secs(10), until_closed(s))),
    )
    .await
    .into_iter()
    .filter(Result::is_ok)
    .count();
    assert!(closed >= 184, "only {closed} of 200 closed");
    server.close().await.unwrap();
}
