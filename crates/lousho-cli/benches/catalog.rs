//! Catalog benchmark (#13): how long `lousho` takes from process start to
//! the first model request with 1, 5 and 10 stdio MCP servers that each take
//! 1 s to start — eager (`--no-catalog`: every server connects first) vs
//! catalog (fresh manifests: no server starts before the model is asked);
//! and one tool call with 6 such servers: a `lousho run` whose model calls one
//! tool, and `lousho call` of that tool. Prints a table; the figures are
//! medians of interleaved rounds.
//!
//! A third table: the tool definitions' estimated tokens per request at 20,
//! 200 and 1000 MCP tools (the testkit's 200-tool fixture catalog, cut or
//! repeated under more server names), tool search off vs on (client-side:
//! the first request, and a later one after a search loaded 5 tools).
//!
//! Run: `cargo bench -p lousho-cli --bench catalog`
//! (`CATALOG_BENCH_ROUNDS` sets the rounds, default 3).
//!
//! The servers are `sh -c 'sleep 1; exec lousho mcp files.yaml'`; the model
//! is the testkit's mock OpenAI server on 127.0.0.1 (its first request is the
//! moment measured). Every run gets a cache directory of its own, filled by a
//! `lousho tools --refresh` before the catalog rounds.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use lousho_testkit::mock_provider::{MockProvider, MockReply};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LOUSHO: &str = env!("CARGO_BIN_EXE_lousho");

fn files_spec() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/agents/files.yaml")
        .to_string_lossy()
        .into_owned()
}

/// A spec with `n` servers that each take 1 s to start.
fn spec(dir: &Path, n: usize) -> PathBuf {
    let mut text = String::from("model: openai/gpt-4o-mini\nmcpServers:\n");
    for i in 1..=n {
        text.push_str(&format!(
            "  s{i}:\n    command: sh\n    args: [\"-c\", \"sleep 1; exec \\\"$0\\\" mcp '{}'\", \"${{LOUSHO_BIN}}\"]\n",
            files_spec()
        ));
    }
    let path = dir.join(format!("servers{n}.yaml"));
    std::fs::write(&path, text).unwrap();
    path
}

fn lousho(cache: &Path, base_url: &str) -> Command {
    let mut cmd = Command::new(LOUSHO);
    cmd.env("LOUSHO_CACHE_DIR", cache)
        .env("OPENAI_BASE_URL", base_url)
        .env("OPENAI_API_KEY", "bench")
        .env("LOUSHO_LOG", "error")
        .env_remove("LOUSHO_BIN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// Starts `cmd`; returns the time until the mock's request count grows, and
/// the time until the process exits.
async fn time_to_request(mut cmd: Command, mock: &MockProvider) -> (Duration, Duration) {
    let before = mock.requests().len();
    let start = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let mut first = None;
    loop {
        if first.is_none() && mock.requests().len() > before {
            first = Some(start.elapsed());
        }
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "lousho failed: {status}");
            break;
        }
        tokio::time::sleep(Duration::from_micros(500)).await;
    }
    let total = start.elapsed();
    (first.unwrap_or(total), total)
}

/// Runs `cmd` to its end; returns the wall time.
fn time_to_exit(mut cmd: Command) -> Duration {
    let start = Instant::now();
    let status = cmd.status().unwrap();
    assert!(status.success(), "lousho failed: {status}");
    start.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

fn refresh(cache: &Path, spec: &Path, base_url: &str) {
    let status = lousho(cache, base_url)
        .args(["tools", &spec.to_string_lossy(), "--refresh"])
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::main]
async fn main() {
    let rounds: usize = std::env::var("CATALOG_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let dir = tempfile::tempdir().unwrap();
    let text = (0..10_000).map(|_| MockReply::text_reply("ok"));
    let mock = MockProvider::openai().replies(text).start().await;
    let url = mock.base_url();

    println!(
        "lousho catalog benchmark: stdio servers that each take 1 s to start; median of {rounds} rounds"
    );
    println!();
    println!(
        "{:<44} {:>12} {:>12} {:>8}",
        "scenario", "eager", "catalog", "ratio"
    );
    for n in [0, 1, 5, 10] {
        let spec = spec(dir.path(), n);
        let cache = dir.path().join(format!("cache{n}"));
        refresh(&cache, &spec, &url);
        let (mut eager, mut catalog) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            let mut cmd = lousho(&cache, &url);
            cmd.args(["--no-catalog", "run", &spec.to_string_lossy(), "hi"]);
            eager.push(time_to_request(cmd, &mock).await.0);
            let mut cmd = lousho(&cache, &url);
            cmd.args(["run", &spec.to_string_lossy(), "hi"]);
            catalog.push(time_to_request(cmd, &mock).await.0);
        }
        let (e, c) = (median(eager), median(catalog));
        println!(
            "{:<44} {:>12} {:>12} {:>7.1}x",
            format!("run: start → first model request, {n} servers"),
            ms(e),
            ms(c),
            e.as_secs_f64() / c.as_secs_f64()
        );
    }

    // One tool call with 6 servers.
    let spec6 = spec(dir.path(), 6);
    let cache = dir.path().join("cache6");
    refresh(&cache, &spec6, &url);
    let script = (0..rounds * 2).flat_map(|i| {
        [
            MockReply::new().tool_call(
                &format!("call_{i}"),
                "s3__read_file",
                json!({"path": "files.yaml"}),
            ),
            MockReply::text_reply("done"),
        ]
    });
    let tool_mock = MockProvider::openai().replies(script).start().await;
    let tool_url = tool_mock.base_url();
    let (mut eager, mut catalog) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let mut cmd = lousho(&cache, &tool_url);
        cmd.args(["--no-catalog", "run", &spec6.to_string_lossy(), "read it"]);
        eager.push(time_to_request(cmd, &tool_mock).await.1);
        let mut cmd = lousho(&cache, &tool_url);
        cmd.args(["run", &spec6.to_string_lossy(), "read it"]);
        catalog.push(time_to_request(cmd, &tool_mock).await.1);
    }
    let (e, c) = (median(eager), median(catalog));
    println!(
        "{:<44} {:>12} {:>12} {:>7.1}x",
        "run calling one tool, 6 servers (whole run)",
        ms(e),
        ms(c),
        e.as_secs_f64() / c.as_secs_f64()
    );

    let (mut no_catalog, mut catalog) = (Vec::new(), Vec::new());
    let input = r#"{"path": "files.yaml"}"#;
    for _ in 0..rounds {
        let mut cmd = lousho(&cache, &url);
        cmd.args([
            "--no-catalog",
            "call",
            &spec6.to_string_lossy(),
            "s3__read_file",
            input,
        ]);
        no_catalog.push(time_to_exit(cmd));
        let mut cmd = lousho(&cache, &url);
        cmd.args(["call", &spec6.to_string_lossy(), "s3__read_file", input]);
        catalog.push(time_to_exit(cmd));
    }
    let (e, c) = (median(no_catalog), median(catalog));
    println!(
        "{:<44} {:>12} {:>12} {:>7.1}x",
        "call of one tool, 6 servers (owner only)",
        ms(e),
        ms(c),
        e.as_secs_f64() / c.as_secs_f64()
    );
    tokens_table();
    println!();
    println!("eager = --no-catalog (servers connect before the first request, as the library does");
    println!(
        "without a store); for `call` both columns start only the tool's owner (1 s): without"
    );
    println!("a manifest it is found by the tool's prefix, with one from the manifest.");
}

/// `n` MCP tools from the fixture catalog (repeated under `<server>N` names
/// past 200).
fn catalog(n: usize) -> Vec<std::sync::Arc<dyn lousho::Tool>> {
    let calls = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let base = lousho_testkit::tools::catalog_agent_tools(calls);
    (0..n)
        .map(|i| {
            let tool = &base[i % base.len()];
            if i < base.len() {
                return tool.clone();
            }
            let spec = tool.spec();
            let copy = i / base.len();
            let server = format!("{}{copy}", spec.origin.server().unwrap_or("s"));
            let bare = spec
                .name
                .split_once("__")
                .map_or(spec.name.as_str(), |(_, b)| b);
            let def = lousho::tool::DefinedTool::from_json(
                format!("{server}__{bare}"),
                spec.description.clone(),
                spec.input_schema.clone(),
                |_: serde_json::Value, _| async { "ok" },
            )
            .origin(lousho::tool::ToolOrigin::mcp(server, bare));
            std::sync::Arc::new(def) as std::sync::Arc<dyn lousho::Tool>
        })
        .collect()
}

/// Definition tokens per request, search off vs on.
fn tokens_table() {
    use lousho::tool::search::{ToolSearch, ToolSearchMode};
    println!();
    println!(
        "tool definitions per request (estimated tokens, 4 bytes a token; client-side search)"
    );
    println!(
        "{:<10} {:>12} {:>14} {:>16} {:>8}",
        "tools", "search off", "on: 1st req", "on: +5 found", "ratio"
    );
    for n in [20, 200, 1000] {
        let tools = catalog(n);
        let budget = |mode| {
            lousho::Agent::builder()
                .model("test")
                .tools(tools.clone())
                .tool_search(ToolSearch::new(mode))
                .build()
                .unwrap()
                .tool_budget()
                .unwrap()
        };
        let off = budget(ToolSearchMode::Off);
        let on = budget(ToolSearchMode::On);
        // A later request: the first one's plus the 5 definitions a search
        // returned (the 5 largest, as the worst case).
        let mut sizes: Vec<usize> = on
            .deferred
            .iter()
            .filter_map(|name| on.tool_tokens.get(name).copied())
            .collect();
        sizes.sort_unstable_by(|a, b| b.cmp(a));
        let later = on.sent_tokens + sizes.iter().take(5).sum::<usize>();
        println!(
            "{:<10} {:>12} {:>14} {:>16} {:>7.1}x",
            n,
            off.sent_tokens,
            on.sent_tokens,
            later,
            off.sent_tokens as f64 / on.sent_tokens.max(1) as f64
        );
    }
}
