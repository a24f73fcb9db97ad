//! One server's lifecycle: idle → connecting (one shared in-flight attempt)
//! → connected → (closed | dropped | failed) → connecting again on demand.

use super::call::{CallTarget, ManagedCalls};
use super::catalog::{CacheHint, CatalogLink};
use super::config::McpServer;
use super::error::McpError;
use super::handler::Answerers;
use super::identity::ServerIdentity;
use super::live::Live;
use super::naming::ToolNaming;
use super::oauth::OAuthLink;
use super::offers::Offers;
use super::pinning::PinCheck;
use super::tool::{McpTool, RemoteTool};
use crate::policy::ToolDrift;
use crate::sync::{MutexExt, RwLockExt};
use crate::tool::Tool;
use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use resource_tools::MadeResourceTools;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, SystemTime};

mod cassette;
mod offer_watch;
mod open;
mod resource_tools;
mod tool_calls;
mod tool_list;

use open::with_diagnostics;

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
    /// Who answers the server's requests and hears its notifications.
    answerers: Answerers,
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
    /// The server's resources, templates, prompts and instructions as last
    /// listed (live, or from its manifest); `None` before any listing.
    offers: RwLock<Option<Arc<Offers>>>,
    /// The resource tools last made from the offers.
    made_resources: Mutex<MadeResourceTools>,
    /// Where its traffic is recorded, or replayed from.
    cassette: Option<crate::cassette::Cassette>,
}

impl Connection {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        name: String,
        entry: McpServer,
        naming: ToolNaming,
        lazy: bool,
        oauth: Option<OAuthLink>,
        answerers: Answerers,
        catalog: Option<CatalogLink>,
        cassette: Option<crate::cassette::Cassette>,
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
            answerers,
            catalog,
            offers: RwLock::new(None),
            made_resources: Mutex::new(MadeResourceTools::default()),
            cassette,
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
                if let Some(offers) = manifest.checked_offers() {
                    self.set_offers(offers);
                }
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
    fn record(
        &self,
        info: Option<&rmcp::model::ServerPeerInfo>,
        tools: &[rmcp::model::Tool],
        hint: CacheHint,
    ) {
        if let Some(catalog) = &self.catalog {
            let offers = self.offers();
            let manifest = catalog.record(&self.name, info, tools, offers.as_deref(), hint);
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

    /// The server's entry.
    pub(crate) fn entry(&self) -> &McpServer {
        &self.entry
    }

    /// How its tools are named.
    pub(crate) fn naming(&self) -> ToolNaming {
        self.naming
    }

    /// The digest of its identity (remembered approvals' key).
    pub(crate) fn identity(&self) -> &str {
        &self.identity
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

    /// The tools as last listed (kept across reconnects), then the
    /// resource tools when the server has resources. Each holds this
    /// connection, so it keeps working after the handle is dropped. The same
    /// `Arc`s as the previous call while the listing is unchanged and those
    /// tools are still held somewhere.
    pub(crate) fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let Some(this) = self.this.upgrade() else {
            return Vec::new();
        };
        let mut tools = self.listed_tools(&this);
        if let Some(offers) = self.offers() {
            tools.extend(self.made_resources.lock_unpoisoned().get(&this, &offers));
        }
        tools
    }

    /// The server's own tools as last listed.
    fn listed_tools(&self, this: &Arc<Self>) -> Vec<Arc<dyn Tool>> {
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

    /// Tells the server its roots changed (`notifications/roots/list_changed`),
    /// when it is connected, was offered roots and speaks 2025-11-25 (a
    /// 2026-07-28 server asks for them each time).
    pub(crate) async fn roots_changed(&self) {
        let live = match &self.lock().state {
            Phase::Connected(live) if live.dead_reason().is_none() => live.clone(),
            _ => return,
        };
        let handshake = live
            .peer()
            .peer_info()
            .is_some_and(|i| crate::mcp::protocol::uses_handshake(&i.protocol_version));
        if !handshake || !live.handler.roots.declared() {
            return;
        }
        #[allow(deprecated)] // roots: deprecated by SEP-2577, spoken by servers still
        if let Err(e) = live.peer().notify_roots_list_changed().await {
            tracing::debug!(server = %self.name, error = %e, "could not tell the MCP server its roots changed");
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
}
