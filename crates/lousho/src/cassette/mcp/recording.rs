//! Recording: the real transport, with each request kept until its answer
//! comes, then written to the cassette with it.

use super::key;
use crate::cassette::Cassette;
use crate::cassette::file::{Entry, McpExchange, McpNotice};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use std::collections::HashMap;
use std::future::Future;
use std::time::Instant;

/// A transport whose traffic is recorded into a cassette (when given one
/// that records; otherwise it only passes messages on).
pub(crate) struct Recorded<T> {
    inner: T,
    recorder: Option<Recorder>,
}

struct Recorder {
    cassette: Cassette,
    server: String,
    /// Requests sent and not answered yet, by id (as JSON text).
    pending: HashMap<String, Pending>,
}

struct Pending {
    method: String,
    params: Value,
    /// The request's progress token, to attach its progress notifications.
    progress_token: Option<Value>,
    started: Instant,
    notifications: Vec<Value>,
}

impl<T> Recorded<T> {
    /// `inner`, recorded as `server`'s into `cassette` when it records.
    pub(crate) fn new(inner: T, cassette: Option<&Cassette>, server: &str) -> Self {
        let recorder = cassette
            .filter(|c| !c.is_replaying())
            .map(|cassette| Recorder {
                cassette: cassette.clone(),
                server: server.to_owned(),
                pending: HashMap::new(),
            });
        Self { inner, recorder }
    }
}

impl Recorder {
    fn sent(&mut self, message: &TxJsonRpcMessage<RoleClient>) {
        let Ok(v) = serde_json::to_value(message) else {
            return;
        };
        let (Some(id), Some(method)) = (v.get("id"), v.get("method").and_then(Value::as_str))
        else {
            return;
        };
        let params = v.get("params").cloned().unwrap_or(Value::Null);
        self.pending.insert(
            id.to_string(),
            Pending {
                method: method.to_owned(),
                progress_token: params.pointer("/_meta/progressToken").cloned(),
                params: key(&params),
                started: Instant::now(),
                notifications: Vec::new(),
            },
        );
    }

    fn received(&mut self, message: &RxJsonRpcMessage<RoleClient>) {
        let Ok(mut v) = serde_json::to_value(message) else {
            return;
        };
        let id = v.get("id").map(Value::to_string);
        let is_answer = v.get("result").is_some() || v.get("error").is_some();
        match id {
            Some(id) if is_answer => {
                let Some(pending) = self.pending.remove(&id) else {
                    return;
                };
                let ms = u64::try_from(pending.started.elapsed().as_millis()).unwrap_or(u64::MAX);
                self.cassette.push(Entry::Mcp(McpExchange {
                    server: self.server.clone(),
                    method: pending.method,
                    params: pending.params,
                    result: v.get_mut("result").map(Value::take),
                    error: v.get_mut("error").map(Value::take),
                    notifications: pending.notifications,
                    ms,
                }));
            }
            // A request from the server (elicitation, sampling, roots):
            // not replayed.
            Some(_) => {}
            None => {
                let token = v.pointer("/params/progressToken").cloned();
                let owner = token.and_then(|t| {
                    self.pending
                        .values_mut()
                        .find(|p| p.progress_token.as_ref() == Some(&t))
                });
                match owner {
                    Some(pending) => pending.notifications.push(v),
                    None => self.cassette.push(Entry::McpNotification(McpNotice {
                        server: self.server.clone(),
                        message: v,
                    })),
                }
            }
        }
    }
}

impl<T> Transport<RoleClient> for Recorded<T>
where
    T: Transport<RoleClient>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let Some(recorder) = &mut self.recorder {
            recorder.sent(&item);
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await;
        if let (Some(recorder), Some(message)) = (&mut self.recorder, &message) {
            recorder.received(message);
        }
        message
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}
