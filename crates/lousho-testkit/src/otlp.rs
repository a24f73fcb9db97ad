//! An in-process OTLP/HTTP trace receiver: an axum endpoint on 127.0.0.1
//! that decodes `POST /v1/traces` (protobuf) with the official
//! `opentelemetry-proto` types and keeps every span, for tests to wait on.

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use prost::Message;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// One received span, flattened.
#[derive(Debug, Clone)]
pub struct ReceivedSpan {
    /// The resource's `service.name`.
    pub service: String,
    /// The span's name.
    pub name: String,
    /// Hex trace id.
    pub trace_id: String,
    /// Hex span id.
    pub span_id: String,
    /// Hex parent span id ("" for a root).
    pub parent_span_id: String,
    /// OTLP span kind (1 internal, 2 server, 3 client).
    pub kind: i32,
    /// OTLP status code (0 unset, 1 ok, 2 error).
    pub status_code: i32,
    /// The status message.
    pub status_message: String,
    /// Attributes by key.
    pub attributes: HashMap<String, any_value::Value>,
    /// Links: (trace id, span id), hex.
    pub links: Vec<(String, String)>,
}

impl ReceivedSpan {
    /// A string attribute.
    pub fn str(&self, key: &str) -> Option<&str> {
        match self.attributes.get(key)? {
            any_value::Value::StringValue(s) => Some(s),
            _ => None,
        }
    }

    /// An integer attribute.
    pub fn int(&self, key: &str) -> Option<i64> {
        match self.attributes.get(key)? {
            any_value::Value::IntValue(i) => Some(*i),
            _ => None,
        }
    }

    /// A float attribute.
    pub fn double(&self, key: &str) -> Option<f64> {
        match self.attributes.get(key)? {
            any_value::Value::DoubleValue(d) => Some(*d),
            _ => None,
        }
    }

    /// A string-array attribute.
    pub fn strings(&self, key: &str) -> Option<Vec<String>> {
        match self.attributes.get(key)? {
            any_value::Value::ArrayValue(a) => Some(
                a.values
                    .iter()
                    .filter_map(|v| match &v.value {
                        Some(any_value::Value::StringValue(s)) => Some(s.clone()),
                        _ => None,
                    })
                    .collect(),
            ),
            _ => None,
        }
    }
}

#[derive(Default)]
struct Shared {
    spans: Mutex<Vec<ReceivedSpan>>,
    arrived: Notify,
}

/// The receiver; stops when dropped.
pub struct TraceReceiver {
    endpoint: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TraceReceiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl TraceReceiver {
    /// Listens on 127.0.0.1 (a free port).
    pub async fn start() -> Self {
        let shared = Arc::new(Shared::default());
        let app = Router::new()
            .route("/v1/traces", post(export))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            endpoint,
            shared,
            task,
        }
    }

    /// The base URL for `OTEL_EXPORTER_OTLP_ENDPOINT` (`http://127.0.0.1:PORT`).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<ReceivedSpan> {
        self.shared.spans.lock().unwrap().clone()
    }

    /// Waits until `done` holds for the spans received (panics after `timeout`
    /// with what arrived).
    pub async fn wait_for(
        &self,
        timeout: Duration,
        done: impl Fn(&[ReceivedSpan]) -> bool,
    ) -> Vec<ReceivedSpan> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let arrived = self.shared.arrived.notified();
            tokio::pin!(arrived);
            arrived.as_mut().enable();
            let spans = self.spans();
            if done(&spans) {
                return spans;
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                let names: Vec<_> = spans.iter().map(|s| (&s.service, &s.name)).collect();
                panic!("the spans did not arrive within {timeout:?}; received: {names:?}");
            }
        }
    }
}

async fn export(State(shared): State<Arc<Shared>>, body: Bytes) -> impl IntoResponse {
    let Ok(request) = ExportTraceServiceRequest::decode(body) else {
        return (StatusCode::BAD_REQUEST, Vec::new()).into_response();
    };
    let mut received = Vec::new();
    for rs in request.resource_spans {
        let service = rs
            .resource
            .as_ref()
            .and_then(|r| {
                r.attributes
                    .iter()
                    .find(|kv| kv.key == "service.name")
                    .and_then(|kv| string(kv.value.as_ref()))
            })
            .unwrap_or_default();
        for ss in rs.scope_spans {
            for span in ss.spans {
                let status = span.status.unwrap_or_default();
                received.push(ReceivedSpan {
                    service: service.clone(),
                    name: span.name,
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: hex(&span.parent_span_id),
                    kind: span.kind,
                    status_code: status.code,
                    status_message: status.message,
                    attributes: attributes(span.attributes),
                    links: span
                        .links
                        .iter()
                        .map(|l| (hex(&l.trace_id), hex(&l.span_id)))
                        .collect(),
                });
            }
        }
    }
    shared.spans.lock().unwrap().extend(received);
    shared.arrived.notify_waiters();
    (
        [(header::CONTENT_TYPE, "application/x-protobuf")],
        ExportTraceServiceResponse::default().encode_to_vec(),
    )
        .into_response()
}

fn string(v: Option<&AnyValue>) -> Option<String> {
    match v?.value.as_ref()? {
        any_value::Value::StringValue(s) => Some(s.clone()),
        _ => None,
    }
}

fn attributes(kvs: Vec<KeyValue>) -> HashMap<String, any_value::Value> {
    kvs.into_iter()
        .filter_map(|kv| Some((kv.key, kv.value?.value?)))
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl std::fmt::Debug for TraceReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceReceiver")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}
