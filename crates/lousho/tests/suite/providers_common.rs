//! What both HTTP providers share: model strings, keys, secrets, tool-schema
//! normalisation. Also the helpers the provider test modules use.

use lousho::agent::BuildError;
use lousho::model::ModelError;
use lousho::model::{
    Anthropic, ApiKey, ModelRef, OpenAi, OpenAiBuilder, RetryNotice, RetryPolicy,
    resolve_model_with_env,
};
use lousho::tool::DefinedTool;
use lousho::{Agent, JsonSchema, ToolContext, ToolOutput, define_tool};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A key that must never show up in `Debug`, `Display` or logs.
pub const SECRET: &str = "sk-test-7f3a9c1e5b2d4f60a8c9e1b3d5f7a9c1";

/// The OpenAI provider (`gpt-test`) at `mock`, its key [`SECRET`].
pub fn openai_at(mock: &MockProvider) -> OpenAiBuilder {
    OpenAi::builder("gpt-test")
        .api_key(SECRET)
        .base_url(mock.base_url())
}

/// Retry notices seen: (attempt, delay, whether the delay came from Retry-After).
pub type Notices = Arc<Mutex<Vec<(u32, Duration, bool)>>>;

/// Fast retries for tests, recording every notice.
pub fn fast_retry(notices: &Notices) -> RetryPolicy {
    let notices = notices.clone();
    RetryPolicy::default()
        .initial_delay(Duration::from_millis(1))
        .max_delay(Duration::from_millis(5))
        .on_retry(move |n: &RetryNotice<'_>| {
            notices
                .lock()
                .unwrap()
                .push((n.attempt, n.delay, n.from_retry_after));
        })
}

/// An environment of exactly these variables.
pub fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |name: &str| map.get(name).cloned()
}

#[derive(Deserialize, JsonSchema)]
pub struct WeatherInput {
    /// The city.
    pub city: String,
}

/// `get_weather`: records each call's city and answers "sunny in <city>".
pub fn weather_tool(calls: Arc<Mutex<Vec<String>>>) -> DefinedTool {
    define_tool(
        "get_weather",
        "Current weather for a city",
        move |input: WeatherInput| {
            let calls = calls.clone();
            async move {
                calls.lock().unwrap().push(input.city.clone());
                format!("sunny in {}", input.city)
            }
        },
    )
    .read_only()
}

/// A tool with a JSON Schema as given.
pub fn raw_schema_tool(name: &str, schema: Value) -> DefinedTool {
    DefinedTool::from_json(
        name,
        "A tool with a hand-written schema",
        schema,
        |_: Value, _: ToolContext| async { ToolOutput::text("ok") },
    )
    .read_only()
}

#[test]
fn model_strings_pick_the_provider_and_read_their_keys() {
    let e = env(&[
        ("OPENAI_API_KEY", "k1"),
        ("ANTHROPIC_API_KEY", "k2"),
        ("OPENROUTER_API_KEY", "k3"),
    ]);
    for (model, name) in [
        ("openai/gpt-4o-mini", "openai/gpt-4o-mini"),
        ("anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"),
        (
            "openrouter/openai/gpt-4o-mini",
            "openrouter/openai/gpt-4o-mini",
        ),
        ("ollama/llama3.2:3b", "ollama/llama3.2:3b"),
        ("test", "test"),
    ] {
        let m = resolve_model_with_env(model, &e).unwrap();
        assert_eq!(m.name(), name);
    }
    for bad in ["openai", "openai/", "mistral/large", "openrouter/"] {
        assert!(
            matches!(
                resolve_model_with_env(bad, &e),
                Err(ModelError::UnknownModel { .. })
            ),
            "{bad}"
        );
    }
}

#[test]
fn a_missing_key_is_an_error_naming_the_variable_before_any_request() {
    let empty = env(&[]);
    for (model, var) in [
        ("openai/gpt-4o-mini", "OPENAI_API_KEY"),
        ("anthropic/claude-haiku-4-5", "ANTHROPIC_API_KEY"),
        (
            "openrouter/anthropic/claude-haiku-4-5",
            "OPENROUTER_API_KEY",
        ),
    ] {
        let err = resolve_model_with_env(model, &empty).err().unwrap();
        assert!(
            matches!(&err, ModelError::MissingApiKey { env_var, .. } if env_var == var),
            "{err:?}"
        );
        assert!(err.to_string().contains(var), "{err}");
    }
    // Ollama needs no key.
    assert!(resolve_model_with_env("ollama/llama3.2", &empty).is_ok());

    // A builder given to the agent builder: `build()` reports it.
    let unset = "LOUSHO_TEST_KEY_THAT_IS_NEVER_SET";
    let err = Agent::builder()
        .model(OpenAi::builder("gpt-4o-mini").api_key_env(unset))
        .build()
        .err()
        .unwrap();
    assert!(
        matches!(&err, BuildError::Model(ModelError::MissingApiKey { env_var, .. }) if env_var == unset),
        "{err:?}"
    );
    let err = Anthropic::builder("claude-haiku-4-5")
        .api_key_env(unset)
        .build()
        .err()
        .unwrap();
    assert!(err.to_string().contains(unset), "{err}");
}

#[test]
fn secrets_never_show_in_debug_output() {
    let openai = OpenAi::builder("gpt-4o-mini")
        .api_key(SECRET)
        .retry(RetryPolicy::none());
    let anthropic = Anthropic::builder("claude-haiku-4-5").api_key(SECRET);
    let outputs = [
        format!("{openai:?}"),
        format!("{:?}", openai.clone().build().unwrap()),
        format!("{anthropic:?}"),
        format!("{:?}", anthropic.clone().build().unwrap()),
        format!("{:?}", ApiKey::new(SECRET)),
        format!("{:?}", ModelRef::from(openai.build().unwrap())),
        format!(
            "{:?}",
            resolve_model_with_env("openai/x", &env(&[("OPENAI_API_KEY", SECRET)]))
                .unwrap()
                .name()
        ),
    ];
    for out in outputs {
        assert!(!out.contains(SECRET), "{out}");
    }
    assert_eq!(format!("{:?}", ApiKey::new(SECRET)), "[redacted]");
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Point {
    x: f64,
    y: f64,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Route {
    /// Where to start.
    from: Point,
    to: Point,
    /// Optional label.
    label: Option<String>,
    stops: u32,
}

fn route_tool() -> DefinedTool {
    define_tool("plan_route", "Plans a route", |_: Route| async { "ok" }).read_only()
}

/// Runs one turn against an OpenAI mock and returns the parameters sent for
/// the first tool.
async fn openai_tool_parameters(
    builder: impl Fn(String) -> lousho::model::OpenAiBuilder,
    tool: DefinedTool,
) -> Value {
    let mock = MockProvider::openai()
        .reply(MockReply::text_reply("done"))
        .start()
        .await;
    let agent = Agent::builder()
        .model(builder(mock.base_url()).build().unwrap())
        .tool(tool)
        .build()
        .unwrap();
    agent.send("go").await.unwrap();
    mock.requests()[0].body["tools"][0]["function"]["parameters"].clone()
}

#[tokio::test]
async fn refs_are_inlined_and_the_portable_profile_drops_what_routers_reject() {
    let openai = openai_tool_parameters(|url| OpenAi::compatible(url, "m"), route_tool()).await;
    let text = openai.to_string();
    assert!(
        !text.contains("$ref") && !text.contains("$defs") && !text.contains("$schema"),
        "{text}"
    );
    assert_eq!(openai["type"], "object");
    assert_eq!(
        openai["properties"]["from"]["properties"]["x"]["type"],
        "number"
    );
    assert_eq!(
        openai["properties"]["from"]["description"],
        "Where to start."
    );
    // OpenAI accepts type arrays: kept.
    assert_eq!(
        openai["properties"]["label"]["type"],
        json!(["string", "null"])
    );

    let portable = openai_tool_parameters(
        |url| {
            OpenAi::openrouter("openai/gpt-4o-mini")
                .base_url(url)
                .api_key("k")
        },
        route_tool(),
    )
    .await;
    let text = portable.to_string();
    assert!(
        !text.contains("$ref") && !text.contains("additionalProperties"),
        "{text}"
    );
    assert_eq!(
        portable["properties"]["label"],
        json!({ "type": "string", "nullable": true, "description": "Optional label." })
    );
    // schemars' `uint32` is not a standard format.
    assert!(
        portable["properties"]["stops"].get("format").is_none(),
        "{text}"
    );
    assert_eq!(portable["properties"]["stops"]["type"], "integer");
}

#[tokio::test]
async fn a_root_any_of_of_objects_is_merged_into_one_object() {
    let schema = json!({
        "type": "object",
        "anyOf": [
            { "type": "object", "properties": { "id": { "type": "string" }, "kind": { "type": "string" } }, "required": ["id", "kind"] },
            { "type": "object", "properties": { "name": { "type": "string" }, "kind": { "type": "string" } }, "required": ["name", "kind"] },
        ],
    });
    let sent = openai_tool_parameters(
        |url| OpenAi::compatible(url, "m"),
        raw_schema_tool("lookup", schema),
    )
    .await;
    assert!(sent.get("anyOf").is_none(), "{sent}");
    assert_eq!(sent["type"], "object");
    let mut props: Vec<&String> = sent["properties"].as_object().unwrap().keys().collect();
    props.sort();
    assert_eq!(props, ["id", "kind", "name"]);
    assert_eq!(sent["required"], json!(["kind"]));
}

#[tokio::test]
async fn a_schema_that_cannot_be_fixed_is_an_error_naming_the_tool() {
    let mock = MockProvider::openai()
        .reply(MockReply::text_reply("never"))
        .start()
        .await;
    let schema = json!({ "type": "object", "properties": { "p": { "$ref": "#/$defs/Missing" } } });
    let agent = Agent::builder()
        .model(OpenAi::compatible(mock.base_url(), "m").build().unwrap())
        .tool(raw_schema_tool("broken_tool", schema))
        .build()
        .unwrap();
    let err = agent.send("go").await.err().unwrap();
    let lousho::AgentError::Model(ModelError::InvalidToolSchema { tool, .. }) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(tool, "broken_tool");
    assert!(err.to_string().contains("broken_tool"), "{err}");
    assert!(
        mock.requests().is_empty(),
        "no request is sent with a bad schema"
    );
}

#[tokio::test]
async fn a_recursive_schema_keeps_its_refs_for_openai_and_fails_for_portable() {
    let schema = json!({
        "type": "object",
        "properties": { "root": { "$ref": "#/$defs/Node" } },
        "$defs": { "Node": { "type": "object", "properties": {
            "children": { "type": "array", "items": { "$ref": "#/$defs/Node" } } } } },
    });
    let sent = openai_tool_parameters(
        |url| OpenAi::compatible(url, "m"),
        raw_schema_tool("tree", schema.clone()),
    )
    .await;
    assert_eq!(sent["properties"]["root"]["$ref"], "#/$defs/Node");
    assert!(sent["$defs"]["Node"].is_object());

    let mock = MockProvider::openai()
        .reply(MockReply::text_reply("never"))
        .start()
        .await;
    let agent = Agent::builder()
        .model(
            OpenAi::openrouter("x/y")
                .api_key("k")
                .base_url(mock.base_url()),
        )
        .tool(raw_schema_tool("tree", schema))
        .build()
        .unwrap();
    let err = agent.send("go").await.err().unwrap();
    assert!(
        matches!(&err, lousho::AgentError::Model(ModelError::InvalidToolSchema { tool, message, .. }) if tool == "tree" && message.contains("recursive")),
        "{err:?}"
    );
    assert!(mock.requests().is_empty());
}

/// Collects every event's target, level and fields as text.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<String>>>);

struct FieldText<'a>(&'a mut String);

impl tracing::field::Visit for FieldText<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut text = format!("span {}", span.metadata().name());
        span.record(&mut FieldText(&mut text));
        self.0.lock().unwrap().push(text);
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        let mut text = String::from("record");
        values.record(&mut FieldText(&mut text));
        self.0.lock().unwrap().push(text);
    }
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut text = format!("{} {}", event.metadata().level(), event.metadata().target());
        event.record(&mut FieldText(&mut text));
        self.0.lock().unwrap().push(text);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[tokio::test(flavor = "current_thread")]
async fn schema_changes_are_logged_with_the_tool_and_no_log_carries_the_key() {
    // A process-wide subscriber (set once, only by this test in this binary):
    // a scoped `set_default` races with tracing's process-wide callsite
    // interest cache when other tests run at the same time, so events can be
    // missed. The global one sees every event of threads without their own
    // default — this run's included — so lines of other tests may show up
    // too; the assertions below hold for all of them.
    let capture = global_capture();
    run_against_a_401().await;
    let logs = capture.0.lock().unwrap().clone();
    let schema_log = logs
        .iter()
        .find(|l| {
            l.contains("normalised the tool's input schema") && l.contains("tool=\"plan_route\"")
        })
        .unwrap_or_else(|| panic!("no schema log in {logs:#?}"));
    assert!(schema_log.starts_with("DEBUG"), "{schema_log}");
    assert!(schema_log.contains("tool=\"plan_route\""), "{schema_log}");
    assert!(
        schema_log.contains("inlined `#/$defs/Point`"),
        "{schema_log}"
    );
    assert!(
        logs.iter().any(|l| l.contains("model request")),
        "{logs:#?}"
    );
    for line in &logs {
        assert!(!line.contains(SECRET), "a log line carries the key: {line}");
    }
}

fn global_capture() -> Capture {
    static GLOBAL: std::sync::OnceLock<Capture> = std::sync::OnceLock::new();
    GLOBAL
        .get_or_init(|| {
            let capture = Capture::default();
            tracing::subscriber::set_global_default(capture.clone())
                .expect("no other test sets a global subscriber");
            capture
        })
        .clone()
}

async fn run_against_a_401() {
    let mock = MockProvider::openai()
        .require_api_key("sk-the-right-key")
        .reply(MockReply::text_reply("never"))
        .start()
        .await;
    let model = OpenAi::openrouter("x/y")
        .api_key(SECRET)
        .base_url(mock.base_url())
        .retry(fast_retry(&Notices::default()));
    let agent = Agent::builder()
        .model(model)
        .tool(route_tool())
        .build()
        .unwrap();
    let err = agent.send("go").await.err().unwrap();
    assert!(
        matches!(
            err,
            lousho::AgentError::Model(ModelError::Authentication { .. })
        ),
        "{err:?}"
    );
}
