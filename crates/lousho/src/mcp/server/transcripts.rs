//! A session store's conversations served as resources
//! ([`ServeOptions::session_transcripts`](super::ServeOptions::session_transcripts);
//! spec: `serve.resources: [sessions]`): `lousho://sessions` lists them
//! (JSON: id, message count, last update), `lousho://sessions/{id}` is one
//! transcript (JSON: the messages, oldest first), its `id` completed from
//! the store. With OAuth, each caller lists, reads and completes only its
//! own sessions (the store as [`caller_store`](super::caller_store) sees it).

use super::caller_store::{CallerKey, for_key};
use super::completion::CompletionRequest;
use super::resources::{
    DefinedResource, DefinedResourceTemplate, ResourceContent, ResourceError, define_resource,
    define_resource_template,
};
use crate::session::{SessionStore, StoreError};
use crate::tool::ToolContext;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::UNIX_EPOCH;

/// The URI of the list of sessions.
pub(crate) const SESSIONS_URI: &str = "lousho://sessions";

/// The URI template of one session's transcript.
pub(crate) const SESSION_URI_TEMPLATE: &str = "lousho://sessions/{id}";

#[derive(Deserialize)]
struct Session {
    id: String,
}

fn failed(e: &StoreError) -> ResourceError {
    ResourceError::Failed(format!("the session store failed: {e}"))
}

fn millis(t: std::time::SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The list resource and the transcript template over `store`.
pub(crate) fn offers(store: Arc<dyn SessionStore>) -> (DefinedResource, DefinedResourceTemplate) {
    let list = {
        let store = store.clone();
        define_resource(SESSIONS_URI, "sessions", move |ctx: ToolContext| {
            let store = for_key(store.clone(), ctx.caller.get::<CallerKey>());
            async move {
                let all = store.list().await.map_err(|e| failed(&e))?;
                let rows: Vec<Value> = all
                    .iter()
                    .map(|s| {
                        json!({
                            "id": s.id,
                            "uri": format!("{SESSIONS_URI}/{}", s.id),
                            "messages": s.version,
                            "updatedAtMs": millis(s.updated_at),
                        })
                    })
                    .collect();
                Ok::<_, ResourceError>(
                    ResourceContent::text(json!({ "sessions": rows }).to_string())
                        .with_mime_type("application/json"),
                )
            }
        })
        .title("Sessions")
        .description("The conversations in the session store, most recently updated first")
        .mime_type("application/json")
    };
    let completer_store = store.clone();
    let one = define_resource_template(
        SESSION_URI_TEMPLATE,
        "session",
        move |s: Session, ctx: ToolContext| {
            let store = for_key(store.clone(), ctx.caller.get::<CallerKey>());
            async move {
                let uri = format!("{SESSIONS_URI}/{}", s.id);
                let found = store.load(&s.id).await.map_err(|e| match e {
                    StoreError::InvalidId { .. } => ResourceError::NotFound { uri: uri.clone() },
                    other => failed(&other),
                })?;
                let Some(session) = found else {
                    return Err(ResourceError::NotFound { uri });
                };
                let messages = serde_json::to_value(&session.messages)
                    .map_err(|e| ResourceError::Failed(e.to_string()))?;
                Ok(ResourceContent::text(
                    json!({
                        "session": session.info.id,
                        "version": session.info.version,
                        "messages": messages,
                    })
                    .to_string(),
                )
                .with_mime_type("application/json"))
            }
        },
    )
    .title("Session transcript")
    .description("One conversation of the session store: its messages, oldest first")
    .mime_type("application/json")
    .complete(move |r: CompletionRequest| {
        let store = for_key(completer_store.clone(), r.caller.as_ref());
        async move {
            store
                .list()
                .await
                .unwrap_or_default()
                .into_iter()
                .map(|s| s.id)
                .filter(|id| id.starts_with(&r.value))
                .collect()
        }
    });
    (list, one)
}
