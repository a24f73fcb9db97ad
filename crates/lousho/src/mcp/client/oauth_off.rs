//! The client's OAuth seams when the `oauth` feature is off: an HTTP entry
//! with `oauth` settings still parses (spec files stay portable across
//! builds), and connecting it fails with `McpError::MissingFeature` naming
//! the feature. No challenge is ever answered, so a 401 stays a plain HTTP
//! error.

use super::config::{HttpTransport, McpServer, McpTransport};
use super::handler::Handler;
use super::http;
use rmcp::service::{ClientInitializeError, ClientLifecycleMode, RoleClient, RunningService};

/// The outcome of a handshake attempt (as the plain HTTP path has it).
pub(crate) type Handshake = Result<
    Result<RunningService<RoleClient, Handler>, ClientInitializeError>,
    tokio::time::error::Elapsed,
>;

/// Why an `oauth` entry cannot connect in this build.
pub(crate) enum LinkError {
    /// The `oauth` feature is off.
    MissingFeature,
}

/// Marks an HTTP entry with `oauth` settings; it cannot connect.
pub(crate) struct OAuthLink;

impl OAuthLink {
    /// The marker of an `oauth` HTTP entry.
    pub(crate) fn for_entry(entry: &McpServer) -> Option<Self> {
        match (&entry.transport, &entry.oauth) {
            (McpTransport::Http(_), Some(_)) => Some(Self),
            _ => None,
        }
    }

    /// Never asks for a token store: connecting fails on the feature first.
    pub(crate) fn has_store(&self) -> bool {
        true
    }
}

/// The handshake of an `oauth` entry: the feature is off, so it fails
/// before any request.
pub(crate) async fn serve_oauth(
    _link: &OAuthLink,
    _config: &HttpTransport,
    _entry: &McpServer,
    _handler: &Handler,
    _lifecycle: ClientLifecycleMode,
    _record: (Option<&crate::cassette::Cassette>, &str),
) -> Result<(Handshake, http::HttpWatch), LinkError> {
    Err(LinkError::MissingFeature)
}

#[cfg(test)]
mod tests {
    use crate::McpServer;
    use crate::mcp::client::{ConnectOptions, McpError, OAuthSettings, connect_mcp};

    #[tokio::test]
    async fn an_oauth_entry_fails_to_connect_naming_the_feature() {
        // Nothing listens there: the feature check comes before any request.
        let entry = McpServer::http("http://127.0.0.1:9/mcp")
            .oauth(OAuthSettings::new("http://127.0.0.1:8765/callback"));
        let Err(e) = connect_mcp([("docs", entry)], ConnectOptions::default()).await else {
            panic!("an oauth entry connected without the oauth feature");
        };
        assert!(
            matches!(&e, McpError::MissingFeature { server, feature: "oauth" } if server == "docs"),
            "{e:?}"
        );
        assert!(e.to_string().contains("`oauth` cargo feature"), "{e}");
    }
}
