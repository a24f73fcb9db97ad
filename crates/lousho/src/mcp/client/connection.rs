//! One server's lifecycle: idle → connecting (one shared in-flight attempt)
//! → connected → (closed | dropped | failed) → connecting again on demand.

use super::call::{CallTarget, ManagedCalls};
use super::catalog::CatalogLink;
use super::config::{HttpTransport, McpServer, McpTransport, StdioTransport};
use super::elicitation::ElicitationHandler;
use super::error::McpError;
use super::handler::Handler;
use super::http;
use super::identity::ServerIdentity;
use super::live::{Live, Wire};
use super::naming::{ToolNames, ToolNaming};
use super::oauth::{LinkError, OAuthLink, serve_oauth};
use super::peer_requests::{Overflow, PeerRequestLimit};
use super::pinning::PinCheck;
use super::process::{SpawnError, StdioProcess};
use super::progress::ProgressHook;
use super::replies::Replies;
use super::stdio_transport::ChildTransport;
use super::stdout_watch::StdoutNoise;
use super::tool::{Listing, McpTool, RemoteTool};
use super::warnings;
use crate::mcp::protocol::{carries_request_meta, uses_handshake};
use crate::policy::{PinState, ServerPins, ToolDrift};
use crate::sync::{MutexExt, RwLockExt};
use crate::tool::Tool;
use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use rmcp::ClientServiceExt;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, RoleClient, RunningService};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant, SystemTime};

mod tool_calls;

/// The biggest single stdio message accepted (rmcp's default, stated).
const MAX_STDIO_MESSAGE: usize = 16 * 1024 * 1024;

/// A server's state, as [`McpClient::status`](super::McpClient::status) reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerStatus {
    /// Not connected (never, or closed).
    Idle,
    /// Connected; its tools are listed.
    Connected,
    /// The last connect failed, or the connection dropped; the reason says
    /// which (with the stderr tail when captured).
    Failed(String),
    /// An OAuth server the app is not signed in to.
    NeedsAuth,
    /// Not connected; its tools are known from a fresh tool manifest (see
    /// [`ManifestStore`](super::ManifestStore)). It connects when one of
    /// them is first called.
    Cataloged,
}

type ConnectFuture = Shared<BoxFuture<'static, Result<Arc<Live>, McpError>>>;

enum Phase {
    Idle,
    Connecting(ConnectFuture),
    Connected(Arc<Live>),
    Failed(String),
    NeedsAuth,
    /// Tools from the manifest; connects on the first call.
    Cataloged,
}

struct Slot {
    state: Phase,
    /// Bumped by every new attempt and by close, so a stale attempt never
    /// installs itself.
    generation: u64,
    /// Closed by the user (for `lazy: false`).
    closed: bool,
    ever_connected: bool,
    /// When the listing the tools come from was fetched (a manifest's, or
    /// the last live one recorded in the catalog).
    listed_at: Option<SystemTime>,
}

/// [`Connection::tools`]' last tools and the listing they were made from.
#[derive(Default)]
struct MadeTools {
    from: Option<Arc<[Arc<RemoteTool>]>>,
    tools: Vec<Weak<dyn Tool>>,
}

/// Counts connect attempts (spawns/handshakes) for tests and status.
pub(crate) struct Connection {
    name: String,
    entry: McpServer,
    naming: ToolNaming,
    lazy: bool,
    slot: Mutex<Slot>,
    /// The last listing (kept across reconnects); tools are made from it on
    /// demand, each holding this connection.
    tools: RwLock<Arc<[Arc<RemoteTool>]>>,
    /// The tools last made from a listing, held weakly (each tool holds
    /// this connection): while someone holds them — an agent's tool offer —
    /// later calls return the same `Arc`s, so what is derived from them is
    /// reused ([`crate::agent`]'s offer cache, a provider's serialised list).
    made: Mutex<MadeTools>,
    attempts: std::sync::atomic::AtomicU64,
    this: Weak<Connection>,
    /// The credentials of an `oauth` entry.
    oauth: Option<OAuthLink>,
    /// Who answers the server's elicitation requests.
    elicitation: Option<Arc<dyn ElicitationHandler>>,
    /// Who hears the server's progress notifications.
    progress: Option<ProgressHook>,
    /// The digest of the server's identity (remembered approvals' key).
    identity: String,
    /// The entry's pins and mode, when it compares with pins.
    pin_check: Option<PinCheck>,
    /// Whether the last listing has been made (for `live_pins`).
    listed: std::sync::atomic::AtomicBool,
    /// The drift found by the last listing.
    drift: RwLock<Vec<ToolDrift>>,
    /// Where the server's tool manifest is kept (with a store).
    catalog: Option<CatalogLink>,
}

impl Connection {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        name: String,
        entry: McpServer,
        naming: ToolNaming,
        lazy: bool,
        oauth: Option<OAuthLink>,
        elicitation: Option<Arc<dyn ElicitationHandler>>,
        progress: Option<ProgressHook>,
        catalog: Option<CatalogLink>,
    ) -> Arc<Self> {
        let identity = ServerIdentity::of(&entry).digest();
        let pin_check = PinCheck::new(entry.pin, entry.pins.as_ref());
        let conn = Arc::new_cyclic(|this| Self {
            identity,
            pin_check,
            listed: std::sync::atomic::AtomicBool::new(false),
            drift: RwLock::new(Vec::new()),
            name,
            entry,
            naming,
            lazy,
            slot: Mutex::new(Slot {
                state: Phase::Idle,
                generation: 0,
                closed: false,
                ever_connected: false,
                listed_at: None,
            }),
            tools: RwLock::new(Arc::from(Vec::new())),
            made: Mutex::new(MadeTools::default()),
            attempts: std::sync::atomic::AtomicU64::new(0),
            this: this.clone(),
            oauth,
            elicitation,
            progress,
            catalog,
        });
        conn.load_manifest();
        conn
    }

    /// With a fresh manifest (and no `preload`), the tools come from it and
    /// the server waits for the first call (`Cataloged`).
    fn load_manifest(&self) {
        let Some(catalog) = &self.catalog else { return };
        if self.entry.preload {
            return;
        }
        let Some((manifest, tools)) = catalog.fresh(&self.name) else {
            return;
        };
        match self.build_tools(&tools) {
            Ok(tools) => {
                self.set_tools(tools);
                let mut slot = self.lock();
                slot.state = Phase::Cataloged;
                slot.listed_at = Some(manifest.fetched_at());
            }
            Err(e) => {
                tracing::debug!(server = %self.name, error = %e, "not using the tool manifest")
            }
        }
    }

    /// When the listing the tools come from was fetched, while it is a
    /// recorded one (`Cataloged`, or connected with a store).
    pub(crate) fn listed_at(&self) -> Option<SystemTime> {
        self.lock().listed_at
    }

    /// Records a listing in the catalog (with a store).
    fn record(&self, info: Option<&rmcp::model::ServerPeerInfo>, tools: &[rmcp::model::Tool]) {
        if let Some(catalog) = &self.catalog {
            let manifest = catalog.record(&self.name, info, tools);
            self.lock().listed_at = Some(manifest.fetched_at());
        }
    }

    /// Whether the server's current listing has the tool `bare_name`.
    pub(crate) fn lists(&self, bare_name: &str) -> bool {
        self.tools
            .read_unpoisoned()
            .iter()
            .any(|t| t.bare_name() == bare_name)
    }

    /// An `oauth` entry without a token store.
    pub(crate) fn needs_token_store(&self) -> bool {
        self.oauth.as_ref().is_some_and(|l| !l.has_store())
    }

    /// The grant stopped working (refresh failed, token rejected): the status
    /// becomes `NeedsAuth` and the connection is dropped.
    #[cfg(feature = "oauth")]
    pub(crate) async fn mark_needs_auth(&self) {
        let old = {
            let mut slot = self.lock();
            slot.generation += 1;
            match std::mem::replace(&mut slot.state, Phase::NeedsAuth) {
                Phase::Connected(live) => Some(live),
                _ => None,
            }
        };
        if let Some(link) = &self.oauth {
            link.reset().await;
        }
        if let Some(live) = old {
            live.shutdown().await;
        }
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn call_timeout(&self) -> Duration {
        self.entry.call_timeout
    }

    /// How many times a connection was attempted.
    pub(crate) fn attempts(&self) -> u64 {
        self.attempts.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.slot.lock_unpoisoned()
    }

    /// The tools as last listed (kept across reconnects). Each holds this
    /// connection, so it keeps working after the handle is dropped. The same
    /// `Arc`s as the previous call while the listing is unchanged and those
    /// tools are still held somewhere.
    pub(crate) fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let Some(this) = self.this.upgrade() else {
            return Vec::new();
        };
        let listed = self.tools.read_unpoisoned().clone();
        let mut made = self.made.lock_unpoisoned();
        if let Some(from) = &made.from
            && Arc::ptr_eq(from, &listed)
            && let Some(tools) = made
                .tools
                .iter()
                .map(Weak::upgrade)
                .collect::<Option<Vec<_>>>()
        {
            return tools;
        }
        let tools: Vec<Arc<dyn Tool>> = listed
            .iter()
            .map(|remote| {
                Arc::new(McpTool::new(
                    remote.clone(),
                    CallTarget::Managed(this.clone() as Arc<dyn ManagedCalls>),
                )) as Arc<dyn Tool>
            })
            .collect();
        made.tools = tools.iter().map(Arc::downgrade).collect();
        made.from = Some(listed);
        tools
    }

    pub(crate) fn status(&self) -> ServerStatus {
        let slot = self.lock();
        match &slot.state {
            Phase::Idle | Phase::Connecting(_) => ServerStatus::Idle,
            Phase::Connected(live) => match live.dead_reason() {
                None => ServerStatus::Connected,
                Some(reason) => ServerStatus::Failed(with_diagnostics(reason, live.diagnostics())),
            },
            Phase::Failed(reason) => ServerStatus::Failed(reason.clone()),
            Phase::NeedsAuth => ServerStatus::NeedsAuth,
            Phase::Cataloged => ServerStatus::Cataloged,
        }
    }

    /// Connects unless connected; concurrent callers share one attempt. A
    /// failure is returned to every waiter; the next call tries again.
    pub(crate) async fn connect(&self) -> Result<Arc<Live>, McpError> {
        let (generation, attempt, stale) = {
            let mut slot = self.lock();
            slot.closed = false;
            let mut stale = None;
            match &slot.state {
                Phase::Connected(live) if live.dead_reason().is_none() => return Ok(live.clone()),
                Phase::Connecting(f) => (slot.generation, f.clone(), None),
                _ => {
                    if self.needs_token_store() {
                        slot.state = Phase::NeedsAuth;
                        return Err(McpError::TokensRequired {
                            server: self.name.clone(),
                        });
                    }
                    if let Phase::Connected(old) = &slot.state {
                        stale = Some(old.clone());
                    }
                    slot.generation += 1;
                    let this = self.this.clone();
                    let attempt: ConnectFuture = async move {
                        match this.upgrade() {
                            Some(conn) => conn.open().await.map(Arc::new),
                            None => Err(McpError::UnknownServer {
                                server: String::new(),
                            }),
                        }
                    }
                    .boxed()
                    .shared();
                    slot.state = Phase::Connecting(attempt.clone());
                    (slot.generation, attempt, stale)
                }
            }
        };
        if let Some(old) = stale {
            // The old connection dropped: reap its process in the background.
            tokio::spawn(async move { old.shutdown().await });
        }
        let result = attempt.await;
        let superseded = {
            let mut slot = self.lock();
            if slot.generation != generation {
                true
            } else {
                match &result {
                    Ok(live) => {
                        if !matches!(&slot.state, Phase::Connected(l) if Arc::ptr_eq(l, live)) {
                            slot.state = Phase::Connected(live.clone());
                            slot.ever_connected = true;
                        }
                    }
                    Err(McpError::NeedsAuth { .. }) => slot.state = Phase::NeedsAuth,
                    Err(e) => slot.state = Phase::Failed(e.to_string()),
                }
                false
            }
        };
        if superseded {
            // Closed (or superseded) while connecting: don't keep this one.
            if let Ok(live) = &result {
                live.shutdown().await;
            }
            return Err(McpError::Disconnected {
                server: self.name.clone(),
                reason: "closed while connecting".into(),
            });
        }
        result
    }

    /// The connection for a tool call: reconnects when `lazy`, otherwise a
    /// closed or dropped connection fails the call.
    pub(crate) async fn live_for_call(&self) -> Result<Arc<Live>, McpError> {
        {
            let slot = self.lock();
            if let Phase::Connected(live) = &slot.state
                && live.dead_reason().is_none()
            {
                return Ok(live.clone());
            }
            if let Some(reason) = self.stays_down(&slot) {
                return Err(McpError::Disconnected {
                    server: self.name.clone(),
                    reason,
                });
            }
        }
        self.connect().await
    }

    /// Gets the server ready for a run (an agent's `ready()`): connects
    /// unless connected — except that without `lazy` a server that was
    /// closed or whose connection dropped stays down, so its tools' calls
    /// fail as they do for tools passed by value.
    /// A `Cataloged` server stays as it is (it connects on its first call).
    pub(crate) async fn ready(&self) -> Result<(), McpError> {
        {
            let slot = self.lock();
            if self.stays_down(&slot).is_some() || matches!(slot.state, Phase::Cataloged) {
                return Ok(());
            }
        }
        self.connect().await.map(|_| ())
    }

    /// Why the server must not reconnect by itself: `lazy` is off and a
    /// connection it had was closed or dropped.
    fn stays_down(&self, slot: &Slot) -> Option<String> {
        if self.lazy || !slot.ever_connected {
            return None;
        }
        match &slot.state {
            Phase::Connected(live) => live.dead_reason(),
            Phase::Idle | Phase::Cataloged if slot.closed => Some("closed".to_owned()),
            _ => None,
        }
    }

    /// Disconnects and stops the process group. Idempotent. With a
    /// recorded listing the server goes back to `Cataloged`.
    pub(crate) async fn close(&self) {
        let old = {
            let mut slot = self.lock();
            slot.generation += 1;
            slot.closed = true;
            let next = if slot.listed_at.is_some() {
                Phase::Cataloged
            } else {
                Phase::Idle
            };
            match std::mem::replace(&mut slot.state, next) {
                Phase::Connected(live) => Some(live),
                _ => None,
            }
        };
        if let Some(live) = old {
            live.shutdown().await;
        }
    }

    /// Connects with the `initialize` handshake, which servers of every
    /// protocol era before 2026-07-28 answer (and most newer ones too); a
    /// server that rejects it is tried again with 2026-07-28 discovery.
    ///
    /// (rmcp's `Auto` mode probes with `server/discover` first, but servers
    /// that ignore requests before `initialize` — the official Python SDK
    /// 2.3.0 does — then stall it for 10 s and answer the probe late, which
    /// breaks the fallback handshake.)
    async fn open(&self) -> Result<Live, McpError> {
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
    async fn open_with(
        &self,
        lifecycle: ClientLifecycleMode,
        rejected: &mut bool,
    ) -> Result<Live, McpError> {
        let handler = Handler::new(&self.name, self.elicitation.clone(), self.progress.clone());
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
    async fn open_stdio(
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
        let transport =
            PeerRequestLimit::new(child, Overflow::Wait, self.entry.max_server_requests);
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
    async fn open_http(
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
            Some(link) => serve_oauth(link, config, &self.entry, &handler, lifecycle)
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
                let served = tokio::time::timeout(
                    timeout,
                    handler
                        .clone()
                        .serve_with_lifecycle(dialed.transport, lifecycle),
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
    async fn finish(&self, live: Live, timeout: Duration) -> Result<Live, McpError> {
        let started = Instant::now();
        let listed = tokio::time::timeout(timeout, live.peer().list_all_tools()).await;
        let remote = match listed {
            Ok(Ok(tools)) => tools,
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
        tracing::debug!(server = %self.name, tools = remote.len(), took = ?started.elapsed(), "listed the MCP server's tools");
        match self.build_tools(&remote) {
            Ok(tools) => self.set_tools(tools),
            Err(e) => {
                live.shutdown().await;
                return Err(e);
            }
        }
        self.record(live.peer().peer_info().as_deref(), &remote);
        self.watch_list_changes(&live).await;
        Ok(live)
    }

    fn set_tools(&self, (tools, drift): (Vec<Arc<RemoteTool>>, Vec<ToolDrift>)) {
        for d in &drift {
            warnings::pin_drift(d, self.pin_check.as_ref().map(|p| p.mode));
        }
        *self.drift.write_unpoisoned() = drift;
        *self.tools.write_unpoisoned() = Arc::from(tools);
        self.listed.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// The definitions of the last listing, as pins (`None` before any).
    pub(crate) fn live_pins(&self) -> Option<ServerPins> {
        if !self.listed.load(std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        let tools = self.tools.read_unpoisoned().clone();
        let mut pins = ServerPins::new();
        for t in tools.iter() {
            pins = pins.tool(t.bare_name(), t.definition.clone());
        }
        Some(pins)
    }

    /// The drift the last listing found.
    pub(crate) fn drift(&self) -> Vec<ToolDrift> {
        self.drift.read_unpoisoned().clone()
    }

    /// Turns a listing into tools: filtered, named, checked for collisions,
    /// compared with the pins; with the drift found.
    fn build_tools(
        &self,
        remote: &[rmcp::model::Tool],
    ) -> Result<(Vec<Arc<RemoteTool>>, Vec<ToolDrift>), McpError> {
        let mut names = ToolNames::new();
        let mut out = Vec::with_capacity(remote.len());
        let allows = self.entry.tools.matcher();
        let listing = Listing {
            approval: &self.entry.approval,
            trust: self.entry.trust,
            identity: Some(&self.identity),
            pins: self.pin_check.as_ref(),
            defer: self.entry.defer,
        };
        let mut drift = Vec::new();
        for t in remote {
            if !allows(&t.name) {
                continue;
            }
            let Some(name) = names.insert_listed(self.naming, &self.name, &t.name)? else {
                continue;
            };
            let tool = RemoteTool::new(name, &self.name, t, &listing);
            if let Some(pin) = &tool.spec_ref().pin
                && pin.state != PinState::Pinned
            {
                drift.push(ToolDrift::new(
                    &self.name,
                    tool.bare_name(),
                    pin.state,
                    pin.changes.clone(),
                ));
            }
            out.push(tool);
        }
        if let Some(check) = &self.pin_check {
            let listed: Vec<&str> = remote.iter().map(|t| t.name.as_ref()).collect();
            drift.extend(check.removed(&self.name, &listed, &allows));
        }
        Ok((out, drift))
    }

    /// Refreshes the tools when the server announces a change: the legacy
    /// notification reaches our handler; on 2026-07-28 a listen stream
    /// carries it.
    async fn watch_list_changes(&self, live: &Live) {
        let wants = live
            .peer()
            .peer_info()
            .and_then(|info| {
                info.capabilities
                    .tools
                    .as_ref()
                    .and_then(|t| t.list_changed)
            })
            .unwrap_or(false);
        if !wants {
            return;
        }
        let changed = live.handler.tools_changed.clone();
        let seen = live.handler.changes_seen.clone();
        let applied = live.refreshed.clone();
        let modern = live
            .peer()
            .peer_info()
            .is_some_and(|info| carries_request_meta(&info.protocol_version));
        if modern {
            let filter = rmcp::model::SubscriptionFilter::builder()
                .tools_list_changed()
                .build();
            match live.peer().listen(filter).await {
                Ok(mut sub) => {
                    let signal = changed.clone();
                    let seen = seen.clone();
                    live.add_task(tokio::spawn(async move {
                        while let Ok(Some(_)) = sub.next().await {
                            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                            signal.notify_one();
                        }
                    }));
                }
                Err(e) => {
                    tracing::debug!(server = %self.name, error = %e, "no tools list_changed stream")
                }
            }
        }
        let this = self.this.clone();
        let peer = live.peer().clone();
        live.add_task(tokio::spawn(async move {
            loop {
                changed.notified().await;
                let target = seen.load(std::sync::atomic::Ordering::SeqCst);
                let Some(conn) = this.upgrade() else { return };
                let listed = peer.list_all_tools().await;
                // Mark it handled even when listing failed: nobody waits forever.
                let _ = applied.send_replace(target);
                match listed {
                    Ok(remote) => match conn.build_tools(&remote) {
                        Ok(tools) => {
                            tracing::debug!(server = %conn.name, count = tools.0.len(), "MCP tools changed");
                            conn.set_tools(tools);
                            conn.record(peer.peer_info().as_deref(), &remote);
                        }
                        Err(e) => tracing::warn!(server = %conn.name, error = %e, "keeping the old tool list"),
                    },
                    Err(e) => {
                        tracing::debug!(server = %conn.name, error = %e, "could not refresh tools");
                        if peer.is_transport_closed() {
                            return;
                        }
                    }
                }
            }
        }));
    }
}

impl Connection {
    /// Why an `oauth` entry could not connect, as an [`McpError`].
    fn link_error(&self, e: LinkError, url: &str) -> McpError {
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

fn with_diagnostics(reason: String, diagnostics: Option<String>) -> String {
    match diagnostics {
        Some(d) => format!("{reason}\n{d}"),
        None => reason,
    }
}

/// Says at debug level what the handshake `started` then agreed on: the
/// protocol version (and so the era), the server, its capabilities.
fn negotiated(server: &str, service: &RunningService<RoleClient, Handler>, started: Instant) {
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
fn rejects_initialize(e: &rmcp::service::ClientInitializeError) -> bool {
    use rmcp::service::ClientInitializeError as E;
    matches!(
        e,
        E::JsonRpcError(_) | E::NoCompatibleProtocolVersion { .. }
    )
}
