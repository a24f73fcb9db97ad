//! Fixture MCP server for lousho's tests and benchmarks.
//!
//! `lousho-fixture-mcp [serve]` serves the fixture over stdio;
//! `launcher` runs `serve` as a child with inherited stdio (like `npx`);
//! `sleeper` sleeps (a grandchild that ignores stdin); `garbage` writes
//! non-MCP text to stdout and never answers; `floor` is a bare newline-JSON
//! echo (the benchmark floor); `malformed` and `ping-flood` are the raw
//! misbehaving servers of `lousho_testkit::hostile`; `http` serves the fixture over stateless
//! Streamable HTTP and `floor-http` a bare JSON-RPC echo over HTTP (both print
//! their URL, then serve until stdin closes). Trailing `--tag=…` arguments only mark
//! processes so tests can count them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::io::{BufRead, Write};

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "serve".into());
    let tags: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a.starts_with("--tag"))
        .collect();
    if (mode == "launcher" || mode == "sleeper")
        && let Ok(path) = std::env::var("FIXTURE_SPAWN_LOG")
    {
        lousho_testkit::mcp_fixture::append_line(&path, &format!("{mode} {}", std::process::id()));
    }
    match mode.as_str() {
        "launcher" => {
            let exe = std::env::current_exe().unwrap();
            let status = std::process::Command::new(exe)
                .arg("serve")
                .args(&tags)
                .status()
                .unwrap();
            std::process::exit(status.code().unwrap_or(1));
        }
        "sleeper" => loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        },
        "garbage" => {
            println!("Welcome to my server! Listening...");
            println!("this is not JSON-RPC");
            std::io::stdout().flush().unwrap();
            // Read (and ignore) stdin until it closes.
            for _ in std::io::stdin().lock().lines() {}
        }
        "floor" => floor(),
        "malformed" => lousho_testkit::hostile::run_malformed_stdio(),
        "ping-flood" => lousho_testkit::hostile::run_ping_flood_stdio(),
        "http" | "floor-http" => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                let url = if mode == "http" {
                    let server = lousho_testkit::mcp_fixture::serve_http(true).await;
                    let url = server.url.clone();
                    std::mem::forget(server);
                    url
                } else {
                    lousho_testkit::mcp_fixture::serve_floor_http().await
                };
                println!("{url}");
                std::io::stdout().flush().unwrap();
                // Serve until stdin closes.
                let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(
                    tokio::io::stdin(),
                ));
                while let Ok(Some(_)) = lines.next_line().await {}
            });
        }
        _ => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(lousho_testkit::mcp_fixture::run_stdio());
        }
    }
}

/// Answers every JSON-RPC line with [`floor_answer`](lousho_testkit::bench::floor_answer)
/// (just enough MCP to connect; no state).
fn floor() {
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if let Some(reply) = lousho_testkit::bench::floor_answer(line.as_bytes()) {
            out.write_all(&reply).unwrap();
            out.flush().unwrap();
        }
    }
}
