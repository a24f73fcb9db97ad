use super::config::ConfigError;
use super::naming::NameCollision;
use crate::error_chain::error_chain;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A shared error source (errors are `Clone`; their sources are kept whole).
pub(crate) type SharedError = Arc<dyn std::error::Error + Send + Sync>;

/// Why an MCP server could not be used. Every variant names the server;
/// stdio errors carry the tail of the server's stderr when it is captured.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The stdio command could not be started.
    #[error(
        "MCP server `{server}`: could not start `{command}`: {source}; check that it is installed and on PATH"
    )]
    Spawn {
        /// The server's name.
        server: String,
        /// The command that failed.
        command: String,
        /// The OS error.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// The stdio entry's `cwd` is not a directory that can be entered.
    #[error(
        "MCP server `{server}`: its working directory `{}` cannot be used: {source}; create it or fix the entry's `cwd`",
        dir.display()
    )]
    WorkingDirectory {
        /// The server's name.
        server: String,
        /// The entry's `cwd`.
        dir: PathBuf,
        /// Why it cannot be used.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// The HTTP endpoint answered with an error status or could not be reached.
    #[error("MCP server `{server}` at {url}: {}", http_reason(*status, source))]
    Http {
        /// The server's name.
        server: String,
        /// The URL (without credentials).
        url: String,
        /// The HTTP status, when the server answered with one.
        status: Option<u16>,
        /// What happened (the transport's error, with its own sources).
        #[source]
        source: Arc<dyn std::error::Error + Send + Sync>,
    },
    /// The server started but the MCP handshake failed (it exited, wrote
    /// something that is not MCP, or refused the protocol).
    #[error(
        "MCP server `{server}`: handshake failed: {}{}{}",
        handshake_reason(exit, source),
        stdout_note(stdout_noise),
        stderr_note(stderr)
    )]
    Handshake {
        /// The server's name.
        server: String,
        /// The server process's exit status, when it exited during the
        /// handshake.
        exit: Option<std::process::ExitStatus>,
        /// The protocol's error.
        #[source]
        source: Arc<dyn std::error::Error + Send + Sync>,
        /// The first line the server wrote to stdout that is not MCP, if any
        /// (stdout is reserved for the protocol).
        stdout_noise: Option<String>,
        /// The tail of the server's stderr (when captured).
        stderr: Option<String>,
    },
    /// Connecting (start + handshake + listing tools) took too long.
    #[error(
        "MCP server `{server}`: did not finish starting within {timeout:?}; raise `startupTimeoutMs` if it downloads packages on first run{}{}",
        stdout_note(stdout_noise),
        stderr_note(stderr)
    )]
    StartupTimeout {
        /// The server's name.
        server: String,
        /// The limit.
        timeout: Duration,
        /// The first line the server wrote to stdout that is not MCP, if any.
        stdout_noise: Option<String>,
        /// The tail of the server's stderr (when captured).
        stderr: Option<String>,
    },
    /// Listing the server's tools failed.
    #[error(
        "MCP server `{server}`: could not list tools: {}{}",
        error_chain(source.as_ref()),
        diagnostics.as_ref().map(|d| format!("\n{d}")).unwrap_or_default()
    )]
    ListTools {
        /// The server's name.
        server: String,
        /// What went wrong.
        #[source]
        source: Arc<dyn std::error::Error + Send + Sync>,
        /// The stderr tail and stdout noise of a stdio server, when there
        /// are any.
        diagnostics: Option<String>,
    },
    /// Two tools ended up with one name.
    #[error(transparent)]
    NameCollision(#[from] NameCollision),
    /// The entry has `oauth` and no usable grant: an operator must sign in.
    #[error(
        "MCP server `{server}` needs an OAuth sign-in: run `lousho login <spec> {server}` (or `lousho::mcp::oauth::login`) and start again"
    )]
    NeedsAuth {
        /// The server's name.
        server: String,
    },
    /// A server has `oauth` but no token store was given.
    #[error(
        "MCP server `{server}` has `oauth`, so a token store is needed: pass `ConnectOptions::tokens` (e.g. a `FileTokenStore`)"
    )]
    TokensRequired {
        /// The server's name.
        server: String,
    },
    /// Signing in (or stepping up the scope) failed.
    #[cfg(feature = "oauth")]
    #[error("MCP server `{server}`: {error}")]
    OAuth {
        /// The server's name.
        server: String,
        /// What failed.
        #[source]
        error: super::oauth::OAuthError,
    },
    /// The server was disconnected and reconnecting is off (`lazy: false`).
    #[error(
        "MCP server `{server}` is disconnected ({reason}) and lazy reconnect is off; connect again with connect_mcp"
    )]
    Disconnected {
        /// The server's name.
        server: String,
        /// Closed, or how the connection dropped.
        reason: String,
    },
    /// The server's reply to a call is not a JSON-RPC message lousho can
    /// read (nested too deep, no `result`, a mistyped `error`, a number out
    /// of range, an unreadable HTTP body); the call fails at once.
    #[error(
        "MCP server `{server}` sent an invalid response to `{tool}`: {reason}; the server is at fault (report it to its authors)"
    )]
    InvalidResponse {
        /// The server's name.
        server: String,
        /// The tool called.
        tool: String,
        /// What is wrong with the reply.
        reason: String,
    },
    /// The server does not offer what was asked for (its capabilities lack
    /// it): resources, prompts, completions or resource subscriptions.
    #[error(
        "MCP server `{server}` does not offer {feature} (its capabilities do not list them); ask another server"
    )]
    NotOffered {
        /// The server's name.
        server: String,
        /// What it lacks (`resources`, `prompts`, `completions`,
        /// `resource subscriptions`).
        feature: &'static str,
    },
    /// A request other than a tool call (`resources/read`, `prompts/get`,
    /// …) failed: the server answered with an error, did not answer within
    /// the call timeout, or the connection dropped.
    #[error("MCP server `{server}`: `{method}` failed: {}", request_reason(source, *timeout))]
    Request {
        /// The server's name.
        server: String,
        /// The request's method.
        method: &'static str,
        /// The call timeout that applied.
        timeout: Duration,
        /// rmcp's error (a JSON-RPC error has the server's code and message).
        #[source]
        source: Arc<rmcp::service::ServiceError>,
    },
    /// The server's reply to a request other than a tool call could not be
    /// read (see [`McpError::InvalidResponse`]).
    #[error(
        "MCP server `{server}` sent an invalid response to `{method}`: {reason}; the server is at fault (report it to its authors)"
    )]
    InvalidReply {
        /// The server's name.
        server: String,
        /// The request's method.
        method: &'static str,
        /// What is wrong with the reply.
        reason: String,
    },
    /// The reply was larger than a message may be (16 MiB over stdio and
    /// HTTP), like an over-large tool result.
    #[error(
        "MCP server `{server}`: the reply to `{method}` is larger than 16 MiB, the most a message may be; ask for less (a smaller resource, a narrower listing)"
    )]
    ReplyTooLarge {
        /// The server's name.
        server: String,
        /// The request's method.
        method: &'static str,
    },
    /// No resource, resource template or prompt of that name or URI in the
    /// server's listing.
    #[error("MCP server `{server}` has no {kind} `{name}`; list them to see what it has")]
    NotListed {
        /// The server's name.
        server: String,
        /// `prompt`, `resource` or `resource template`.
        kind: &'static str,
        /// The name or URI asked for.
        name: String,
    },
    /// A prompt's required argument was not given.
    #[error("prompt `{prompt}` of MCP server `{server}` needs the argument `{argument}`")]
    MissingArgument {
        /// The server's name.
        server: String,
        /// The prompt.
        prompt: String,
        /// The argument.
        argument: String,
    },
    /// No server with that name.
    #[error("no MCP server named `{server}`")]
    UnknownServer {
        /// The name asked for.
        server: String,
    },
    /// The entry is malformed.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The entry needs a part of lousho this build leaves out (a cargo
    /// feature turned off), e.g. `oauth` settings without the `oauth` feature.
    #[error(
        "MCP server `{server}` needs lousho's `{feature}` cargo feature, which this build leaves out; enable it in Cargo.toml (it is on by default)"
    )]
    MissingFeature {
        /// The server's name.
        server: String,
        /// The cargo feature.
        feature: &'static str,
    },
}

/// Why a request failed, in words.
fn request_reason(e: &rmcp::service::ServiceError, timeout: Duration) -> String {
    use rmcp::service::ServiceError as E;
    match e {
        E::Timeout { .. } => format!(
            "no answer within {timeout:?} (the call timeout; raise `callTimeoutMs`)"
        ),
        E::TransportClosed => {
            "the connection closed (the server exited or dropped it); the next request reconnects"
                .to_owned()
        }
        E::McpError(data) => format!("error {}: {}", data.code.0, data.message),
        E::UnexpectedResponse => {
            "the server answered with another kind of result (input requests are not supported here)"
                .to_owned()
        }
        E::TransportSend(t) => error_chain(t.error.as_ref()),
        other => error_chain(other),
    }
}

fn stdout_note(noise: &Option<String>) -> String {
    match noise {
        Some(line) => format!(
            "; the server wrote non-MCP text to stdout (stdout is reserved for the protocol; log to stderr): {line:?}"
        ),
        None => String::new(),
    }
}

/// The handshake's failure in words: the exit when the server died, else
/// the protocol error (the legacy fallback's reason when both eras failed).
fn handshake_reason(exit: &Option<std::process::ExitStatus>, source: &SharedError) -> String {
    if let Some(status) = exit {
        return format!("the server process exited ({status}) before the handshake finished");
    }
    describe(source)
}

/// A source in words: a handshake error without rmcp's type names.
fn describe(source: &SharedError) -> String {
    match source.downcast_ref::<rmcp::service::ClientInitializeError>() {
        Some(e) => describe_init(e),
        None => error_chain(source.as_ref()),
    }
}

/// Why an HTTP server could not be used, in one line: its status with what
/// to do, or the network's own reason (connection refused, a timeout, a DNS
/// failure) — not the transport's chain of wrappers, which stays the error's
/// source (shown by the CLI at `-v`).
fn http_reason(status: Option<u16>, source: &SharedError) -> String {
    use std::io::ErrorKind;
    if let Some(status) = status {
        return status_words(status);
    }
    let sources = || crate::error_chain::sources(source.as_ref());
    let io_kind = sources().find_map(|e| e.downcast_ref::<std::io::Error>().map(|io| io.kind()));
    match io_kind {
        Some(ErrorKind::ConnectionRefused) => {
            return "connection refused: nothing is listening at that address; is the server \
                    running, and is the URL's port right?"
                .to_owned();
        }
        Some(ErrorKind::TimedOut) => {
            return "the connection timed out; check the URL and the network".to_owned();
        }
        _ => {}
    }
    if let Some((at, r)) = sources()
        .enumerate()
        .find_map(|(i, e)| e.downcast_ref::<reqwest::Error>().map(|r| (i, r)))
    {
        if r.is_timeout() {
            return "the request timed out; check the URL and the network".to_owned();
        }
        if r.is_connect() {
            // The innermost error is the network's reason (DNS, TLS).
            let reason = sources()
                .skip(at)
                .last()
                .map(ToString::to_string)
                .unwrap_or_default();
            return format!("cannot connect: {reason}");
        }
    }
    describe(source)
}

/// An HTTP status with what to do about it.
fn status_words(status: u16) -> String {
    let reason = reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .map(|r| format!(" {r}"))
        .unwrap_or_default();
    let advice = match status {
        401 => ": set the entry's headers.Authorization or configure oauth",
        403 => {
            ": the credentials are not allowed to use this server (check the token and its scopes)"
        }
        404 => ": check the URL's path (MCP servers often serve /mcp)",
        405 => ": check that the URL is a Streamable HTTP MCP endpoint",
        500..=599 => ": the server failed; its logs say why",
        _ => "",
    };
    format!("HTTP {status}{reason}{advice}")
}

fn stderr_note(stderr: &Option<String>) -> String {
    match stderr {
        Some(tail) => format!("\n--- server stderr (tail) ---\n{tail}"),
        None => String::new(),
    }
}

impl McpError {
    /// The server the error is about, when there is one.
    pub fn server(&self) -> Option<&str> {
        match self {
            McpError::Spawn { server, .. }
            | McpError::WorkingDirectory { server, .. }
            | McpError::Http { server, .. }
            | McpError::Handshake { server, .. }
            | McpError::StartupTimeout { server, .. }
            | McpError::ListTools { server, .. }
            | McpError::NeedsAuth { server }
            | McpError::TokensRequired { server }
            | McpError::Disconnected { server, .. }
            | McpError::MissingFeature { server, .. }
            | McpError::InvalidResponse { server, .. }
            | McpError::NotOffered { server, .. }
            | McpError::Request { server, .. }
            | McpError::InvalidReply { server, .. }
            | McpError::ReplyTooLarge { server, .. }
            | McpError::NotListed { server, .. }
            | McpError::MissingArgument { server, .. }
            | McpError::UnknownServer { server } => Some(server),
            #[cfg(feature = "oauth")]
            McpError::OAuth { server, .. } => Some(server),
            McpError::NameCollision(c) => Some(&c.second_server),
            McpError::Config(_) => None,
        }
    }
}

/// A handshake error in words: the legacy fallback's reason when both eras
/// failed, transport errors without rmcp's type names.
fn describe_init(e: &rmcp::service::ClientInitializeError) -> String {
    use rmcp::service::ClientInitializeError as E;
    match e {
        E::LegacyFallbackFailed { fallback, .. } => describe_init(fallback),
        E::TransportError { error, context } => {
            format!(
                "{} (while trying to {context})",
                error_chain(error.error.as_ref())
            )
        }
        E::ConnectionClosed(context) => {
            format!("the connection closed while waiting for the {context}")
        }
        other => error_chain(other),
    }
}
