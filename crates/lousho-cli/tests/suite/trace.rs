//! `lousho run` exports its spans when OTEL_EXPORTER_OTLP_ENDPOINT or the
//! spec's `telemetry.endpoint` says where (an in-process OTLP receiver here).

use super::common::{lousho, spec_file, stderr, stdout};
use lousho_testkit::otlp::{ReceivedSpan, TraceReceiver};
use std::time::Duration;

fn has(spans: &[ReceivedSpan], service: &str, prefix: &str) -> bool {
    spans
        .iter()
        .any(|s| s.service == service && s.name.starts_with(prefix))
}

#[tokio::test]
async fn the_environment_turns_export_on_and_names_the_service() {
    let receiver = TraceReceiver::start().await;
    let (_dir, spec) = spec_file("echo.yaml", "name: echo\nmodel: test\n");
    let endpoint = receiver.endpoint().to_owned();
    let out = tokio::task::spawn_blocking(move || {
        lousho()
            .args(["run", &spec, "hello"])
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
            .env("OTEL_SERVICE_NAME", "from-env")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "You said: hello\n");
    let spans = receiver
        .wait_for(Duration::from_secs(60), |s| {
            has(s, "from-env", "invoke_agent echo") && has(s, "from-env", "chat test")
        })
        .await;
    let run = spans
        .iter()
        .find(|s| s.name == "invoke_agent echo")
        .unwrap();
    assert_eq!(run.str("lousho.run.status"), Some("completed"));
}

#[tokio::test]
async fn a_specs_telemetry_endpoint_turns_export_on() {
    let receiver = TraceReceiver::start().await;
    let (_dir, spec) = spec_file(
        "echo.yaml",
        &format!(
            "name: echo\nmodel: test\ntelemetry:\n  endpoint: {}\n  serviceName: from-spec\n",
            receiver.endpoint()
        ),
    );
    let out = tokio::task::spawn_blocking(move || {
        lousho()
            .args(["run", &spec, "hello"])
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .env_remove("OTEL_SERVICE_NAME")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    receiver
        .wait_for(Duration::from_secs(60), |s| {
            has(s, "from-spec", "invoke_agent echo")
        })
        .await;
}
