//! Elicitation: a server asks the user for input in the middle of a tool
//! call (`elicitation/create` with a message and a flat JSON schema).
//!
//! The client declares the `elicitation` capability (form mode) only when an
//! [`ElicitationHandler`] is set with
//! [`ConnectOptions::elicitation`](super::ConnectOptions::elicitation);
//! without one, servers are told nothing and may not ask. URL mode (a
//! server sends the user to a web page, e.g. to sign in) is declared only
//! when the handler says it shows URLs
//! ([`ElicitationHandler::handles_urls`]); such a request comes with
//! [`ElicitationKind::Url`] and must never be accepted without asking the
//! user.

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
    /// A form, or a page to send the user to.
    pub kind: ElicitationKind,
}

/// What an elicitation asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ElicitationKind {
    /// Values for a form (`requested_schema`).
    Form,
    /// That the user opens `url` (out of band: nothing they enter there
    /// passes through the client). Accepting means the user agreed to go;
    /// never accept without asking them.
    Url {
        /// The page (show it in full, so the user sees where it leads).
        url: String,
        /// The server's id of this elicitation.
        elicitation_id: String,
    },
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
            kind: ElicitationKind::Form,
        }
    }

    /// A URL-mode request: `message` says why the user should open `url`.
    pub fn url(
        server: impl Into<String>,
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Self {
        Self {
            server: server.into(),
            message: message.into(),
            requested_schema: Value::Null,
            property_order: Vec::new(),
            kind: ElicitationKind::Url {
                url: url.into(),
                elicitation_id: elicitation_id.into(),
            },
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

    /// Whether it shows URL-mode requests ([`ElicitationKind::Url`]) to the
    /// user (default false: the client does not declare URL mode, and such
    /// requests are declined without reaching it). Closures are form-only.
    fn handles_urls(&self) -> bool {
        false
    }
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
