//! Cost per turn with many tools (#21 §3): an agent whose tool source (as
//! MCP servers are) offers 20, 200 or 1,000 tools, tool search off, so every
//! request carries every definition. One turn is `agent.send("hi")` against
//! the loopback mock provider answering a short text.
//!
//! The floor is the same request body, already serialised, POSTed with
//! reqwest to the same mock: the bytes the provider must receive, and the
//! mock's own cost of reading them. lousho's overhead per turn is its
//! median minus the floor's; the target is overhead at 1,000 tools ≤ 2× the
//! overhead at 20. A lousho turn and a floor turn alternate; rounds are
//! interleaved (every size and provider once per round); medians over
//! rounds.
//!
//! ```sh
//! cargo bench -p lousho --bench tool_definitions
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use async_trait::async_trait;
use lousho::model::{Anthropic, Model, OpenAi, RetryPolicy};
use lousho::tool::search::{ToolSearch, ToolSearchMode};
use lousho::tool::{DefinedTool, Tool, ToolSource, ToolSourceError};
use lousho::{Agent, ToolContext};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

const SIZES: [usize; 3] = [20, 200, 1000];
const ROUNDS: usize = 7;
/// Turns per measurement (fresh mocks each, so their recorded bodies are freed).
const TURNS: usize = 30;

/// A tool source that offers the same tools every turn, as a connected MCP
/// server does between `list_changed` notifications.
struct Source(Vec<Arc<dyn Tool>>);

#[async_trait]
impl ToolSource for Source {
    fn name(&self) -> &str {
        "bench"
    }
    async fn ready(&self) -> Result<(), ToolSourceError> {
        Ok(())
    }
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.0.clone()
    }
    async fn close(&self) {}
}

/// `n` tools named and described like a real server's, each with a
/// four-property schema (≈ 700 bytes of JSON per definition).
fn tools(n: usize) -> Vec<Arc<dyn Tool>> {
    let verbs = [
        "list", "get", "create", "update", "delete", "search", "archive", "export",
    ];
    let nouns = [
        "issue", "file", "event", "contact", "invoice", "ticket", "branch", "page",
    ];
    (0..n)
        .map(|i| {
            let verb = verbs[i % verbs.len()];
            let noun = nouns[(i / verbs.len()) % nouns.len()];
            let name = format!("server{}__{verb}_{noun}_{i}", i / 20);
            let schema = json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": format!("The {noun}'s identifier, as returned by list_{noun}")},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "How many results to return at most"},
                    "state": {"type": "string", "enum": ["open", "closed", "all"], "description": "Which ones to include"},
                    "labels": {"type": "array", "items": {"type": "string"}, "description": "Only those carrying every one of these labels"}
                },
                "required": ["id"]
            });
            let tool = DefinedTool::from_json(
                name,
                format!(
                    "{verb} a {noun} in the workspace. Use it when the user asks to {verb} {noun}s; \
                     returns the {noun} as JSON with its id, title, state and labels."
                ),
                schema,
                |_: Value, _: ToolContext| async { "ok" },
            );
            Arc::new(tool) as Arc<dyn Tool>
        })
        .collect()
}

#[derive(Clone, Copy, PartialEq)]
enum Wire {
    OpenAi,
    Anthropic,
}

impl Wire {
    fn label(self) -> &'static str {
        match self {
            Wire::OpenAi => "OpenAI",
            Wire::Anthropic => "Anthropic",
        }
    }

    async fn mock(self) -> MockProvider {
        let replies = (0..TURNS + 1).map(|_| MockReply::text_reply("done"));
        match self {
            Wire::OpenAi => MockProvider::openai().replies(replies).start().await,
            Wire::Anthropic => MockProvider::anthropic().replies(replies).start().await,
        }
    }

    fn model(self, mock: &MockProvider) -> Arc<dyn Model> {
        match self {
            Wire::OpenAi => Arc::new(
                OpenAi::builder("bench")
                    .api_key("k")
                    .base_url(mock.base_url())
                    .retry(RetryPolicy::none())
                    .build()
                    .expect("openai"),
            ),
            Wire::Anthropic => Arc::new(
                Anthropic::builder("bench")
                    .api_key("k")
                    .base_url(mock.base_url())
                    .retry(RetryPolicy::none())
                    .build()
                    .expect("anthropic"),
            ),
        }
    }

    fn path(self) -> &'static str {
        match self {
            Wire::OpenAi => "/chat/completions",
            Wire::Anthropic => "/v1/messages",
        }
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// One measurement: lousho's turns and the floor's, alternated turn by
/// turn so both see the same machine; their medians and the body size.
async fn measure(wire: Wire, tools: &[Arc<dyn Tool>]) -> (Duration, Duration, usize) {
    let lousho_mock = wire.mock().await;
    let floor_mock = wire.mock().await;
    let agent = Agent::builder()
        .model(wire.model(&lousho_mock))
        .tool_source(Arc::new(Source(tools.to_vec())))
        .tool_search(ToolSearch::new(ToolSearchMode::Off))
        .build()
        .expect("agent");
    agent.send("hi").await.expect("warm-up turn");
    let requests = lousho_mock.requests();
    let sent = &requests.last().expect("a request").body;
    assert_eq!(
        sent["tools"].as_array().map(Vec::len),
        Some(tools.len()),
        "every definition is sent"
    );
    let body = serde_json::to_vec(sent).expect("body");
    drop(requests);
    let client = reqwest::Client::new();
    let url = format!(
        "{}{}",
        floor_mock.base_url().trim_end_matches('/'),
        wire.path()
    );
    let floor_turn = |payload: Vec<u8>| {
        let request = client
            .post(&url)
            .header("content-type", "application/json")
            .header("authorization", "Bearer k")
            .header("x-api-key", "k")
            .header("anthropic-version", "2023-06-01")
            .body(payload);
        async move {
            let start = Instant::now();
            let response = request.send().await.expect("send");
            assert!(response.status().is_success(), "{}", response.status());
            response.bytes().await.expect("reply");
            start.elapsed()
        }
    };
    floor_turn(body.clone()).await; // warm-up: the connection
    let mut lousho = Vec::with_capacity(TURNS);
    let mut floor = Vec::with_capacity(TURNS);
    for _ in 0..TURNS {
        let start = Instant::now();
        agent.send("hi").await.expect("turn");
        lousho.push(start.elapsed());
        floor.push(floor_turn(body.clone()).await);
    }
    (median(lousho), median(floor), body.len())
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let sets: Vec<Vec<Arc<dyn Tool>>> = SIZES.iter().map(|&n| tools(n)).collect();
        let wires = [Wire::OpenAi, Wire::Anthropic];
        // [wire][size] → per-round medians
        let mut lousho = vec![vec![Vec::new(); SIZES.len()]; wires.len()];
        let mut floor = vec![vec![Vec::new(); SIZES.len()]; wires.len()];
        let mut bytes = vec![vec![0usize; SIZES.len()]; wires.len()];
        for _round in 0..ROUNDS {
            for (w, &wire) in wires.iter().enumerate() {
                for (s, set) in sets.iter().enumerate() {
                    let (l, f, size) = measure(wire, set).await;
                    lousho[w][s].push(l);
                    floor[w][s].push(f);
                    bytes[w][s] = size;
                }
            }
        }
        println!(
            "\nCost per turn with many tools: median of {ROUNDS} interleaved rounds ({TURNS} turns each), tool search off\n"
        );
        println!("| provider | tools | request body | lousho turn | floor (same bytes) | lousho ÷ floor | overhead | overhead ÷ at 20 tools |");
        println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        for (w, wire) in wires.iter().enumerate() {
            let mut base = None;
            for (s, n) in SIZES.iter().enumerate() {
                let l = median(lousho[w][s].clone());
                let f = median(floor[w][s].clone());
                let overhead = l.as_secs_f64() - f.as_secs_f64();
                let base = *base.get_or_insert(overhead);
                // A ratio to a base within the noise means nothing.
                let ratio = if base > 50e-6 {
                    format!("{:.2}×", overhead / base)
                } else {
                    "— (base < 0.05 ms)".to_owned()
                };
                println!(
                    "| {} | {n} | {} KiB | {} | {} | {:.2} | {:.2} ms | {ratio} |",
                    wire.label(),
                    bytes[w][s] / 1024,
                    ms(l),
                    ms(f),
                    l.as_secs_f64() / f.as_secs_f64(),
                    overhead * 1e3,
                );
            }
        }
    });
}
