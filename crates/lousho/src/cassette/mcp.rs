//! The MCP side: rmcp still speaks JSON-RPC; a cassette plugs in at its
//! `Transport` extension point. [`Recorded`] wraps the real transport
//! (stdio, Streamable HTTP) and keeps each request with its answer;
//! [`Replaying`] answers from the cassette, with no process spawned and no
//! socket opened. Requests are matched per server by method and parameters
//! (`_meta` left out; ids renumbered), not by raw id.

mod recording;
mod replaying;

pub(crate) use recording::Recorded;
pub(crate) use replaying::Replaying;

use super::Cassette;
use super::Matching;
use super::diff::diff;
use super::error::CassetteError;
use super::file::{Entry, McpExchange};
use super::replay::{Item, Tape};
use serde_json::Value;

/// What a replayed MCP request is answered with.
pub(crate) struct McpAnswer {
    /// The recorded exchange (its result or error, its notifications).
    pub(crate) exchange: McpExchange,
    /// Notices the server sent after it, before its next answer.
    pub(crate) notices: Vec<Value>,
}

/// An MCP request's parameters as matched: `_meta` (progress tokens, trace
/// context) left out.
pub(crate) fn key(params: &Value) -> Value {
    match params {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "_meta")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

impl Cassette {
    /// Replaying: the recorded answer to `server`'s request `method` with
    /// `params`.
    pub(crate) fn answer_mcp(
        &self,
        server: &str,
        method: &str,
        params: &Value,
    ) -> Result<McpAnswer, CassetteError> {
        let params = self.redacted(key(params));
        let mut state = self.lock();
        match answer(
            &mut state.tape,
            server,
            method,
            &params,
            self.inner.matching,
        ) {
            Ok(answer) => {
                state.summary.count(&Entry::Mcp(answer.exchange.clone()));
                Ok(answer)
            }
            Err(e) => {
                state.tape.note(&e);
                Err(e)
            }
        }
    }

    /// Adds secrets to redact: an MCP server's environment values
    /// (`values`) and header values (`headers`: `Bearer <token>` redacts
    /// the token alone too).
    pub(crate) fn add_secrets(&self, values: Vec<String>, headers: Vec<String>) {
        let mut state = self.lock();
        for v in values {
            state.redaction.add_value(v);
        }
        for h in headers {
            state.redaction.add_header_value(&h);
        }
    }
}

/// The first unused recorded exchange of `server` that `method` with
/// `params` matches, and the notices recorded after it.
fn answer(
    tape: &mut Tape,
    server: &str,
    method: &str,
    params: &Value,
    matching: Matching,
) -> Result<McpAnswer, CassetteError> {
    let what = format!("MCP server `{server}`: {method}");
    let items = tape.servers.entry(server.to_owned()).or_default();
    fn unused<'a>(item: &'a Item, method: &str) -> Option<&'a McpExchange> {
        match item {
            Item::Exchange { exchange, used } if !used && exchange.method == method => {
                Some(exchange)
            }
            _ => None,
        }
    }
    // `initialize` carries the client's name and version: the method is enough.
    let exact = items.iter().position(|item| {
        unused(item, method).is_some_and(|e| method == "initialize" || key(&e.params) == *params)
    });
    let first = items.iter().position(|item| unused(item, method).is_some());
    let at = match (exact, first) {
        (Some(at), _) => at,
        (None, Some(at)) if matching == Matching::InOrder => at,
        (None, Some(at)) => {
            let recorded = unused(&items[at], method).map(|e| key(&e.params));
            return Err(CassetteError::Mismatch {
                what: format!("{what} (the next recorded one)"),
                diff: diff(&recorded.unwrap_or_default(), params),
            });
        }
        (None, None) => {
            let recorded = items
                .iter()
                .filter(
                    |i| matches!(i, Item::Exchange { exchange, .. } if exchange.method == method),
                )
                .count();
            return Err(CassetteError::Exhausted { what, recorded });
        }
    };
    let Item::Exchange { exchange, used } = &mut items[at] else {
        return Err(CassetteError::Exhausted { what, recorded: 0 });
    };
    *used = true;
    let exchange = McpExchange::clone(exchange);
    let mut notices = Vec::new();
    for item in &mut items[at + 1..] {
        match item {
            Item::Notice { message, sent } if !*sent => {
                *sent = true;
                notices.push(message.clone());
            }
            Item::Notice { .. } => {}
            Item::Exchange { .. } => break,
        }
    }
    Ok(McpAnswer { exchange, notices })
}
