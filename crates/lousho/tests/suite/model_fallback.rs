//! Model lists (`AgentBuilder::models`): failover from a rate-limited, an
//! overloaded or a context-exhausted provider to the next, against the
//! wire-faithful mocks over loopback HTTP; errors that do not fail over.

use super::providers_common::{SECRET, openai_at};
use futures::StreamExt;
use lousho::model::{Anthropic, AnthropicBuilder, ModelError, OpenAi, RetryPolicy};
use lousho::{Agent, AgentError, AgentEvent, Reply};
use lousho_testkit::mock_provider::{MockProvider, MockReply};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

fn anthropic(mock: &MockProvider) -> AnthropicBuilder {
    Anthropic::builder("claude-test")
        .api_key(SECRET)
        .base_url(mock.base_url())
}

/// Runs `agent` on "hi": its events (text deltas aside) and its result.
async fn run(agent: &Agent) -> (Vec<AgentEvent>, Result<Reply, AgentError>) {
    let mut stream = agent.send("hi").stream();
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        match event {
            Ok(AgentEvent::Done(reply)) => return (events, Ok(*reply)),
            Ok(AgentEvent::TextDelta(_)) => {}
            Ok(event) => events.push(event),
            Err(e) => return (events, Err(e)),
        }
    }
    panic!("the run ended without a reply");
}

fn failovers(events: &[AgentEvent]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ModelFailover { from, to, .. } => Some((from.clone(), to.clone())),
            _ => None,
        })
        .collect()
}

/// A retry policy that would make a retried 429 (`retry-after: 30`) take
/// 30 s: a test that passes quickly shows the failover did not wait for it.
fn patient() -> RetryPolicy {
    RetryPolicy::default().max_retries(3)
}

#[tokio::test]
async fn a_rate_limited_provider_fails_over_at_once_and_the_reply_names_the_answering_model() {
    let limited = MockProvider::anthropic()
        .reply(MockReply::rate_limited(30))
        .start()
        .await;
    let backup = MockProvider::openai()
        .reply(MockReply::text_reply("from the backup").usage(10, 3))
        .start()
        .await;
    let agent = Agent::builder()
        .model(anthropic(&limited).retry(patient()))
        .fallback_model(openai_at(&backup))
        .build()
        .unwrap();
    let (events, reply) = tokio::time::timeout(Duration::from_secs(20), run(&agent))
        .await
        .expect("a rate limit fails over without waiting for its retry-after");
    let reply = reply.unwrap();
    assert_eq!(reply.text, "from the backup");
    assert_eq!(reply.model.as_deref(), Some("openai/gpt-test"));
    assert_eq!(reply.requests.len(), 1);
    assert_eq!(reply.requests[0].model, "openai/gpt-test");
    assert_eq!(
        failovers(&events),
        [(
            "anthropic/claude-test".to_owned(),
            "openai/gpt-test".to_owned()
        )]
    );
    assert_eq!(limited.requests().len(), 1, "not retried");
    assert_eq!(backup.requests().len(), 1);
}

#[tokio::test]
async fn an_overloaded_provider_fails_over_at_once_from_a_529_and_from_an_error_event() {
    for in_stream in [false, true] {
        let reply = if in_stream {
            // Anthropic's overload after the 200: an `error` event first.
            MockReply::new().stream_error("overloaded_error", "Overloaded")
        } else {
            MockReply::overloaded()
        };
        let overloaded = MockProvider::anthropic().reply(reply).start().await;
        let backup = MockProvider::anthropic()
            .reply(MockReply::text_reply("second model"))
            .start()
            .await;
        let agent = Agent::builder()
            .model(anthropic(&overloaded).retry(patient()))
            .fallback_model(
                Anthropic::builder("claude-backup")
                    .api_key(SECRET)
                    .base_url(backup.base_url()),
            )
            .build()
            .unwrap();
        let (events, reply) = run(&agent).await;
        let reply = reply.unwrap();
        assert_eq!(reply.text, "second model");
        assert_eq!(reply.model.as_deref(), Some("anthropic/claude-backup"));
        assert_eq!(failovers(&events).len(), 1, "{events:?}");
        assert_eq!(overloaded.requests().len(), 1, "not retried ({in_stream})");
    }
}

#[tokio::test]
async fn a_context_length_error_fails_over_at_once() {
    for anthropic_first in [true, false] {
        let small = if anthropic_first {
            MockProvider::anthropic()
        } else {
            MockProvider::openai()
        }
        .reply(MockReply::context_too_long())
        .start()
        .await;
        let large = MockProvider::openai()
            .reply(MockReply::text_reply("a longer context"))
            .start()
            .await;
        let first: lousho::model::ModelRef = if anthropic_first {
            anthropic(&small).into()
        } else {
            OpenAi::builder("gpt-small")
                .api_key(SECRET)
                .base_url(small.base_url())
                .into()
        };
        let agent = Agent::builder()
            .models([first, openai_at(&large).into()])
            .build()
            .unwrap();
        let (events, reply) = run(&agent).await;
        assert_eq!(reply.unwrap().text, "a longer context");
        let reason = events.iter().find_map(|e| match e {
            AgentEvent::ModelFailover { reason, .. } => Some(reason.clone()),
            _ => None,
        });
        assert!(
            reason.is_some_and(|r| r.contains("context length exceeded")),
            "{events:?}"
        );
        assert_eq!(small.requests().len(), 1);
    }
}

#[tokio::test]
async fn authentication_and_bad_requests_do_not_fail_over_and_say_so() {
    let cases = [
        MockReply::error(401, "authentication_error", "invalid x-api-key"),
        MockReply::error(400, "invalid_request_error", "messages: field required"),
    ];
    for reply in cases {
        let failing = MockProvider::anthropic().reply(reply).start().await;
        let backup = MockProvider::openai()
            .reply(MockReply::text_reply("never asked"))
            .start()
            .await;
        let agent = Agent::builder()
            .model(anthropic(&failing))
            .fallback_model(openai_at(&backup))
            .build()
            .unwrap();
        let (events, result) = run(&agent).await;
        let err = result.unwrap_err();
        match &err {
            AgentError::NotFailedOver {
                model,
                next,
                source,
            } => {
                assert_eq!(model, "anthropic/claude-test");
                assert_eq!(next, "openai/gpt-test");
                assert!(
                    matches!(
                        source,
                        ModelError::Authentication { .. } | ModelError::BadRequest { .. }
                    ),
                    "{source:?}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(
            err.to_string()
                .contains("not failed over to openai/gpt-test")
        );
        assert!(failovers(&events).is_empty());
        assert!(backup.requests().is_empty(), "the next model was asked");
    }
}

#[tokio::test]
async fn server_errors_fail_over_once_the_retries_gave_up_and_every_failure_is_listed() {
    let flaky = MockProvider::openai()
        .replies((0..2).map(|_| MockReply::error(500, "server_error", "boom")))
        .start()
        .await;
    let limited = MockProvider::anthropic()
        .reply(MockReply::rate_limited(1))
        .start()
        .await;
    let fast = RetryPolicy::default()
        .max_retries(1)
        .initial_delay(Duration::from_millis(1))
        .max_delay(Duration::from_millis(2));
    let agent = Agent::builder()
        .model(openai_at(&flaky).retry(fast))
        .fallback_model(anthropic(&limited).retry(RetryPolicy::none()))
        .build()
        .unwrap();
    let (events, result) = run(&agent).await;
    assert_eq!(flaky.requests().len(), 2, "retried once, then failed over");
    assert_eq!(failovers(&events).len(), 1);
    match result.unwrap_err() {
        AgentError::ModelsFailed { failures } => {
            let models: Vec<&str> = failures.iter().map(|(m, _)| m.as_str()).collect();
            assert_eq!(models, ["openai/gpt-test", "anthropic/claude-test"]);
            assert!(matches!(
                failures[0].1,
                ModelError::Server { status: 500, .. }
            ));
            assert!(matches!(failures[1].1, ModelError::RateLimited { .. }));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_turn_whose_text_reached_the_caller_does_not_fail_over() {
    let breaking = MockProvider::anthropic()
        .reply(
            MockReply::new()
                .text("partial ")
                .stream_error("overloaded_error", "Overloaded"),
        )
        .start()
        .await;
    let backup = MockProvider::openai()
        .reply(MockReply::text_reply("never asked"))
        .start()
        .await;
    let agent = Agent::builder()
        .model(anthropic(&breaking))
        .fallback_model(openai_at(&backup))
        .build()
        .unwrap();
    let (_, result) = run(&agent).await;
    assert!(
        matches!(
            result,
            Err(AgentError::Model(ModelError::Overloaded { .. }))
        ),
        "{result:?}"
    );
    assert!(backup.requests().is_empty());
}

#[cfg(feature = "spec")]
#[test]
fn a_spec_takes_a_model_list_and_a_single_model() {
    let reader = lousho::spec::SpecLoader::new();
    let spec = reader
        .parse("model: [test/first, test/second]\n", "agent.yaml")
        .unwrap();
    assert_eq!(spec.model.as_deref(), Some("test/first"));
    assert_eq!(spec.fallback_models, ["test/second"]);
    let agent = spec.agent_builder().unwrap().build().unwrap();
    assert_eq!(agent.model_name(), "test/first");
    assert_eq!(agent.fallback_model_names(), ["test/second"]);

    let one = reader.parse("model: test\n", "agent.yaml").unwrap();
    assert!(one.fallback_models.is_empty());

    let bad = reader
        .parse("model: [test, nope/x]\n", "agent.yaml")
        .unwrap_err();
    assert!(bad.to_string().contains("model[1]"), "{bad}");
    let empty = reader.parse("model: []\n", "agent.yaml").unwrap_err();
    assert!(empty.to_string().contains("empty"), "{empty}");
}

/// The values of the `gen_ai.*model` fields of every `chat` and
/// `invoke_agent` span, by span name, in creation order.
#[derive(Clone, Default)]
struct ModelFields(Arc<Mutex<Vec<SpanFields>>>);

/// A span's name and its `*.model` fields.
type SpanFields = (String, HashMap<String, String>);

struct Visitor<'a>(&'a mut HashMap<String, String>);

impl tracing::field::Visit for Visitor<'_> {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name().ends_with(".model") {
            self.0.insert(field.name().to_owned(), value.to_owned());
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name().ends_with(".model") {
            self.0.insert(
                field.name().to_owned(),
                format!("{value:?}").replace('"', ""),
            );
        }
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for ModelFields {
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        ctx: Context<'_, S>,
    ) {
        let mut fields = HashMap::new();
        attrs.record(&mut Visitor(&mut fields));
        let mut spans = self.0.lock().unwrap();
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(spans.len());
        }
        spans.push((attrs.metadata().name().to_owned(), fields));
    }

    fn on_record(
        &self,
        id: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        ctx: Context<'_, S>,
    ) {
        let Some(index) = ctx
            .span(id)
            .and_then(|s| s.extensions().get::<usize>().copied())
        else {
            return;
        };
        let mut spans = self.0.lock().unwrap();
        values.record(&mut Visitor(&mut spans[index].1));
    }
}

#[tokio::test(flavor = "current_thread")]
async fn the_spans_name_the_model_asked_and_the_model_that_answered() {
    let limited = MockProvider::anthropic()
        .reply(MockReply::rate_limited(30))
        .start()
        .await;
    let backup = MockProvider::openai()
        .reply(MockReply::text_reply("answered"))
        .start()
        .await;
    let agent = Agent::builder()
        .model(anthropic(&limited))
        .fallback_model(openai_at(&backup))
        .build()
        .unwrap();
    let fields = ModelFields::default();
    let subscriber = tracing_subscriber::registry().with(fields.clone());
    // The run's task runs on this (current) thread, under this subscriber.
    let _guard = tracing::subscriber::set_default(subscriber);
    let (_, reply) = run(&agent).await;
    assert_eq!(reply.unwrap().text, "answered");
    let spans = fields.0.lock().unwrap().clone();
    let chats: Vec<&HashMap<String, String>> = spans
        .iter()
        .filter(|(name, _)| name == "chat")
        .map(|(_, f)| f)
        .collect();
    assert_eq!(chats.len(), 2, "{spans:?}");
    let get = |f: &HashMap<String, String>, k: &str| f.get(k).cloned();
    assert_eq!(
        get(chats[0], "gen_ai.request.model").as_deref(),
        Some("claude-test")
    );
    assert_eq!(get(chats[0], "gen_ai.response.model"), None, "it failed");
    assert_eq!(
        get(chats[1], "gen_ai.request.model").as_deref(),
        Some("gpt-test")
    );
    assert_eq!(
        get(chats[1], "gen_ai.response.model").as_deref(),
        Some("gpt-test")
    );
    let run_span = spans
        .iter()
        .find(|(name, _)| name == "invoke_agent")
        .map(|(_, f)| f)
        .expect("the run's span");
    assert_eq!(
        get(run_span, "gen_ai.request.model").as_deref(),
        Some("claude-test")
    );
    assert_eq!(
        get(run_span, "gen_ai.response.model").as_deref(),
        Some("gpt-test")
    );
}
