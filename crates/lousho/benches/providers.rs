//! Streaming decode overhead of the HTTP providers: a long streamed answer
//! (text deltas and fragmented tool calls) from the loopback mock, read as
//! raw bytes with reqwest (the floor: HTTP + mock cost) versus decoded into
//! `ModelEvent`s by lousho's OpenAI and Anthropic providers.
//!
//! ```sh
//! cargo bench -p lousho --bench providers
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use futures::StreamExt;
use lousho::model::{Anthropic, Model, ModelRequest, OpenAi, RetryPolicy};
use lousho::model::{Message, ModelEvent};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use serde_json::json;
use std::time::{Duration, Instant};

const RUNS: usize = 15;
const TEXT_PIECES: usize = 4000;
const TOOL_CALLS: usize = 20;

fn reply() -> MockReply {
    let mut r = MockReply::new()
        .text_pieces((0..TEXT_PIECES).map(|i| format!("word{i} ")))
        .fragments(40);
    for i in 0..TOOL_CALLS {
        r = r.tool_call(
            &format!("call_{i}"),
            "search",
            json!({"query": "streaming benchmarks", "page": i, "tags": ["a", "b", "c"]}),
        );
    }
    r.usage(1000, TEXT_PIECES as u64)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

async fn raw_bytes(
    url: &str,
    body: &serde_json::Value,
    headers: &[(&str, &str)],
) -> (Duration, usize) {
    let client = reqwest::Client::new();
    let start = Instant::now();
    let mut req = client.post(url).json(body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let mut response = req.send().await.expect("send");
    let mut bytes = 0;
    while let Some(chunk) = response.chunk().await.expect("chunk") {
        bytes += chunk.len();
    }
    (start.elapsed(), bytes)
}

async fn decoded(model: &dyn Model) -> (Duration, usize) {
    let request = ModelRequest::new(vec![Message::user("go")]);
    let start = Instant::now();
    let mut stream = model.stream(&request);
    let mut events = 0;
    while let Some(e) = stream.next().await {
        let e = e.expect("event");
        if matches!(e, ModelEvent::TextDelta(_) | ModelEvent::ToolCall(_)) {
            events += 1;
        }
    }
    (start.elapsed(), events)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let runs = RUNS + 1; // one warm-up
        let openai_mock = MockProvider::openai().replies((0..runs * 2).map(|_| reply())).start().await;
        let anthropic_mock = MockProvider::anthropic().replies((0..runs * 2).map(|_| reply())).start().await;
        let openai = OpenAi::builder("bench").api_key("k").base_url(openai_mock.base_url()).retry(RetryPolicy::none()).build().expect("openai");
        let anthropic = Anthropic::builder("bench").api_key("k").base_url(anthropic_mock.base_url()).retry(RetryPolicy::none()).build().expect("anthropic");

        let openai_url = format!("{}/chat/completions", openai_mock.base_url());
        let anthropic_url = format!("{}/v1/messages", anthropic_mock.base_url());
        let openai_body = json!({"model": "bench", "stream": true, "stream_options": {"include_usage": true}, "messages": []});
        let anthropic_body = json!({"model": "bench", "stream": true, "max_tokens": 10, "messages": []});

        let mut rows = Vec::new();
        for (wire, url, body, model) in [
            ("OpenAI", &openai_url, &openai_body, &openai as &dyn Model),
            ("Anthropic", &anthropic_url, &anthropic_body, &anthropic as &dyn Model),
        ] {
            let (mut raw, mut dec) = (Vec::new(), Vec::new());
            let (mut bytes, mut events) = (0, 0);
            for i in 0..runs {
                let (d, b) = raw_bytes(url, body, &[]).await;
                let (e, n) = decoded(model).await;
                if i > 0 {
                    raw.push(d);
                    dec.push(e);
                }
                bytes = b;
                events = n;
            }
            rows.push((wire, bytes, events, median(raw), median(dec)));
        }

        println!("streamed turn: {TEXT_PIECES} text deltas + {TOOL_CALLS} tool calls (40 fragments each), median of {RUNS} runs over loopback");
        println!("| wire | bytes | events out | raw reqwest read | lousho decoded | events/s (lousho) | lousho / raw |");
        println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
        for (wire, bytes, events, raw, dec) in rows {
            println!(
                "| {wire} | {bytes} | {events} | {:.2} ms | {:.2} ms | {:.0} | {:.2}x |",
                raw.as_secs_f64() * 1e3,
                dec.as_secs_f64() * 1e3,
                events as f64 / dec.as_secs_f64(),
                dec.as_secs_f64() / raw.as_secs_f64()
            );
        }
    });
}
