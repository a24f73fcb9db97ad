//! Opening a connection: spawn or dial, the handshake (falling back to
//! 2026-07-28 discovery), then the first tool listing.

use super::Connection;
use crate::cassette::mcp::Recorded;
use crate::mcp::client::catalog::CacheHint;
use crate::mcp::client::config::{HttpTransport, McpTransport, StdioTransport};
use crate::mcp::client::error::McpError;
use crate::mcp::client::handler::Handler;
use crate::mcp::client::http;
use crate::mcp::client::live::{Live, Wire};
use crate::mcp::client::oauth::{LinkError, serve_oauth};
use crate::mcp::client::offers::Offers;
use crate::mcp::client::peer_requests::{Overflow, PeerRequestLimit};
use crate::mcp::client::process::{SpawnError, StdioProcess};
use crate::mcp::client::replies::Replies;
use crate::mcp::client::stdio_transport::ChildTransport;
use crate::mcp::client::stdout_watch::StdoutNoise;
use crate::mcp::protocol::uses_handshake;
use rmcp::ClientServiceExt;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, RoleClient, RunningService};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The biggest single stdio message accepted (rmcp's default, stated).
const MAX_STDIO_MESSAGE: usize = 16 * 1024 * 1024;

impl Connection {
    /// Connects with the `initialize` handshake, which servers of every
    /// protocol era before 2026-07-28 answer (and most newer ones too); a
    /// server that rejects it is tried again with 2026-07-28 discovery.
    ///
    /// (rmcp's `Auto` mode probes with `server/discover` first, but servers
    /// that ignore requests before `initialize` — the official Python SDK
    /// 2.3.0 does — then stall it for 10 s and answer the probe late, which
    /// breaks the fallback handshake.)
    pub(super) async fn open(&self) -> Result<Live, McpError> {
        self.attempts
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut rejected = false;
        match self
            .open_with(ClientLifecycleMode::Initialize, &mut rejected)
            .await
        {
            Err(_) if rejected => {
                let modern = ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::LATEST],
                };
                self.open_with(modern, &mut false).await
            }
            other => other,
        }
    }

    /// Spawns or dials, runs the handshake and lists the tools, all within
    /// the startup timeout.
    pub(super) async fn open_with(
        &self,
        lifecycle: ClientLifecycleMode,
        rejected: &mut bool,
    ) -> Result<Live, McpError> {
        let handler = Handler::new(&self.name, &self.answerers, &self.entry);
        if let Some(cassette) = self.cassette_with_secrets()
            && cassette.is_replaying()
        {
            return self.open_replay(cassette, handler, lifecycle).await;
        }
        match &self.entry.transport {
            McpTransport::Stdio(config) => {
                self.open_stdio(config, handler, lifecycle, rejected).await
            }
            McpTransport::Http(config) => {
                self.open_http(config, handler, lifecycle, rejected).await
            }
        }
    }

    /// Spawns the server, runs the handshake over its stdio and lists its
    /// tools.
    pub(super) async fn open_stdio(
        &self,
        config: &StdioTransport,
        handler: Handler,
        lifecycle: ClientLifecycleMode,
        rejected: &mut bool,
    ) -> Result<Live, McpError> {
        let timeout = self.entry.startup_timeout;
        // The command and folder only: arguments and environment may hold
        // secrets.
        tracing::debug!(server = %self.name, command = %config.command, cwd = ?config.cwd, "spawning the MCP server");
        let started = Instant::now();
        let (mut process, stdout, stdin) =
            StdioProcess::spawn(config).await.map_err(|e| match e {
                SpawnError::Command(e) => McpError::Spawn {
                    server: self.name.clone(),
                    command: config.command.clone(),
                    source: Arc::new(e),
                },
                SpawnError::WorkingDirectory(dir, e) => McpError::WorkingDirectory {
                    server: self.name.clone(),
                    dir,
                    source: Arc::new(e),
                },
            })?;
        tracing::debug!(server = %self.name, took = ?started.elapsed(), "spawned the MCP server");
        let stderr = process.stderr_buffer();
        let noise = StdoutNoise::default();
        let replies = Replies::default();
        let child = ChildTransport::new(
            stdout,
            stdin,
            MAX_STDIO_MESSAGE,
            replies.clone(),
            noise.clone(),
        );
        let transport = Recorded::new(
            PeerRequestLimit::new(child, Overflow::Wait, self.entry.max_server_requests),
            self.cassette.as_ref(),
            &self.name,
        );
        let started = Instant::now();
        let handshake = tokio::time::timeout(
            timeout,
            handler.clone().serve_with_lifecycle(transport, lifecycle),
        )
        .await;
        let failure = match handshake {
            Ok(Ok(service)) => {
                negotiated(&self.name, &service, started);
                let live = Live::new(service, handler, Wire::stdio(process, noise, replies));
                return self.finish(live, timeout).await;
            }
            Ok(Err(e)) => {
                *rejected = rejects_initialize(&e);
                // Let a dying server finish exiting so we can say so.
                tokio::time::sleep(Duration::from_millis(20)).await;
                Some((process.exit_status(), e))
            }
            Err(_) => None,
        };
        process.shutdown().await;
        let tail = stderr.as_ref().and_then(|s| s.tail());
        let stdout_noise = noise.first_line();
        Err(match failure {
            Some((exit, e)) => McpError::Handshake {
                server: self.name.clone(),
                exit,
                source: Arc::new(e),
                stdout_noise,
                stderr: tail,
            },
            None => McpError::StartupTimeout {
                server: self.name.clone(),
                timeout,
                stdout_noise,
                stderr: tail,
            },
        })
    }

    /// Dials the server, runs the handshake and lists its tools; with a
    /// session, waits (briefly) for its standalone stream.
    pub(super) async fn open_http(
        &self,
        config: &HttpTransport,
        handler: Handler,
        lifecycle: ClientLifecycleMode,
        rejected: &mut bool,
    ) -> Result<Live, McpError> {
        let timeout = self.entry.startup_timeout;
        let url = http::display_url(&config.url);
        // The URL without credentials or query; never the headers' values.
        tracing::debug!(server = %self.name, %url, oauth = self.oauth.is_some(), "connecting to the MCP server");
        let started = Instant::now();
        let (served, watch) = match &self.oauth {
            Some(link) => serve_oauth(
                link,
                config,
                &self.entry,
                &handler,
                lifecycle,
                (self.cassette.as_ref(), &self.name),
            )
            .await
            .map_err(|e| self.link_error(e, &url))?,
            None => {
                let dialed =
                    http::transport(config, self.entry.max_server_requests).map_err(|e| {
                        McpError::Http {
                            server: self.name.clone(),
                            url: url.clone(),
                            status: None,
                            source: Arc::new(e),
                        }
                    })?;
                let transport = Recorded::new(dialed.transport, self.cassette.as_ref(), &self.name);
                let served = tokio::time::timeout(
                    timeout,
                    handler.clone().serve_with_lifecycle(transport, lifecycle),
                )
                .await;
                (served, dialed.watch)
            }
        };
        let service = match served {
            Ok(Ok(service)) => service,
            Ok(Err(e)) => {
                *rejected = rejects_initialize(&e);
                return Err(McpError::Http {
                    server: self.name.clone(),
                    url,
                    status: http::status_of(&e),
                    source: Arc::new(e),
                });
            }
            Err(_) => {
                return Err(McpError::StartupTimeout {
                    server: self.name.clone(),
                    timeout,
                    stdout_noise: None,
                    stderr: None,
                });
            }
        };
        negotiated(&self.name, &service, started);
        let live = Live::new(service, handler, Wire::Http(watch));
        let live = self.finish(live, timeout).await?;
        // Server-initiated messages sent before the session's GET stream is
        // open would be lost (see `http::standalone`).
        if let Some(standalone) = live.standalone()
            && !standalone.settled(http::STANDALONE_WAIT).await
        {
            tracing::debug!(
                server = %self.name,
                "the standalone SSE stream was not answered in time; going on"
            );
        }
        Ok(live)
    }

    /// Lists the tools, installs them, and starts watching for list changes.
    pub(super) async fn finish(&self, live: Live, timeout: Duration) -> Result<Live, McpError> {
        let started = Instant::now();
        let info = live.peer().peer_info();
        self.ask_log_level(&live, info.as_deref(), timeout).await;
        let listed = tokio::time::timeout(timeout, async {
            let (tools, offers) = tokio::join!(
                live.peer().list_all_tools_with_cache_hint(),
                Offers::list(&self.name, live.peer(), info.as_deref())
            );
            tools.map(|tools| (tools, offers))
        })
        .await;
        let remote = match listed {
            Ok(Ok((tools, offers))) => {
                self.set_offers(offers);
                tools
            }
            Ok(Err(e)) => {
                let diagnostics = live.diagnostics();
                live.shutdown().await;
                return Err(McpError::ListTools {
                    server: self.name.clone(),
                    source: Arc::new(e),
                    diagnostics,
                });
            }
            Err(_) => {
                let (stdout_noise, stderr) = (live.stdout_noise(), live.stderr_tail());
                live.shutdown().await;
                return Err(McpError::StartupTimeout {
                    server: self.name.clone(),
                    timeout,
                    stdout_noise,
                    stderr,
                });
            }
        };
        let hint = CacheHint::of(&remote);
        let remote = remote.items;
        tracing::debug!(server = %self.name, tools = remote.len(), took = ?started.elapsed(), "listed the MCP server's tools");
        match self.build_tools(&remote) {
            Ok(tools) => self.set_tools(tools),
            Err(e) => {
                live.shutdown().await;
                return Err(e);
            }
        }
        self.record(live.peer().peer_info().as_deref(), &remote, hint);
        self.watch_list_changes(&live).await;
        self.watch_offer_changes(&live).await;
        Ok(live)
    }
}

impl Connection {
    /// Sends the entry's `logLevel` as `logging/setLevel` to a 2025-11-25
    /// server that declares `logging` (a 2026-07-28 server gets it in each
    /// call's `_meta` instead). A refusal is logged, not fatal.
    #[allow(deprecated)] // logging: deprecated by SEP-2577, spoken by servers still
    async fn ask_log_level(
        &self,
        live: &Live,
        info: Option<&rmcp::model::ServerPeerInfo>,
        timeout: Duration,
    ) {
        let Some(level) = self.entry.log_level else {
            return;
        };
        let Some(info) = info else { return };
        if !uses_handshake(&info.protocol_version) {
            return;
        }
        if info.capabilities.logging.is_none() {
            tracing::debug!(server = %self.name, "the MCP server does not declare `logging`; its `logLevel` is not sent");
            return;
        }
        let params =
            rmcp::model::SetLevelRequestParams::new(crate::mcp::log_level::to_rmcp_level(level));
        match tokio::time::timeout(timeout, live.peer().set_level(params)).await {
            Ok(Ok(())) => {
                tracing::debug!(server = %self.name, %level, "asked the MCP server for its log messages")
            }
            Ok(Err(e)) => {
                tracing::warn!(server = %self.name, %level, error = %e, "the MCP server refused `logging/setLevel`")
            }
            Err(_) => {
                tracing::warn!(server = %self.name, %level, "the MCP server did not answer `logging/setLevel` in time")
            }
        }
    }

    /// Why an `oauth` entry could not connect, as an [`McpError`].
    pub(super) fn link_error(&self, e: LinkError, url: &str) -> McpError {
        let server = self.name.clone();
        match e {
            #[cfg(feature = "oauth")]
            LinkError::NoStore => McpError::TokensRequired { server },
            #[cfg(feature = "oauth")]
            LinkError::NeedsAuth => McpError::NeedsAuth { server },
            #[cfg(feature = "oauth")]
            LinkError::Failed(error) => McpError::OAuth { server, error },
            #[cfg(feature = "oauth")]
            LinkError::Setup(e) => McpError::Http {
                server,
                url: url.to_owned(),
                status: None,
                source: Arc::new(e),
            },
            #[cfg(not(feature = "oauth"))]
            LinkError::MissingFeature => {
                let _ = url; // nothing was requested
                McpError::MissingFeature {
                    server,
                    feature: "oauth",
                }
            }
        }
    }
}

pub(super) fn with_diagnostics(reason: String, diagnostics: Option<String>) -> String {
    match diagnostics {
        Some(d) => format!("{reason}\n{d}"),
        None => reason,
    }
}

/// Says at debug level what the handshake `started` then agreed on: the
/// protocol version (and so the era), the server, its capabilities.
pub(super) fn negotiated(
    server: &str,
    service: &RunningService<RoleClient, Handler>,
    started: Instant,
) {
    let took = started.elapsed();
    match service.peer().peer_info() {
        Some(info) => tracing::debug!(
            server,
            protocol_version = %info.protocol_version,
            handshake = uses_handshake(&info.protocol_version),
            server_name = info.server_info.as_ref().map(|i| i.name.as_str()),
            server_version = info.server_info.as_ref().map(|i| i.version.as_str()),
            capabilities = ?info.capabilities,
            ?took,
            "MCP session negotiated"
        ),
        None => tracing::debug!(server, ?took, "MCP session negotiated"),
    }
}

/// Whether the server answered `initialize` with a refusal (a 2026-07-28-only
/// server), as opposed to failing some other way.
pub(super) fn rejects_initialize(e: &rmcp::service::ClientInitializeError) -> bool {
    use rmcp::service::ClientInitializeError as E;
    matches!(
        e,
        E::JsonRpcError(_) | E::NoCompatibleProtocolVersion { .. }
    )
}
