//! Where a connection meets OAuth: the handshake with the stored grant (and
//! sign-in or step-up on a challenge), and a tool call's 401/403.

use super::link::{LinkError, MAX_AUTHORIZATIONS, OAuthLink, challenge_of};
use crate::mcp::client::config::{HttpTransport, McpServer, McpTransport};
use crate::mcp::client::connect::ConnectOptions;
use crate::mcp::client::connection::Connection;
use crate::mcp::client::error::McpError;
use crate::mcp::client::handler::Handler;
use crate::mcp::client::http;
use crate::tool::ToolOutput;
use rmcp::ClientServiceExt;
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, RoleClient, RunningService, ServiceError,
};
use std::time::Duration;

/// The outcome of a handshake attempt (as the plain HTTP path has it).
pub(crate) type Served = Result<
    Result<RunningService<RoleClient, Handler>, ClientInitializeError>,
    tokio::time::error::Elapsed,
>;

impl OAuthLink {
    /// The link of an `oauth` HTTP entry.
    pub(crate) fn for_entry(entry: &McpServer, options: &ConnectOptions) -> Option<Self> {
        match (&entry.transport, &entry.oauth) {
            (McpTransport::Http(http), Some(settings)) => Some(Self::new(
                http.url.clone(),
                settings.clone(),
                options.tokens.clone(),
                options.authorizer.clone(),
            )),
            _ => None,
        }
    }
}

/// The handshake of an `oauth` entry: with the stored grant; when the server
/// challenges and an authorizer is set, sign in (or step up) and try again.
pub(crate) async fn serve_oauth(
    server: &str,
    link: &OAuthLink,
    config: &HttpTransport,
    handler: &Handler,
    lifecycle: ClientLifecycleMode,
    timeout: Duration,
) -> Result<(Served, http::StandaloneStream), McpError> {
    link.reset_attempts();
    loop {
        let client = link.client().await.map_err(|e| match e {
            LinkError::NoStore => McpError::TokensRequired {
                server: server.to_owned(),
            },
            LinkError::NeedsAuth => McpError::NeedsAuth {
                server: server.to_owned(),
            },
            LinkError::Failed(error) => McpError::OAuth {
                server: server.to_owned(),
                error,
            },
        })?;
        let (transport, standalone) =
            http::auth_transport(config, client).map_err(|e| McpError::Http {
                server: server.to_owned(),
                url: http::display_url(&config.url),
                status: None,
                source: std::sync::Arc::new(e),
            })?;
        let served = tokio::time::timeout(
            timeout,
            handler
                .clone()
                .serve_with_lifecycle(transport, lifecycle.clone()),
        )
        .await;
        let challenge = match &served {
            Ok(Err(e)) => e
                .auth_challenge()
                .map(str::to_owned)
                .or_else(|| challenge_of(e)),
            // Some servers let `initialize` through and challenge the first
            // real request: ask for the tools once here so that challenge is
            // answered before the connection is handed over.
            Ok(Ok(service)) => {
                match tokio::time::timeout(timeout, service.peer().list_tools(None)).await {
                    Ok(Err(e)) => challenge_of(&e),
                    _ => None,
                }
            }
            Err(_) => None,
        };
        let Some(challenge) = challenge else {
            return Ok((served, standalone));
        };
        if let Ok(Ok(service)) = served {
            let _ = tokio::time::timeout(Duration::from_secs(2), service.cancel()).await;
        }
        match link.answer_challenge(&challenge).await {
            Ok(true) => {}
            Ok(false) => {
                link.reset().await;
                return Err(McpError::NeedsAuth {
                    server: server.to_owned(),
                });
            }
            Err(error) => {
                return Err(McpError::OAuth {
                    server: server.to_owned(),
                    error,
                });
            }
        }
    }
}

/// A tool call hit a 401 (the grant is gone and refreshing failed) or a 403
/// `insufficient_scope`. `None`: signed in or stepped up, call again;
/// otherwise the error result for the model (the status becomes `NeedsAuth`
/// when nobody can sign in).
pub(crate) async fn answer_call_challenge(
    conn: &Connection,
    server: &str,
    error: &ServiceError,
    attempt: u32,
) -> Option<ToolOutput> {
    let (Some(link), Some(challenge)) = (conn.oauth(), challenge_of(error)) else {
        return Some(ToolOutput::error(format!("MCP server `{server}`: {error}")));
    };
    let outcome = if attempt > MAX_AUTHORIZATIONS {
        link.give_up()
    } else {
        link.answer_challenge(&challenge).await
    };
    match outcome {
        Ok(true) => None,
        Ok(false) => {
            conn.mark_needs_auth().await;
            Some(ToolOutput::error(
                McpError::NeedsAuth {
                    server: server.to_owned(),
                }
                .to_string(),
            ))
        }
        Err(error) => Some(ToolOutput::error(
            McpError::OAuth {
                server: server.to_owned(),
                error,
            }
            .to_string(),
        )),
    }
}
