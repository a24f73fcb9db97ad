//! The client-side rate limiter (`RateLimits`) against the wire-faithful
//! mocks over loopback HTTP: a burst of runs of two agents sharing one
//! account is held to the configured rate. Counted in requests admitted
//! before the throttle events, never in wall time.

use super::providers_common::{SECRET, openai_at};
use futures::StreamExt;
use lousho::model::{Anthropic, RateLimits};
use lousho::{Agent, AgentEvent};
use lousho_testkit::mock_provider::{MockProvider, MockReply};

#[tokio::test]
async fn a_burst_of_two_agents_on_one_account_is_held_to_the_requests_per_minute() {
    for anthropic in [false, true] {
        let mock = if anthropic {
            MockProvider::anthropic()
        } else {
            MockProvider::openai()
        }
        .replies((0..6).map(|_| MockReply::text_reply("ok").usage(5, 1)))
        .start()
        .await;
        let limits = RateLimits::new().requests_per_minute(2);
        // Two agents, built apart, on the same provider, URL and key.
        let agent = || {
            let builder = Agent::builder();
            let builder = if anthropic {
                builder.model(
                    Anthropic::builder("claude-test")
                        .api_key(SECRET)
                        .base_url(mock.base_url())
                        .rate_limits(limits),
                )
            } else {
                builder.model(openai_at(&mock).rate_limits(limits))
            };
            builder.build().unwrap()
        };
        let (a, b) = (agent(), agent());
        let runs = vec![
            a.send("1").stream(),
            a.send("2").stream(),
            b.send("3").stream(),
            b.send("4").stream(),
        ];
        let mut events = futures::stream::select_all(runs);
        let (mut done, mut throttled) = (0, 0);
        while done < 2 || throttled < 2 {
            match events.next().await.expect("the runs go on").unwrap() {
                AgentEvent::Done(reply) => {
                    assert_eq!(reply.text, "ok");
                    done += 1;
                }
                AgentEvent::Throttled { model, wait } => {
                    assert!(model.ends_with("-test"), "{model}");
                    // One request comes back every 30 s.
                    assert!(wait.as_secs() >= 1, "{wait:?}");
                    throttled += 1;
                }
                _ => {}
            }
        }
        assert_eq!(done, 2, "two requests per minute");
        assert_eq!(mock.requests().len(), 2, "the throttled runs sent nothing");
        // Dropping the waiting runs cancels them: nothing more is sent.
        drop(events);
        assert_eq!(mock.requests().len(), 2);
    }
}

#[tokio::test]
async fn a_limiter_does_not_slow_requests_within_the_rate() {
    let mock = MockProvider::openai()
        .replies((0..3).map(|_| MockReply::text_reply("ok").usage(5, 1)))
        .start()
        .await;
    let agent = Agent::builder()
        .model(
            openai_at(&mock).rate_limits(
                RateLimits::new()
                    .requests_per_minute(100)
                    .tokens_per_minute(100_000),
            ),
        )
        .build()
        .unwrap();
    for _ in 0..3 {
        let mut stream = agent.send("hi").stream();
        while let Some(event) = stream.next().await {
            assert!(
                !matches!(event, Ok(AgentEvent::Throttled { .. })),
                "{event:?}"
            );
        }
    }
    assert_eq!(mock.requests().len(), 3);
}

#[cfg(feature = "spec")]
#[test]
fn a_spec_sets_limits_by_provider() {
    let loader = lousho::spec::SpecLoader::new();
    let spec = loader
        .parse(
            "model: [test, openai/gpt-4o-mini]\nmodelOptions:\n  limits:\n    openai: { rpm: 60, tpm: 90000 }\n",
            "agent.yaml",
        )
        .unwrap();
    assert_eq!(
        spec.rate_limits.get("openai"),
        Some(
            &RateLimits::new()
                .requests_per_minute(60)
                .tokens_per_minute(90_000)
        )
    );
    let bad = loader
        .parse(
            "model: test\nmodelOptions:\n  limits:\n    opnai: { rpm: 1 }\n",
            "agent.yaml",
        )
        .unwrap_err();
    assert!(bad.to_string().contains("did you mean `openai`"), "{bad}");
    let zero = loader
        .parse(
            "model: test\nmodelOptions:\n  limits:\n    openai: { rpm: 0 }\n",
            "agent.yaml",
        )
        .unwrap_err();
    assert!(zero.to_string().contains("at least 1"), "{zero}");
}
