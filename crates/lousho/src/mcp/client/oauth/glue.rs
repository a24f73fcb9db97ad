//! The handshake of an `oauth` entry on its link: with the stored grant,
//! and sign-in or step-up when the server challenges. It knows nothing of
//! connections; the connection turns a [`LinkError`] into an `McpError`.

use super::link::{LinkError, OAuthLink, challenge_of};
use crate::cassette::Cassette;
use crate::cassette::mcp::Recorded;
use crate::mcp::client::config::{HttpTransport, McpServer};
use crate::mcp::client::handler::Handler;
use crate::mcp::client::http;
use rmcp::ClientServiceExt;
use rmcp::service::{ClientInitializeError, ClientLifecycleMode, RoleClient, RunningService};
use std::time::Duration;

/// The outcome of a handshake attempt (as the plain HTTP path has it).
pub(crate) type Handshake = Result<
    Result<RunningService<RoleClient, Handler>, ClientInitializeError>,
    tokio::time::error::Elapsed,
>;

/// The handshake of an `oauth` entry: with the stored grant; when the server
/// challenges and an authorizer is set, sign in (or step up) and try again.
pub(crate) async fn serve_oauth(
    link: &OAuthLink,
    config: &HttpTransport,
    entry: &McpServer,
    handler: &Handler,
    lifecycle: ClientLifecycleMode,
    (cassette, server): (Option<&Cassette>, &str),
) -> Result<(Handshake, http::HttpWatch), LinkError> {
    let timeout = entry.startup_timeout;
    link.reset_attempts();
    loop {
        let client = link.client().await?;
        let http::Dialed { transport, watch } =
            http::auth_transport(config, client, entry.max_server_requests)
                .map_err(LinkError::Setup)?;
        let transport = Recorded::new(transport, cassette, server);
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
            return Ok((served, watch));
        };
        if let Ok(Ok(service)) = served {
            let _ = tokio::time::timeout(Duration::from_secs(2), service.cancel()).await;
        }
        match link.answer_challenge(&challenge).await {
            Ok(true) => {}
            Ok(false) => {
                link.reset().await;
                return Err(LinkError::NeedsAuth);
            }
            Err(error) => return Err(LinkError::Failed(error)),
        }
    }
}
