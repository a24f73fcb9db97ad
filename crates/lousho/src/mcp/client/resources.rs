//! A server's resources: list them and their templates (every page), read
//! one (text and blob contents, bounded like tool results: a reply over
//! 16 MiB fails with [`McpError::ReplyTooLarge`]), and subscribe to a
//! resource's updates as a stream. Listings come from the live server when
//! it is connected, else from its manifest (no start), else the server
//! connects.

use super::connect::McpClient;
use super::connection::Connection;
use super::error::McpError;
use super::offered::{McpResource, McpResourceTemplate, ResourceContents};
use super::offers::Offers;
use super::request;
use crate::mcp::protocol::carries_request_meta;
use crate::model::Part;
// `resources/subscribe` is what 2025-era servers (nearly all) take; rmcp
// marks it legacy because 2026-07-28 uses `subscriptions/listen` instead.
#[allow(deprecated)]
use rmcp::model::{
    ClientRequest, ReadResourceRequest, ReadResourceRequestParams, ServerNotification,
    ServerResult, SubscribeRequest, SubscribeRequestParams, UnsubscribeRequest,
    UnsubscribeRequestParams,
};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

mod parts;

pub use parts::{resource_content, resource_parts};

/// How many updates of one subscription wait for the reader.
const UPDATES_BUFFER: usize = 64;

impl Connection {
    /// The offers: listed live when connected (and kept), else the recorded
    /// ones, else after connecting.
    pub(crate) async fn current_offers(&self) -> Result<Arc<Offers>, McpError> {
        if let Some(live) = self.live_now() {
            let info = live.peer().peer_info();
            let offers = Offers::list(self.name(), live.peer(), info.as_deref()).await;
            self.set_offers(offers);
        } else if self.offers().is_none() {
            self.live_for_call().await?;
        }
        self.offers().ok_or_else(|| McpError::NotOffered {
            server: self.name().to_owned(),
            feature: "resources or prompts",
        })
    }

    /// Reads `uri`.
    pub(crate) async fn read_resource(&self, uri: &str) -> Result<Vec<ResourceContents>, McpError> {
        const METHOD: &str = "resources/read";
        let live = self.live_for_call().await?;
        let timeout = self.call_timeout();
        let params = ReadResourceRequestParams::new(uri);
        let request = ClientRequest::ReadResourceRequest(ReadResourceRequest::new(params));
        match request::send(self.name(), &live, METHOD, request, timeout).await? {
            ServerResult::ReadResourceResult(result) => {
                Ok(result.contents.into_iter().map(Into::into).collect())
            }
            _ => Err(request::unexpected(self.name(), METHOD, timeout)),
        }
    }
}

impl McpClient {
    /// `server`'s resources (`resources/list`, every page): live when it is
    /// connected, else from its manifest (the server is not started), else
    /// after connecting it. [`McpError::NotOffered`] when the server has no
    /// resources capability.
    pub async fn list_resources(&self, server: &str) -> Result<Vec<McpResource>, McpError> {
        let offers = self.connection(server)?.current_offers().await?;
        let resources = offers.resources.as_ref();
        resources
            .map(|r| r.iter().map(Into::into).collect())
            .ok_or_else(|| McpError::NotOffered {
                server: server.to_owned(),
                feature: "resources",
            })
    }

    /// `server`'s resource templates (`resources/templates/list`, every
    /// page), as [`list_resources`](Self::list_resources) finds them.
    pub async fn list_resource_templates(
        &self,
        server: &str,
    ) -> Result<Vec<McpResourceTemplate>, McpError> {
        let offers = self.connection(server)?.current_offers().await?;
        match (&offers.templates, &offers.resources) {
            (Some(t), _) => Ok(t.iter().map(Into::into).collect()),
            // Resources without templates: none.
            (None, Some(_)) => Ok(Vec::new()),
            (None, None) => Err(McpError::NotOffered {
                server: server.to_owned(),
                feature: "resources",
            }),
        }
    }

    /// Reads the resource `uri` of `server` (connecting it if needed): its
    /// contents, text or base64 blobs. The reply is bounded like a tool
    /// result (16 MiB). [`resource_parts`] turns them into message parts.
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<Vec<ResourceContents>, McpError> {
        self.connection(server)?.read_resource(uri).await
    }

    /// Reads `uri` of `server` as parts of a user message (text, images;
    /// other blobs described with their MIME type), to attach to a run's
    /// input: `message.parts.extend(mcp.resource_message_parts("docs", uri).await?)`.
    pub async fn resource_message_parts(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<Vec<Part>, McpError> {
        let contents = self.read_resource(server, uri).await?;
        Ok(resource_parts(server, &contents))
    }

    /// Subscribes to updates of `uri` (`resources/subscribe`; on a
    /// 2026-07-28 server a `subscriptions/listen` stream): each item of the
    /// stream is the URI of a `notifications/resources/updated` (read it
    /// again for the new contents). The stream ends when the connection
    /// does. Dropping it stops listening; on a 2025-era server call
    /// [`unsubscribe_resource`](Self::unsubscribe_resource) to tell the
    /// server too. [`McpError::NotOffered`] when the server does not take
    /// subscriptions.
    #[allow(deprecated)] // resources/subscribe: see the import
    pub async fn subscribe_resource(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<ResourceUpdates, McpError> {
        let conn = self.connection(server)?;
        let live = conn.live_for_call().await?;
        let not_offered = || McpError::NotOffered {
            server: server.to_owned(),
            feature: "resource subscriptions",
        };
        let info = live.peer().peer_info().ok_or_else(not_offered)?;
        let subscribe = info
            .capabilities
            .resources
            .as_ref()
            .and_then(|r| r.subscribe)
            .unwrap_or(false);
        let (tx, rx) = tokio::sync::mpsc::channel(UPDATES_BUFFER);
        let wanted = uri.to_owned();
        if carries_request_meta(&info.protocol_version) {
            let filter = rmcp::model::SubscriptionFilter::builder()
                .resource_subscription(uri)
                .build();
            let mut sub = live
                .peer()
                .listen(filter)
                .await
                .map_err(|e| McpError::Request {
                    server: server.to_owned(),
                    method: "subscriptions/listen",
                    timeout: conn.call_timeout(),
                    source: Arc::new(e),
                })?;
            let task = tokio::spawn(async move {
                while let Ok(Some(note)) = sub.next().await {
                    if let ServerNotification::ResourceUpdatedNotification(n) = note
                        && tx.send(n.params.uri).await.is_err()
                    {
                        return;
                    }
                }
            });
            return Ok(ResourceUpdates { rx, task });
        }
        if !subscribe {
            return Err(not_offered());
        }
        // Listen before asking, so no update is missed.
        let mut updates = live.handler.resource_updates.subscribe();
        let request = ClientRequest::SubscribeRequest(SubscribeRequest::new(
            SubscribeRequestParams::new(uri),
        ));
        request::send(
            server,
            &live,
            "resources/subscribe",
            request,
            conn.call_timeout(),
        )
        .await?;
        let task = tokio::spawn(async move {
            loop {
                match updates.recv().await {
                    Ok(updated) if updated == wanted => {
                        if tx.send(updated).await.is_err() {
                            return;
                        }
                    }
                    Ok(_) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        // Some were dropped: one update says "read it again".
                        if tx.send(wanted.clone()).await.is_err() {
                            return;
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        });
        Ok(ResourceUpdates { rx, task })
    }

    /// Tells a 2025-era server to stop sending updates of `uri`
    /// (`resources/unsubscribe`); on 2026-07-28 dropping the
    /// [`ResourceUpdates`] is enough, and this does nothing.
    #[allow(deprecated)] // resources/unsubscribe: see the import
    pub async fn unsubscribe_resource(&self, server: &str, uri: &str) -> Result<(), McpError> {
        let conn = self.connection(server)?;
        let Some(live) = conn.live_now() else {
            return Ok(());
        };
        if live
            .peer()
            .peer_info()
            .is_some_and(|i| carries_request_meta(&i.protocol_version))
        {
            return Ok(());
        }
        let request = ClientRequest::UnsubscribeRequest(UnsubscribeRequest::new(
            UnsubscribeRequestParams::new(uri),
        ));
        request::send(
            server,
            &live,
            "resources/unsubscribe",
            request,
            conn.call_timeout(),
        )
        .await
        .map(|_| ())
    }
}

/// The updates of one subscribed resource (see
/// [`McpClient::subscribe_resource`]): a stream of the updated URI, ending
/// when the connection does.
#[derive(Debug)]
pub struct ResourceUpdates {
    rx: tokio::sync::mpsc::Receiver<String>,
    task: tokio::task::JoinHandle<()>,
}

impl futures::Stream for ResourceUpdates {
    type Item = String;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<String>> {
        self.rx.poll_recv(cx)
    }
}

impl Drop for ResourceUpdates {
    /// Stops listening (on 2026-07-28 this cancels the listen stream).
    fn drop(&mut self) {
        self.task.abort();
    }
}
