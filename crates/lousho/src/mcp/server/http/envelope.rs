//! The JSON-RPC envelope of a POST body, read before rmcp reads it: malformed
//! bodies get the JSON-RPC error the protocol names (`400` with `-32700` or
//! `-32600`, the request's id when it has a usable one, else `"id": null`)
//! instead of rmcp's `415`; a cancel notification names the call it cancels;
//! a `tools/call` names its id so a cancel can find it.

use super::super::cancel::{cancelled_request_id, request_id_string};
use super::super::recover_id::recover_id;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use rmcp::model::{CallToolRequestMethod, CancelledNotificationMethod, ConstString};
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

/// What the screen does with a body.
pub(crate) enum Envelope {
    /// Pass it on.
    Ok,
    /// A `tools/call` request with this id (as the cancel registry keys it),
    /// naming this tool (`params.name`, when it is a string).
    Call {
        /// The request's id, as the cancel registry keys it.
        id: String,
        /// The request's id as sent (for an answer the screen gives itself).
        rpc_id: Value,
        /// The tool it calls.
        tool: Option<String>,
        /// Whether it carries a `requestState`: the retry of an
        /// input-required round, which goes on with a call already started.
        resumes: bool,
    },
    /// A `notifications/cancelled` for the request with this id.
    Cancel(String),
    /// Answer with this instead.
    Bad(Response),
}

/// The JSON-RPC envelope of a POST body (strings borrowed from the body when
/// they hold no escapes).
#[derive(serde::Deserialize)]
struct RawEnvelope<'a> {
    #[serde(borrow)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    params: Option<Shape>,
    result: Option<IgnoredAny>,
    error: Option<IgnoredAny>,
}

/// `Some(Value::Null)` for an explicit `null` (a plain `Option` would make it `None`).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Whether a value is a JSON object, read without keeping it — except its
/// `name` when that is a string (a `tools/call`'s tool, which admission
/// needs) and whether it has a `requestState`, so the body is walked once.
struct Shape {
    object: bool,
    name: Option<String>,
    resumes: bool,
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Shape;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
                let (mut name, mut resumes) = (None, false);
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    if key == "name" {
                        name = map.next_value::<Value>()?.as_str().map(str::to_owned);
                    } else if key == "requestState" {
                        resumes = !map.next_value::<Value>()?.is_null();
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(Shape {
                    object: true,
                    name,
                    resumes,
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Shape {
                    object: false,
                    name: None,
                    resumes: false,
                })
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Shape, E> {
                Ok(Shape {
                    object: false,
                    name: None,
                    resumes: false,
                })
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Shape, E> {
                Ok(Shape {
                    object: false,
                    name: None,
                    resumes: false,
                })
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Shape, E> {
                Ok(Shape {
                    object: false,
                    name: None,
                    resumes: false,
                })
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Shape, E> {
                Ok(Shape {
                    object: false,
                    name: None,
                    resumes: false,
                })
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Shape, E> {
                Ok(Shape {
                    object: false,
                    name: None,
                    resumes: false,
                })
            }
            fn visit_unit<E: de::Error>(self) -> Result<Shape, E> {
                Ok(Shape {
                    object: false,
                    name: None,
                    resumes: false,
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// Checks a POST body's envelope.
pub(crate) fn check(body: &[u8]) -> Envelope {
    if std::str::from_utf8(body).is_err() {
        return Envelope::Bad(error(
            recover_id(body),
            -32700,
            "Parse error: the body is not valid UTF-8",
        ));
    }
    let parsed: RawEnvelope = match serde_json::from_slice(body) {
        Ok(e) => e,
        Err(e) if e.is_data() => {
            // Valid JSON of the wrong shape (an array, a string, …).
            return Envelope::Bad(error(
                None,
                -32600,
                "Invalid Request: send one JSON-RPC 2.0 message object",
            ));
        }
        Err(e) => {
            return Envelope::Bad(error(
                recover_id(body),
                -32700,
                &format!("Parse error: the body is not valid JSON ({e})"),
            ));
        }
    };
    let id = parsed.id.as_ref().filter(|v| is_usable_id(v)).cloned();
    if parsed.jsonrpc.as_deref() != Some("2.0")
        || (parsed.method.is_none() && parsed.result.is_none() && parsed.error.is_none())
    {
        return Envelope::Bad(error(
            id,
            -32600,
            "Invalid Request: not a JSON-RPC 2.0 message",
        ));
    }
    if parsed.id.is_some() && id.is_none() {
        return Envelope::Bad(error(
            None,
            -32600,
            "Invalid Request: `id` must be a string or an integer",
        ));
    }
    if parsed.params.as_ref().is_some_and(|p| !p.object) {
        return Envelope::Bad(error(
            id,
            -32600,
            "Invalid Request: `params` must be an object",
        ));
    }
    match parsed.method.as_deref() {
        // rmcp's own names for the two methods this layer looks at.
        Some(<CancelledNotificationMethod as ConstString>::VALUE) => {
            match cancelled_request_id(body) {
                Some(target) => Envelope::Cancel(target),
                None => Envelope::Ok,
            }
        }
        Some(<CallToolRequestMethod as ConstString>::VALUE) => match id
            .as_ref()
            .and_then(|v| request_id_string(v).map(|key| (key, v)))
        {
            Some((key, rpc_id)) => {
                let params = parsed.params;
                Envelope::Call {
                    id: key,
                    rpc_id: rpc_id.clone(),
                    resumes: params.as_ref().is_some_and(|p| p.resumes),
                    tool: params.and_then(|p| p.name),
                }
            }
            None => Envelope::Ok,
        },
        _ => Envelope::Ok,
    }
}

/// The answer to a body that passed [`check`] but that rmcp could not read
/// (it answered `415`): a lone surrogate, nesting past serde_json's depth
/// limit of 128, or a shape no MCP message has.
pub(crate) fn unreadable(body: &[u8]) -> Response {
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return error(
                recover_id(body),
                -32700,
                &format!("Parse error: the body is not valid JSON ({e})"),
            );
        }
    };
    let id = value.get("id").filter(|v| is_usable_id(v)).cloned();
    let reason = serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(value)
        .err()
        .map_or_else(|| "not an MCP message".to_owned(), |e| e.to_string());
    error(
        id,
        -32600,
        &format!("Invalid Request: not an MCP message ({reason})"),
    )
}

/// A JSON-RPC id rmcp accepts: a string, or an integer (also written `1.0`).
fn is_usable_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(n) => {
            n.is_i64()
                || n.as_f64()
                    .is_some_and(|f| f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0)
        }
        _ => false,
    }
}

/// A `400` carrying a JSON-RPC error.
pub(crate) fn error(id: Option<Value>, code: i64, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(Value::Null),
        "error": { "code": code, "message": message },
    });
    (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tool_name_is_read_from_a_call() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"x":[1,{"name":"no"}]},"name":"agent"}}"#;
        match check(body) {
            Envelope::Call {
                id,
                rpc_id,
                tool,
                resumes,
            } => {
                assert_eq!(id, request_id_string(&Value::from(1)).unwrap());
                assert_eq!(rpc_id, Value::from(1));
                assert_eq!(tool.as_deref(), Some("agent"));
                assert!(!resumes);
            }
            _ => panic!("a tools/call"),
        }
        let ping = br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
        assert!(matches!(check(ping), Envelope::Ok));
    }
}
