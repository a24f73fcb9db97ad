//! Model errors keep their facts: the HTTP client's error is a real source,
//! and the API key never survives in what the provider sends back.

use super::providers_common::{SECRET, openai_at};
use futures::StreamExt;
use lousho::Model;
use lousho::model::{Anthropic, OpenAi};
use lousho::model::{ModelError, ModelRequest};
use lousho_testkit::mock_provider::{MockProvider, MockReply};

async fn first_error(model: &dyn Model) -> ModelError {
    let request = ModelRequest::new(vec![lousho::model::Message::user("hi")]);
    let mut stream = model.stream(&request);
    loop {
        match stream.next().await {
            Some(Err(e)) => return e,
            Some(Ok(_)) => {}
            None => panic!("the stream ended without an error"),
        }
    }
}

#[tokio::test]
async fn a_key_echoed_in_a_stream_error_event_is_scrubbed() {
    for anthropic in [false, true] {
        let echo = format!("the key {SECRET} was revoked");
        let reply = MockReply::new()
            .text("partial ")
            .stream_error("invalid_request_error", &echo);
        let mock = if anthropic {
            MockProvider::anthropic()
        } else {
            MockProvider::openai()
        }
        .reply(reply)
        .start()
        .await;
        let model: Box<dyn Model> = if anthropic {
            Box::new(
                Anthropic::builder("claude-test")
                    .api_key(SECRET)
                    .base_url(mock.base_url())
                    .build()
                    .unwrap(),
            )
        } else {
            Box::new(openai_at(&mock).build().unwrap())
        };
        let err = first_error(model.as_ref()).await;
        let (display, debug) = (err.to_string(), format!("{err:?}"));
        assert!(
            display.contains("the key [redacted] was revoked"),
            "{display}"
        );
        assert!(
            !display.contains(SECRET) && !debug.contains(SECRET),
            "{debug}"
        );
    }
}

#[tokio::test]
async fn a_network_error_keeps_the_http_clients_error_as_its_source() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let model = OpenAi::builder("gpt-test")
        .api_key(SECRET)
        .base_url(format!("http://127.0.0.1:{port}/v1"))
        .retry(lousho::model::RetryPolicy::none())
        .build()
        .unwrap();
    let err = first_error(&model).await;
    assert!(matches!(err, ModelError::Network { .. }), "{err:?}");
    let source = std::error::Error::source(&err).expect("a source");
    assert!(
        source.downcast_ref::<reqwest::Error>().is_some(),
        "{source:?}"
    );
    assert!(err.to_string().contains("network error"), "{err}");
}
