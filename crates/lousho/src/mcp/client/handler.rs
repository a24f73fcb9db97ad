//! Our rmcp `ClientHandler`: identifies lousho, turns
//! `notifications/tools/list_changed` (and the resource and prompt ones)
//! into refresh signals, `notifications/resources/updated` into the
//! connection's update channel, and passes
//! `elicitation/create` to the user's [`ElicitationHandler`] (the capability
//! is declared only when there is one), and `notifications/progress` to the
//! progress hook, when there is one.

use super::elicitation::{ElicitationHandler, ElicitationRequest, ElicitationResponse};
use super::progress::{ProgressHook, ServerProgress};
use rmcp::ClientHandler;
use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, Implementation, ProgressNotificationParam,
    ProtocolVersion, ResourceUpdatedNotificationParam, TASKS_EXTENSION_ID,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::Notify;

/// How many resource updates wait for a slow subscriber before the oldest
/// are dropped (a subscriber then re-reads the resource anyway).
const RESOURCE_UPDATES: usize = 256;

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
}

impl Handler {
    pub(crate) fn new(
        server: &str,
        elicitation: Option<Arc<dyn ElicitationHandler>>,
        progress: Option<ProgressHook>,
        tasks: bool,
    ) -> Self {
        Self {
            tools_changed: Arc::new(Notify::new()),
            changes_seen: Arc::new(AtomicU64::new(0)),
            offers_changed: Arc::new(Notify::new()),
            resource_updates: tokio::sync::broadcast::Sender::new(RESOURCE_UPDATES),
            elicitation: elicitation.map(|h| (Arc::from(server), h)),
            progress: progress.map(|h| (Arc::from(server), h)),
            tasks,
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
            capabilities.elicitation = Some(elicitation);
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

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let Some((server, handler)) = &self.elicitation else {
            // Not declared: a server that asks anyway is told no.
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            // URL mode is not declared either.
            return Ok(ElicitResult::new(ElicitationAction::Decline));
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
