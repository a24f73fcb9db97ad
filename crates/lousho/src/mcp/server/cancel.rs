//! Cancellation by `notifications/cancelled` over stateless HTTP.
//!
//! Stateless Streamable HTTP has no session to route a cancel notification
//! to, and the official TypeScript and Python SDKs (protocol 2025-11-25)
//! cancel by POSTing one instead of dropping the request. So in-flight calls
//! register here under (principal, request id) — the principal is the
//! `Authorization` header (empty without auth) — and a cancel notification
//! cancels the call only when exactly one in-flight call matches, so two
//! clients that happen to use the same request id never cancel each other.

use crate::sync::MutexExt;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// Who sent an HTTP request: the `Authorization` header's value, or empty.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Principal(pub(crate) Arc<str>);

type Key = (Arc<str>, String);

/// In-flight HTTP calls that a cancel notification may cancel.
#[derive(Clone, Default)]
pub(crate) struct CancelRegistry {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    next: AtomicU64,
    calls: Mutex<HashMap<Key, Vec<(u64, CancellationToken)>>>,
}

/// Unregisters its call when dropped.
pub(crate) struct Registration {
    inner: Arc<Inner>,
    key: Key,
    serial: u64,
}

impl CancelRegistry {
    /// Registers a call; keep the registration alive while the call runs.
    pub(crate) fn register(
        &self,
        principal: &Principal,
        request_id: String,
        token: CancellationToken,
    ) -> Registration {
        let serial = self.inner.next.fetch_add(1, Ordering::Relaxed);
        let key = (principal.0.clone(), request_id);
        let mut calls = self.inner.calls.lock_unpoisoned();
        calls.entry(key.clone()).or_default().push((serial, token));
        Registration {
            inner: self.inner.clone(),
            key,
            serial,
        }
    }

    /// Cancels the one in-flight call `principal` made with `request_id`;
    /// returns whether one was cancelled.
    pub(crate) fn cancel(&self, principal: &Principal, request_id: String) -> bool {
        let calls = self.inner.calls.lock_unpoisoned();
        match calls
            .get(&(principal.0.clone(), request_id))
            .map(Vec::as_slice)
        {
            Some([(_, token)]) => {
                token.cancel();
                true
            }
            Some(more) if more.len() > 1 => {
                tracing::debug!(
                    "ambiguous cancel notification (several calls share the id); ignored"
                );
                false
            }
            _ => false,
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut calls = self.inner.calls.lock_unpoisoned();
        if let Some(list) = calls.get_mut(&self.key) {
            list.retain(|(s, _)| *s != self.serial);
            if list.is_empty() {
                calls.remove(&self.key);
            }
        }
    }
}

/// The request id a `notifications/cancelled` body names, if the body is one.
pub(crate) fn cancelled_request_id(body: &[u8]) -> Option<String> {
    const METHOD: &[u8] = b"notifications/cancelled";
    if !body.windows(METHOD.len()).any(|w| w == METHOD) {
        return None;
    }
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    if value.get("method")?.as_str()? != "notifications/cancelled" || value.get("id").is_some() {
        return None;
    }
    request_id_string(value.get("params")?.get("requestId")?)
}

/// A JSON-RPC id as the key string rmcp's `RequestId` displays (`5`, `abc`).
pub(crate) fn request_id_string(id: &serde_json::Value) -> Option<String> {
    match id {
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancels_only_an_unambiguous_call() {
        let reg = CancelRegistry::default();
        let alice = Principal("Bearer a".into());
        let t1 = CancellationToken::new();
        let r1 = reg.register(&alice, "5".into(), t1.clone());
        assert!(!reg.cancel(&Principal("Bearer b".into()), "5".into()));
        let t2 = CancellationToken::new();
        let r2 = reg.register(&alice, "5".into(), t2.clone());
        assert!(!reg.cancel(&alice, "5".into()));
        drop(r2);
        assert!(reg.cancel(&alice, "5".into()));
        assert!(t1.is_cancelled() && !t2.is_cancelled());
        drop(r1);
        assert!(!reg.cancel(&alice, "5".into()));
    }

    #[test]
    fn finds_the_request_id_of_a_cancel_notification() {
        let body = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"x"}}"#;
        assert_eq!(cancelled_request_id(body), Some("7".into()));
        let body =
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r-1"}}"#;
        assert_eq!(cancelled_request_id(body), Some("r-1".into()));
        assert_eq!(
            cancelled_request_id(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            None
        );
    }
}
