//! Our rmcp `ClientHandler`: identifies lousho, turns
//! `notifications/tools/list_changed` (and the resource and prompt ones)
//! into refresh signals, `notifications/resources/updated` into the
//! connection's update channel, and passes
//! `elicitation/create` to the user's [`ElicitationHandler`] (the capability
//! is declared only when there is one), `notifications/progress` to the
//! progress hook, when there is one, and `notifications/message` to
//! `tracing` (see [`server_log`](super::server_log)), and `roots/list`
//! with the roots offered (see [`roots`](super::roots)).

use super::config::McpServer;
use super::elicitation::{ElicitationHandler, ElicitationRequest, ElicitationResponse};
use super::progress::{ProgressHook, ServerProgress};
use super::roots::{OfferedRoots, SharedRoots};
use super::sampling::{SamplingHandler, SamplingLink};
use super::server_log;
use crate::tool::LogLevel;
use rmcp::ClientHandler;
use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, Implementation, ProgressNotificationParam,
    ProtocolVersion, ResourceUpdatedNotificationParam, RootsCapabilities, SamplingCapability,
    TASKS_EXTENSION_ID, UrlElicitationCapability,
};
#[allow(deprecated)] // logging: deprecated by SEP-2577, spoken by servers still
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ListRootsResult,
    LoggingMessageNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::Notify;

/// How many resource updates wait for a slow subscriber before the oldest
/// are dropped (a subscriber then re-reads the resource anyway).
const RESOURCE_UPDATES: usize = 256;

/// Who answers a client's servers and hears them, shared by its
/// connections ([`ConnectOptions`](super::ConnectOptions)' handlers, the
/// client's roots).
#[derive(Clone, Default)]
pub(crate) struct Answerers {
    /// Who answers elicitation requests.
    pub(crate) elicitation: Option<Arc<dyn ElicitationHandler>>,
    /// Who hears progress notifications.
    pub(crate) progress: Option<ProgressHook>,
    /// The client's roots.
    pub(crate) roots: SharedRoots,
    /// Who answers sampling requests (of servers that may ask).
    pub(crate) sampling: Option<Arc<dyn SamplingHandler>>,
}

/// The client side of one connection.
#[derive(Clone)]
pub(crate) struct Handler {
    /// Fires when the server says its tool list changed.
    pub(crate) tools_changed: Arc<Notify>,
    /// How many list-changed notifications arrived.
    pub(crate) changes_seen: Arc<AtomicU64>,
    /// Fires when the server says its resource or prompt list changed.
    pub(crate) offers_changed: Arc<Notify>,
    /// The URIs of `notifications/resources/updated`, for subscribers.
    pub(crate) resource_updates: tokio::sync::broadcast::Sender<String>,
    /// The server's name and who answers its elicitation requests.
    elicitation: Option<(Arc<str>, Arc<dyn ElicitationHandler>)>,
    /// The server's name and who hears its progress notifications.
    progress: Option<(Arc<str>, ProgressHook)>,
    /// Whether the client declares the tasks extension (SEP-2663).
    tasks: bool,
    /// The server's name (its key in `mcpServers`).
    pub(crate) server: Arc<str>,
    /// The level of log messages asked of the server.
    pub(crate) log_level: Option<LogLevel>,
    /// The roots offered to the server.
    pub(crate) roots: OfferedRoots,
    /// How its sampling requests are answered, when it may ask.
    sampling: Option<SamplingLink>,
}

impl Handler {
    /// The handler of `server`'s connection, per its `entry`.
    pub(crate) fn new(server: &str, answerers: &Answerers, entry: &McpServer) -> Self {
        Self {
            server: Arc::from(server),
            log_level: entry.log_level,
            roots: OfferedRoots::new(answerers.roots.clone(), &entry.roots),
            sampling: SamplingLink::new(entry.sampling, answerers.sampling.clone()),
            tools_changed: Arc::new(Notify::new()),
            changes_seen: Arc::new(AtomicU64::new(0)),
            offers_changed: Arc::new(Notify::new()),
            resource_updates: tokio::sync::broadcast::Sender::new(RESOURCE_UPDATES),
            elicitation: answerers
                .elicitation
                .clone()
                .map(|h| (Arc::from(server), h)),
            progress: answerers.progress.clone().map(|h| (Arc::from(server), h)),
            tasks: entry.tasks,
        }
    }

    /// A task's status message, to the progress hook like a progress
    /// notification (`step` grows with each message).
    pub(crate) fn task_status(&self, step: f64, message: &str) {
        if let Some((server, hook)) = &self.progress {
            hook(ServerProgress {
                server: server.to_string(),
                progress: step,
                total: None,
                message: Some(message.to_owned()),
            });
        }
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.elicitation.is_some() {
            let mut elicitation = ElicitationCapability::new();
            elicitation.form = Some(FormElicitationCapability::new());
            if self
                .elicitation
                .as_ref()
                .is_some_and(|(_, handler)| handler.handles_urls())
            {
                elicitation.url = Some(UrlElicitationCapability::new());
            }
            capabilities.elicitation = Some(elicitation);
        }
        if self.sampling.is_some() {
            // Text and images; no tools, no `includeContext`.
            capabilities.sampling = Some(SamplingCapability::default());
        }
        if self.roots.declared() {
            let mut roots = RootsCapabilities::default();
            roots.list_changed = Some(true);
            capabilities.roots = Some(roots);
        }
        if self.tasks {
            // Calls may come back as tasks, which `call` follows.
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(TASKS_EXTENSION_ID.to_owned(), Default::default());
        }
        // The newest version that has the `initialize` handshake; 2026-07-28
        // is reached through discovery when a server refuses `initialize`.
        ClientConfig::new(
            capabilities,
            Implementation::new("lousho", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some((server, hook)) = &self.progress {
            hook(ServerProgress {
                server: server.to_string(),
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
    }

    #[allow(deprecated)] // logging: deprecated by SEP-2577, spoken by servers still
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        server_log::emit(&self.server, &params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changes_seen.fetch_add(1, Ordering::SeqCst);
        self.tools_changed.notify_one();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.offers_changed.notify_one();
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.offers_changed.notify_one();
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        // No subscriber: nobody asked; dropping it is right.
        let _ = self.resource_updates.send(params.uri);
    }

    #[allow(deprecated)] // sampling: deprecated by SEP-2577, spoken by servers still
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        match &self.sampling {
            Some(link) => link.answer(&self.server, params).await,
            None => Err(ErrorData::invalid_request(
                "this client does not answer this server's sampling requests (its entry does not allow them)",
                None,
            )),
        }
    }

    #[allow(deprecated)] // roots: deprecated by SEP-2577, spoken by servers still
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Ok(ListRootsResult::new(self.roots.list()))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let Some((server, handler)) = &self.elicitation else {
            // Not declared: a server that asks anyway is told no.
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let (message, requested_schema) = match request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => (message, requested_schema),
            ElicitRequestParams::UrlElicitationParams {
                message,
                url,
                elicitation_id,
                ..
            } if handler.handles_urls() => {
                let request =
                    ElicitationRequest::url(server.as_ref(), message, url, elicitation_id);
                // Accepting means the user agreed to open it: no content.
                return Ok(ElicitResult::new(match handler.elicit(request).await {
                    ElicitationResponse::Accept(_) => ElicitationAction::Accept,
                    ElicitationResponse::Decline => ElicitationAction::Decline,
                    ElicitationResponse::Cancel => ElicitationAction::Cancel,
                }));
            }
            // URL mode is not declared to a handler that does not show URLs.
            _ => return Ok(ElicitResult::new(ElicitationAction::Decline)),
        };
        let order = requested_schema
            .property_order
            .clone()
            .unwrap_or_else(|| requested_schema.properties.keys().cloned().collect());
        let schema = serde_json::to_value(&requested_schema)
            .map_err(|e| ErrorData::internal_error(format!("unreadable schema: {e}"), None))?;
        let answer = handler
            .elicit(
                ElicitationRequest::new(server.as_ref(), message, schema)
                    .with_property_order(order),
            )
            .await;
        Ok(match answer {
            ElicitationResponse::Accept(content) => ElicitResult::new(ElicitationAction::Accept)
                .with_content(serde_json::Value::Object(content)),
            ElicitationResponse::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitationResponse::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }
}
