//! Elicitation: a server asks the user for input in the middle of a tool
//! call (`elicitation/create` with a message and a flat JSON schema).
//!
//! The client declares the `elicitation` capability (form mode) only when an
//! [`ElicitationHandler`] is set with
//! [`ConnectOptions::elicitation`](super::ConnectOptions::elicitation);
//! without one, servers are told nothing and may not ask.

use async_trait::async_trait;
use serde_json::{Map, Value};
use std::future::Future;

/// One `elicitation/create` request from a server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ElicitationRequest {
    /// The name of the server that asks (its key in `mcpServers`).
    pub server: String,
    /// What the server tells the user.
    pub message: String,
    /// The JSON schema of the answer: an object of flat properties (string,
    /// number, integer, boolean, enums), possibly with `default`s.
    pub requested_schema: Value,
    /// The property names in the server's order (a form asks them in this
    /// order; `requested_schema`'s map is sorted by name).
    pub property_order: Vec<String>,
}

impl ElicitationRequest {
    /// A request (for tests and custom transports).
    /// The properties are taken in the order `schema` lists them.
    pub fn new(server: impl Into<String>, message: impl Into<String>, schema: Value) -> Self {
        let property_order = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        Self {
            server: server.into(),
            message: message.into(),
            requested_schema: schema,
            property_order,
        }
    }

    /// Sets the order the properties are asked in (the server's).
    #[must_use]
    pub fn with_property_order(
        mut self,
        order: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.property_order = order.into_iter().map(Into::into).collect();
        self
    }

    /// The schema's defaults: each property that declares a `default`, with
    /// that value.
    pub fn defaults(&self) -> Map<String, Value> {
        let mut content = Map::new();
        fill_defaults(&self.requested_schema, &mut content);
        content
    }
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ElicitationResponse {
    /// The user submitted these values (keys are the schema's properties).
    Accept(Map<String, Value>),
    /// The user said no.
    Decline,
    /// The user dismissed the request without choosing.
    Cancel,
}

/// Answers servers' elicitation requests (a UI, a policy, a test double).
///
/// Any `Fn(ElicitationRequest) -> impl Future<Output = ElicitationResponse>`
/// closure is one. The call waits for the answer, so the tool call that
/// caused it waits too (its `callTimeoutMs` still applies).
///
/// ```
/// use lousho::mcp::ConnectOptions;
/// use lousho::mcp::{ElicitationRequest, ElicitationResponse};
/// // Accept every request with the schema's defaults (what a headless agent
/// // that trusts its servers might do); a UI would show `request.message`
/// // and a form built from `request.requested_schema`.
/// let options = ConnectOptions::default().elicitation(|request: ElicitationRequest| async move {
///     ElicitationResponse::Accept(request.defaults())
/// });
/// # let _ = options;
/// ```
#[async_trait]
pub trait ElicitationHandler: Send + Sync + 'static {
    /// Asks the user and returns their answer.
    async fn elicit(&self, request: ElicitationRequest) -> ElicitationResponse;
}

#[async_trait]
impl<F, Fut> ElicitationHandler for F
where
    F: Fn(ElicitationRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ElicitationResponse> + Send + 'static,
{
    async fn elicit(&self, request: ElicitationRequest) -> ElicitationResponse {
        self(request).await
    }
}

/// Fills in the schema's defaults (SEP-1034) for the properties `content`
/// does not have; values already there are kept.
///
/// ```
/// use lousho::mcp::fill_defaults;
/// use serde_json::{json, Map};
/// let schema = json!({"type": "object", "properties": {
///     "name": {"type": "string", "default": "John Doe"},
///     "age": {"type": "integer", "default": 30},
///     "email": {"type": "string"}
/// }});
/// let mut content = Map::new();
/// content.insert("age".into(), json!(41));
/// fill_defaults(&schema, &mut content);
/// assert_eq!(json!(content), json!({"name": "John Doe", "age": 41}));
/// ```
pub fn fill_defaults(schema: &Value, content: &mut Map<String, Value>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        if let Some(default) = property.get("default")
            && !content.contains_key(name)
        {
            content.insert(name.clone(), default.clone());
        }
    }
}
