//! Resources, prompts and completion for the handler: each request looks
//! its entry up in the catalog (under a lock it never holds across an
//! `.await`), runs the entry's code with a [`ToolContext`] for the request,
//! and answers with rmcp's types.

use super::LoushoServer;
use crate::mcp::server::caller_store::CallerKey;
use crate::mcp::server::catalog::{page, wire};
use crate::mcp::server::completion::{CompletionRequest, complete};
use crate::mcp::server::peer_channel::ProgressTo;
use crate::mcp::server::prompts::PromptError;
use crate::mcp::server::resources::ResourceError;
use crate::tool::{ClientChannel, ToolContext};
use rmcp::model::{
    CompleteRequestParams, CompleteResult, ErrorData, GetPromptRequestParams, GetPromptResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceResult, Reference,
};
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext};
use serde_json::{Map, Value};
use std::sync::Arc;

/// `-32601` for a method of a kind this server does not offer (as rmcp's
/// default handlers answer when the capability is not declared).
fn not_offered(method: &str) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("{method}: this server offers none"),
        None,
    )
}

fn cursor(request: Option<&PaginatedRequestParams>) -> Option<&str> {
    request.and_then(|r| r.cursor.as_deref())
}

impl LoushoServer {
    /// A 2026-07-28 `subscriptions/listen` stream: hears of changes until
    /// the client cancels it or the server closes.
    pub(super) async fn listen_stream(&self, cx: SubscriptionContext) -> Result<(), ErrorData> {
        let listeners = self.inner.catalog.listeners();
        let uris = cx
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        let id = listeners.add_stream(cx.sink().clone(), uris);
        tokio::select! {
            () = cx.cancelled() => {}
            () = self.inner.shutdown.cancelled() => {}
        }
        listeners.remove_stream(id);
        Ok(())
    }

    /// `-32601` unless resources (`true`) or prompts were declared.
    pub(super) fn offered(&self, resources: bool, method: &str) -> Result<(), ErrorData> {
        let declared = self.inner.catalog.read(|e| e.declared());
        let offered = if resources {
            declared.resources
        } else {
            declared.prompts
        };
        if offered {
            Ok(())
        } else {
            Err(not_offered(method))
        }
    }

    pub(super) fn resources_page(
        &self,
        request: Option<PaginatedRequestParams>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.offered(true, "resources/list")?;
        let size = self.inner.catalog.page_size();
        let (items, next) = self.inner.catalog.read(|e| {
            page(
                e.resources.iter().map(|(k, r)| (k, wire::resource(r))),
                cursor(request.as_ref()),
                size,
            )
        });
        let mut out = ListResourcesResult::with_all_items(items);
        out.next_cursor = next;
        Ok(out)
    }

    pub(super) fn templates_page(
        &self,
        request: Option<PaginatedRequestParams>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.offered(true, "resources/templates/list")?;
        let size = self.inner.catalog.page_size();
        let (items, next) = self.inner.catalog.read(|e| {
            page(
                e.templates.iter().map(|(k, t)| (k, wire::template(t))),
                cursor(request.as_ref()),
                size,
            )
        });
        let mut out = ListResourceTemplatesResult::with_all_items(items);
        out.next_cursor = next;
        Ok(out)
    }

    pub(super) fn prompts_page(
        &self,
        request: Option<PaginatedRequestParams>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.offered(false, "prompts/list")?;
        let size = self.inner.catalog.page_size();
        let (items, next) = self.inner.catalog.read(|e| {
            page(
                e.prompts.iter().map(|(k, p)| (k, wire::prompt(p))),
                cursor(request.as_ref()),
                size,
            )
        });
        let mut out = ListPromptsResult::with_all_items(items);
        out.next_cursor = next;
        Ok(out)
    }

    /// The context an entry's code runs with: the request's id and
    /// cancellation, and its client (log messages, progress).
    fn request_context(&self, cx: &RequestContext<RoleServer>) -> ToolContext {
        let progress = match cx.meta.get_progress_token() {
            Some(t) => ProgressTo::Direct(t),
            None => ProgressTo::Nowhere,
        };
        let client: Arc<dyn ClientChannel> = Arc::new(self.channel(cx, progress));
        let mut ctx = ToolContext::new(cx.id.to_string())
            .with_cancel(cx.ct.child_token())
            .with_client(Some(client));
        if let Some(caller) = super::caller_of(cx) {
            ctx.caller = ctx.caller.with(CallerKey(caller.key()));
        }
        ctx
    }

    /// `resources/read`: the fixed resource at `uri`, else the first
    /// template it fits; neither is `-32002`.
    pub(super) async fn read(
        &self,
        uri: String,
        cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResult, ErrorData> {
        self.offered(true, "resources/read")?;
        let Some(found) = self.inner.catalog.read(|e| e.resolve(&uri)) else {
            return Err(wire::resource_error(&ResourceError::NotFound { uri }));
        };
        let ctx = self.request_context(&cx);
        let read = (found.reader)(uri.clone(), found.vars, ctx);
        let content = tokio::select! {
            biased;
            () = cx.ct.cancelled() => {
                return Err(ErrorData::internal_error("the read was cancelled", None));
            }
            r = read => r.map_err(|e| wire::resource_error(&e))?,
        };
        Ok(ReadResourceResult::new(vec![wire::contents(
            uri,
            content,
            found.mime_type,
        )]))
    }

    /// `resources/subscribe`: a URI this server can read (else `-32002`)
    /// joins the session's subscriptions.
    pub(super) fn subscribe_to(&self, uri: String) -> Result<(), ErrorData> {
        self.offered(true, "resources/subscribe")?;
        if self.inner.catalog.read(|e| e.resolve(&uri).is_none()) {
            return Err(wire::resource_error(&ResourceError::NotFound { uri }));
        }
        self.subscribed.add(uri);
        Ok(())
    }

    /// `prompts/get`: the prompt's messages for the arguments given.
    pub(super) async fn prompt(
        &self,
        request: GetPromptRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResult, ErrorData> {
        self.offered(false, "prompts/get")?;
        let found = self.inner.catalog.read(|e| {
            e.prompts
                .get(&request.name)
                .map(|p| (p.handler.clone(), p.description.clone()))
        });
        let Some((handler, description)) = found else {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown prompt `{}`; call prompts/list for the prompts this server has",
                    request.name
                ),
                None,
            ));
        };
        let args: Map<String, Value> = request.arguments.unwrap_or_default().into_iter().collect();
        let ctx = self.request_context(&cx);
        let messages = tokio::select! {
            biased;
            () = cx.ct.cancelled() => {
                return Err(ErrorData::internal_error("the request was cancelled", None));
            }
            r = handler(args, ctx) => r.map_err(|e| match e {
                PromptError::InvalidArguments { .. } => ErrorData::invalid_params(e.to_string(), None),
                PromptError::Failed(_) => ErrorData::internal_error(e.to_string(), None),
            })?,
        };
        let mut out =
            GetPromptResult::new(messages.into_iter().map(wire::prompt_message).collect());
        out.description = Some(description);
        Ok(out)
    }

    /// `completion/complete`: the prompt's or template's completer (none:
    /// no values); an unknown prompt or template, or an argument it does
    /// not have, is `-32602`.
    pub(super) async fn completion(
        &self,
        request: CompleteRequestParams,
        caller: Option<CallerKey>,
    ) -> Result<CompleteResult, ErrorData> {
        if self.offered(true, "").is_err() {
            self.offered(false, "completion/complete")?;
        }
        let argument = request.argument.name.clone();
        let found = self.inner.catalog.read(|e| match &request.r#ref {
            Reference::Prompt(p) => e.prompts.get(&p.name).map(|p| {
                let known = p.arguments.iter().any(|a| a.name == argument);
                (known, p.completer.clone())
            }),
            Reference::Resource(r) => e.templates.get(&r.uri).map(|t| {
                let known = t
                    .parsed
                    .as_ref()
                    .is_ok_and(|p| p.variables().any(|v| v == argument));
                (known, t.completer.clone())
            }),
            _ => None,
        });
        let Some((known, completer)) = found else {
            return Err(ErrorData::invalid_params(
                "no prompt or resource template by that reference; list prompts (prompts/list) or templates (resources/templates/list)",
                None,
            ));
        };
        if !known {
            return Err(ErrorData::invalid_params(
                format!("no argument `{argument}` to complete there"),
                None,
            ));
        }
        let context = request
            .context
            .and_then(|c| c.arguments)
            .unwrap_or_default()
            .into_iter()
            .collect();
        let info = complete(
            completer.as_ref(),
            CompletionRequest {
                argument,
                value: request.argument.value,
                context,
                caller,
            },
        )
        .await;
        Ok(CompleteResult::new(info))
    }
}
