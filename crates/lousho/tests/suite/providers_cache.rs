//! Prompt caching against the wire-faithful mocks, over loopback HTTP:
//! Anthropic's `cache_control` breakpoints where the docs place them (and
//! none when turned off), cache reads and writes in usage and cost, and
//! OpenAI's automatic caching reported the same way.

use super::providers_common::{SECRET, weather_tool};
use lousho::model::{Anthropic, ModelSettings, OpenAi, PromptCache, Usage};
use lousho::{Agent, Reply};
use lousho_testkit::mock_provider::{MockProvider, MockReply, RecordedRequest};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// Where a request's breakpoints are, as JSON pointers into its body, sorted.
fn breakpoints(request: &RecordedRequest) -> Vec<String> {
    fn walk(value: &Value, path: String, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if map.contains_key("cache_control") {
                    out.push(path.clone());
                }
                for (k, v) in map {
                    walk(v, format!("{path}/{k}"), out);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    walk(v, format!("{path}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(&request.body, String::new(), &mut out);
    out.sort();
    out
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

/// An agent on `claude-sonnet-4-5` (a built-in price) with a system
/// prompt and the weather tool, against a mock that answers two tool
/// rounds then text, reporting cache writes and reads.
async fn two_tool_rounds(settings: ModelSettings) -> (MockProvider, Reply) {
    let mock = MockProvider::anthropic()
        .require_api_key(SECRET)
        .reply(
            MockReply::new()
                .tool_call("toolu_1", "get_weather", json!({"city": "Paris"}))
                .usage(2000, 50)
                .cache_tokens(0, 1800),
        )
        .reply(
            MockReply::new()
                .tool_call("toolu_2", "get_weather", json!({"city": "Rome"}))
                .usage(2100, 40)
                .cache_tokens(1800, 250),
        )
        .reply(
            MockReply::text_reply("Sunny in both.")
                .usage(2200, 30)
                .cache_tokens(2050, 100),
        )
        .start()
        .await;
    let model = Anthropic::builder("claude-sonnet-4-5")
        .api_key(SECRET)
        .base_url(mock.base_url())
        .build()
        .unwrap();
    let agent = Agent::builder()
        .model(model)
        .prompt("You are a weather bot.")
        .tool(weather_tool(Arc::new(Mutex::new(Vec::new()))))
        .settings(settings)
        .build()
        .unwrap();
    let reply = agent.send("Weather in Paris and Rome?").await.unwrap();
    assert_eq!(reply.text, "Sunny in both.");
    (mock, reply)
}

#[tokio::test]
async fn anthropic_breakpoints_sit_on_tools_system_and_the_growing_conversation() {
    let (mock, _) = two_tool_rounds(ModelSettings::default()).await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);

    // First request: the last tool, the system prompt, the prompt.
    assert_eq!(
        breakpoints(&requests[0]),
        ["/messages/0/content/0", "/system/0", "/tools/0"]
    );
    assert_eq!(
        requests[0].body["system"],
        json!([{"type": "text", "text": "You are a weather bot.", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(
        requests[0].body["tools"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    // Each tool round: the newest turn (written) and the turn where the
    // previous request's last breakpoint was (read), never more than four.
    assert_eq!(
        breakpoints(&requests[1]),
        [
            "/messages/0/content/0",
            "/messages/2/content/0",
            "/system/0",
            "/tools/0"
        ]
    );
    assert_eq!(
        requests[1].body["messages"][2]["content"][0]["type"],
        "tool_result"
    );
    assert_eq!(
        breakpoints(&requests[2]),
        [
            "/messages/2/content/0",
            "/messages/4/content/0",
            "/system/0",
            "/tools/0"
        ]
    );
    // The earlier prefix is sent unchanged but for the moved breakpoint.
    let mut earlier = requests[1].body["messages"].clone();
    earlier[0]["content"][0]
        .as_object_mut()
        .unwrap()
        .remove("cache_control");
    assert_eq!(
        requests[2].body["messages"].as_array().unwrap()[..3],
        earlier.as_array().unwrap()[..]
    );
}

#[tokio::test]
async fn anthropic_cache_reads_and_writes_are_in_usage_and_priced_at_their_rates() {
    let (_mock, reply) = two_tool_rounds(ModelSettings::default()).await;
    let first = reply.requests[0].usage;
    assert_eq!(
        first,
        Usage {
            cache_read_tokens: 0,
            cache_write_tokens: 1800,
            ..Usage::new(2000, 50)
        },
        "input_tokens counts uncached, written and read tokens"
    );
    assert_eq!(
        reply.usage,
        Usage {
            cache_read_tokens: 1800 + 2050,
            cache_write_tokens: 1800 + 250 + 100,
            ..Usage::new(6300, 120)
        }
    );
    // claude-sonnet-4-5: $3 input, $15 output, reads 0.1× ($0.30), writes 1.25× ($3.75).
    let costs: Vec<f64> = reply.requests.iter().map(|r| r.cost_usd.unwrap()).collect();
    let expected = [
        (200.0 * 3.0 + 1800.0 * 3.75 + 50.0 * 15.0) / 1e6,
        (50.0 * 3.0 + 1800.0 * 0.3 + 250.0 * 3.75 + 40.0 * 15.0) / 1e6,
        (50.0 * 3.0 + 2050.0 * 0.3 + 100.0 * 3.75 + 30.0 * 15.0) / 1e6,
    ];
    for (cost, want) in costs.iter().zip(expected) {
        assert!(close(*cost, want), "{cost} != {want}");
    }
    assert!(close(reply.cost_usd.unwrap(), expected.iter().sum()));
    // Without caching the same tokens would cost more.
    let uncached: f64 = reply
        .requests
        .iter()
        .map(|r| (r.usage.input_tokens as f64 * 3.0 + r.usage.output_tokens as f64 * 15.0) / 1e6)
        .sum();
    assert!(reply.cost_usd.unwrap() < uncached);
}

#[tokio::test]
async fn anthropic_caching_turned_off_sends_no_breakpoints() {
    let (mock, _) = two_tool_rounds(ModelSettings::default().prompt_cache(PromptCache::Off)).await;
    for request in mock.requests() {
        assert_eq!(breakpoints(&request), Vec::<String>::new());
        assert_eq!(request.body["system"], "You are a weather bot.");
    }
}

#[tokio::test]
async fn openai_cached_tokens_are_in_usage_and_cost_and_nothing_is_marked() {
    let mock = MockProvider::openai()
        .require_api_key(SECRET)
        .reply(
            MockReply::text_reply("Hello.")
                .usage(1000, 300)
                .cache_tokens(600, 0),
        )
        .start()
        .await;
    let model = OpenAi::builder("gpt-4o")
        .api_key(SECRET)
        .base_url(mock.base_url())
        .build()
        .unwrap();
    let agent = Agent::builder()
        .model(model)
        .prompt("Be brief.")
        .build()
        .unwrap();
    let reply = agent.send("Hi").await.unwrap();
    assert_eq!(
        reply.usage,
        Usage {
            cache_read_tokens: 600,
            ..Usage::new(1000, 300)
        }
    );
    // gpt-4o: $2.50 input, $1.25 cached input, $10 output.
    let want = (400.0 * 2.5 + 600.0 * 1.25 + 300.0 * 10.0) / 1e6;
    assert!(close(reply.cost_usd.unwrap(), want));
    assert_eq!(breakpoints(&mock.requests()[0]), Vec::<String>::new());
}
