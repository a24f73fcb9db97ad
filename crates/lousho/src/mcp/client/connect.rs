//! `connect_mcp`: connect several servers up front and share their tools.

use super::catalog::{CatalogLink, DEFAULT_MANIFEST_MAX_AGE, ManifestStore};
use super::config::McpServer;
use super::connection::{Connection, ServerStatus};
use super::elicitation::ElicitationHandler;
use super::error::McpError;
use super::handler::Answerers;
use super::identity::ServerIdentity;
use super::naming::{ToolNames, ToolNaming, qualified_name};
use super::oauth::OAuthLink;
#[cfg(feature = "oauth")]
use super::oauth::{Authorizer, TokenStore};
use super::progress::{ProgressHook, ServerProgress};
use super::roots::{McpRoot, SharedRoots};
use super::sampling::SamplingHandler;
use super::warnings;
use crate::cassette::Cassette;
use crate::policy::{Pins, ToolDrift};
use crate::tool::{Tool, ToolOrigin, ToolSet, ToolSource, ToolSourceError};
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// What [`connect_mcp`] does when a server cannot connect.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnError {
    /// Close the servers that did connect and return the error (default).
    #[default]
    Throw,
    /// Leave the server out (it stays in [`status`](McpClient::status) as
    /// `Failed(reason)` and is not tried again) and warn through `tracing`
    /// (target [`LOG_TARGET`](super::LOG_TARGET)).
    Skip,
}

/// Options of [`connect_mcp`].
#[derive(Clone)]
#[non_exhaustive]
#[must_use]
pub struct ConnectOptions {
    /// What to do when a server cannot connect.
    pub on_error: OnError,
    /// After `close()` or a dropped connection, the next tool call reconnects
    /// (default true); with false it fails instead.
    pub lazy: bool,
    /// How tools are named.
    pub naming: ToolNaming,
    /// The token store of the servers with `oauth` (the product's
    /// `AgentStore.tokens`); required when any server has `oauth`.
    #[cfg(feature = "oauth")]
    pub tokens: Option<Arc<dyn TokenStore>>,
    /// Lets connections sign in (and step up scopes) by themselves; without
    /// one, a server with no usable grant reports `NeedsAuth` until an
    /// operator runs [`oauth::login`](super::oauth::login).
    #[cfg(feature = "oauth")]
    pub authorizer: Option<Arc<dyn Authorizer>>,
    /// Answers servers' `elicitation/create` requests; with one, the client
    /// declares the `elicitation` capability (otherwise it does not, and
    /// servers may not ask).
    pub elicitation: Option<Arc<dyn ElicitationHandler>>,
    /// Called with each progress notification a server sends about a call
    /// (see [`on_progress`](Self::on_progress)).
    pub progress: Option<ProgressHook>,
    /// The roots offered to every server (see [`roots`](Self::roots));
    /// `None` (the default): none, and `roots` is declared only to servers
    /// with roots of their own.
    pub roots: Option<Vec<McpRoot>>,
    /// Answers the sampling requests of servers whose entry allows them
    /// ([`McpServer::sampling`](crate::McpServer::sampling)); an agent sets
    /// one that asks its own model after an approval.
    pub sampling: Option<Arc<dyn SamplingHandler>>,
    /// Pinned tool definitions for every server (a lock file's); a server's
    /// own [`McpServer::pins`] win. With pins, a server's `pin` mode
    /// defaults to `warn`; a server missing from them has all its tools `new`.
    pub pins: Option<Arc<Pins>>,
    /// Where tool manifests are kept. With a store, every listing is
    /// recorded, and a server with a fresh manifest is not connected until
    /// one of its tools is called (status `Cataloged`). Without one (the
    /// default) nothing is written and servers connect on `ready()`.
    pub manifests: Option<Arc<dyn ManifestStore>>,
    /// How old a manifest may be and still be used ([`DEFAULT_MANIFEST_MAX_AGE`], 7 days).
    pub manifest_max_age: Duration,
    /// Records every server's MCP traffic into this
    /// [cassette](crate::cassette), or (replaying) answers from it with no
    /// process spawned and no socket opened.
    pub cassette: Option<Cassette>,
}

impl fmt::Debug for ConnectOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("ConnectOptions");
        s.field("on_error", &self.on_error)
            .field("lazy", &self.lazy)
            .field("naming", &self.naming);
        #[cfg(feature = "oauth")]
        s.field("tokens", &self.tokens)
            .field("authorizer", &self.authorizer);
        s.field("elicitation", &self.elicitation.is_some())
            .field("progress", &self.progress.is_some())
            .field("roots", &self.roots)
            .field("sampling", &self.sampling.is_some())
            .field("pins", &self.pins.as_ref().map(|p| p.servers.len()))
            .field("manifests", &self.manifests.is_some())
            .field("manifest_max_age", &self.manifest_max_age)
            .field("cassette", &self.cassette)
            .finish()
    }
}

impl Default for ConnectOptions {
    fn default() -> Self {
        Self {
            on_error: OnError::Throw,
            lazy: true,
            naming: ToolNaming::Prefixed,
            #[cfg(feature = "oauth")]
            tokens: None,
            #[cfg(feature = "oauth")]
            authorizer: None,
            elicitation: None,
            progress: None,
            roots: None,
            sampling: None,
            pins: None,
            manifests: None,
            manifest_max_age: DEFAULT_MANIFEST_MAX_AGE,
            cassette: None,
        }
    }
}

impl ConnectOptions {
    /// The defaults: `Throw`, lazy, `<server>__<tool>`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets what happens when a server cannot connect.
    pub fn on_error(mut self, on_error: OnError) -> Self {
        self.on_error = on_error;
        self
    }

    /// Sets lazy reconnection.
    pub fn lazy(mut self, lazy: bool) -> Self {
        self.lazy = lazy;
        self
    }

    /// Sets the naming style.
    pub fn naming(mut self, naming: ToolNaming) -> Self {
        self.naming = naming;
        self
    }

    /// Sets the token store of the servers with `oauth`.
    #[cfg(feature = "oauth")]
    pub fn tokens(mut self, tokens: Arc<dyn TokenStore>) -> Self {
        self.tokens = Some(tokens);
        self
    }

    /// Lets connections run the authorization themselves (see
    /// [`Authorizer`]).
    #[cfg(feature = "oauth")]
    pub fn authorizer(mut self, authorizer: Arc<dyn Authorizer>) -> Self {
        self.authorizer = Some(authorizer);
        self
    }

    /// Pins every server's tools to `pins` (e.g. [`Pins::load`] of a lock
    /// file); see [`Pins`].
    pub fn pins(mut self, pins: Pins) -> Self {
        self.pins = Some(Arc::new(pins));
        self
    }

    /// Calls `hook` with every `notifications/progress` a server sends about
    /// a call: its name, how far, the total when known, its message (the
    /// `lousho` command shows them on its spinner line). Called on the
    /// connection's task: keep it quick.
    pub fn on_progress(mut self, hook: impl Fn(ServerProgress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(hook));
        self
    }

    /// Answers servers' elicitation requests with `handler` (and declares
    /// the `elicitation` capability); see [`ElicitationHandler`].
    pub fn elicitation(mut self, handler: impl ElicitationHandler) -> Self {
        self.elicitation = Some(Arc::new(handler));
        self
    }

    /// Offers `roots` to every server (`roots/list`; an agent spec offers its
    /// `workspace`), besides each server's own
    /// ([`McpServer::roots`](crate::McpServer::roots)); change them later
    /// with [`McpClient::set_roots`].
    ///
    /// ```
    /// use lousho::mcp::{ConnectOptions, McpRoot};
    /// let options = ConnectOptions::new().roots([McpRoot::folder("/srv/project")]);
    /// # let _ = options;
    /// ```
    pub fn roots(mut self, roots: impl IntoIterator<Item = McpRoot>) -> Self {
        self.roots = Some(roots.into_iter().collect());
        self
    }

    /// Answers sampling requests with `handler` — only those of servers
    /// whose entry allows them ([`McpServer::sampling`](crate::McpServer::sampling));
    /// the client declares `sampling` to those servers alone.
    pub fn sampling(mut self, handler: impl SamplingHandler) -> Self {
        self.sampling = Some(Arc::new(handler));
        self
    }

    /// Keeps tool manifests in `store` and connects a server with a fresh
    /// one only when one of its tools is first called (see
    /// [the catalog](crate::mcp#catalog)).
    ///
    /// ```
    /// use lousho::mcp::ConnectOptions;
    /// use lousho::mcp::DiskManifestStore;
    /// # fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let options = ConnectOptions::new().manifests(std::sync::Arc::new(DiskManifestStore::from_env()?));
    /// # let _ = options; Ok(()) }
    /// ```
    pub fn manifests(mut self, store: Arc<dyn ManifestStore>) -> Self {
        self.manifests = Some(store);
        self
    }

    /// Records the servers' traffic into `cassette`, or replays it from it
    /// (see [`crate::cassette`]): replaying, no server is spawned or dialled.
    pub fn cassette(mut self, cassette: Cassette) -> Self {
        self.cassette = Some(cassette);
        self
    }

    /// Sets how old a manifest may be and still be used.
    pub fn manifest_max_age(mut self, max_age: Duration) -> Self {
        self.manifest_max_age = max_age;
        self
    }
}

/// Connected MCP servers and their tools. Cheap to clone; one handle can feed
/// several agents (pass [`tools`](McpClient::tools), or the handle itself as a
/// tool source so tool-list changes show up).
///
/// The tools hold their servers' connections: they keep working after every
/// handle is dropped (`let tools = connect_mcp(..).await?.tools();`), and the
/// servers stop when the last handle and the last tool are gone, or at once
/// on [`close`](McpClient::close).
#[derive(Clone)]
pub struct McpClient {
    inner: Arc<Inner>,
}

struct Inner {
    servers: BTreeMap<String, Arc<Connection>>,
    /// Servers [`OnError::Skip`] left out, with the reason.
    skipped: BTreeMap<String, String>,
    options: ConnectOptions,
    /// The roots offered to every server (changed by `set_roots`).
    roots: SharedRoots,
}

impl fmt::Debug for McpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpClient")
            .field("status", &self.status())
            .finish()
    }
}

/// Connects every server (in parallel) and lists its tools before it returns
/// — except, with a [manifest store](ConnectOptions::manifests), the servers
/// whose fresh manifest gives their tools: those are `Cataloged` and connect
/// when one of their tools is first called.
///
/// The product page's `logger` option is a `tracing` subscriber here: the
/// skipped-server and skipped-tool warnings are `WARN` events with the target
/// [`LOG_TARGET`](super::LOG_TARGET) (`lousho::mcp`), e.g.
/// `tracing_subscriber::fmt().with_env_filter("lousho::mcp=warn").init()`.
/// The tools hold their connections, so
/// `let tools = connect_mcp(..).await?.tools();` works; see [`McpClient`].
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use lousho::{McpServer, connect_mcp};
/// use lousho::mcp::{ConnectOptions, OnError};
/// let mcp = connect_mcp(
///     [("files", McpServer::stdio("npx").args(["-y", "@modelcontextprotocol/server-filesystem", "."]))],
///     ConnectOptions::default().on_error(OnError::Skip),
/// )
/// .await?;
/// println!("{:?}", mcp.status()); // {"files": Connected}
/// let agent = lousho::Agent::builder().model("openai/gpt-4o-mini").tools(mcp.tools()).build()?;
/// agent.send("List the files here.").await?;
/// mcp.close().await;
/// # Ok(()) }
/// ```
pub async fn connect_mcp<I, N>(servers: I, options: ConnectOptions) -> Result<McpClient, McpError>
where
    I: IntoIterator<Item = (N, McpServer)>,
    N: Into<String>,
{
    let client = McpClient::new(servers, options);
    if let Some(server) = client
        .inner
        .servers
        .values()
        .find(|c| c.needs_token_store())
    {
        return Err(McpError::TokensRequired {
            server: server.name().to_owned(),
        });
    }
    let conns: Vec<Arc<Connection>> = client.inner.servers.values().cloned().collect();
    let results = futures::future::join_all(conns.iter().map(|c| c.ready())).await;
    let mut failed = Vec::new();
    for (conn, result) in conns.iter().zip(results) {
        match result {
            // Not signed in: the server stays (status `NeedsAuth`) without tools.
            Err(McpError::NeedsAuth { .. }) => warnings::needs_sign_in(conn.name()),
            Err(e) => failed.push((conn.name().to_owned(), e)),
            Ok(_) => {}
        }
    }
    if let Some((_, first)) = failed.first()
        && client.inner.options.on_error == OnError::Throw
    {
        let first = first.clone();
        client.close().await;
        return Err(first);
    }
    let client = if failed.is_empty() {
        client
    } else {
        for (name, error) in &failed {
            warnings::skipped_server(name, error);
        }
        let mut servers = client.inner.servers.clone();
        let mut skipped = BTreeMap::new();
        for (name, error) in failed {
            servers.remove(&name);
            skipped.insert(name, error.to_string());
        }
        McpClient {
            inner: Arc::new(Inner {
                servers,
                skipped,
                options: client.inner.options.clone(),
                roots: client.inner.roots.clone(),
            }),
        }
    };
    if let Err(e) = client.check_names() {
        client.close().await;
        return Err(e);
    }
    Ok(client)
}

impl McpClient {
    /// A handle that connects nothing yet (what `AgentBuilder::mcp_server`
    /// uses): servers connect on `ready()` or the first call.
    pub fn new<I, N>(servers: I, options: ConnectOptions) -> Self
    where
        I: IntoIterator<Item = (N, McpServer)>,
        N: Into<String>,
    {
        let roots = SharedRoots::new(options.roots.clone());
        let answerers = Answerers {
            elicitation: options.elicitation.clone(),
            progress: options.progress.clone(),
            roots: roots.clone(),
            sampling: options.sampling.clone(),
        };
        let servers = servers
            .into_iter()
            .map(|(name, mut entry)| {
                let name = name.into();
                if entry.pins.is_none()
                    && let Some(pins) = &options.pins
                {
                    entry.pins = Some(pins.get(&name).cloned().unwrap_or_default());
                }
                #[cfg(feature = "oauth")]
                let oauth = OAuthLink::for_entry(
                    &entry,
                    options.tokens.clone(),
                    options.authorizer.clone(),
                );
                #[cfg(not(feature = "oauth"))]
                let oauth = OAuthLink::for_entry(&entry);
                let catalog = options.manifests.as_ref().map(|store| {
                    CatalogLink::new(
                        store.clone(),
                        ServerIdentity::of(&entry),
                        options.manifest_max_age,
                    )
                });
                let conn = Connection::new(
                    name.clone(),
                    entry,
                    options.naming,
                    options.lazy,
                    oauth,
                    answerers.clone(),
                    catalog,
                    options.cassette.clone(),
                );
                (name, conn)
            })
            .collect();
        Self {
            inner: Arc::new(Inner {
                servers,
                skipped: BTreeMap::new(),
                options,
                roots,
            }),
        }
    }

    /// Every server's tools, keyed by full name (`<server>__<tool>`). They
    /// hold their connections: they keep working when this handle is
    /// dropped, and [`close`](McpClient::close) still closes them.
    pub fn tools(&self) -> ToolSet {
        let mut set = ToolSet::new();
        for tool in self.tool_list() {
            let spec = tool.spec();
            if set.contains(&spec.name) {
                if let ToolOrigin::Mcp { server, tool } = &spec.origin {
                    let reason = format!("another tool is named `{}` already", spec.name);
                    warnings::skipped_tool(server, tool, &reason);
                }
                continue;
            }
            let _ = set.insert(tool);
        }
        set
    }

    /// One server's tools.
    pub fn server_tools(&self, server: &str) -> Result<ToolSet, McpError> {
        let conn = self.connection(server)?;
        let mut set = ToolSet::new();
        for tool in conn.tools() {
            let _ = set.insert(tool);
        }
        Ok(set)
    }

    fn tool_list(&self) -> Vec<Arc<dyn Tool>> {
        self.inner
            .servers
            .values()
            .flat_map(|c| c.tools())
            .collect()
    }

    /// The tool definitions the connected servers list now, as [`Pins`]
    /// (what `lousho pin` writes to the lock file): each server's tools that
    /// pass its filter, held-back ones included.
    pub fn live_pins(&self) -> Pins {
        let mut pins = Pins::new();
        for (name, conn) in &self.inner.servers {
            if let Some(server) = conn.live_pins() {
                pins = pins.server(name.clone(), server);
            }
        }
        pins
    }

    /// Every server's drift from its pins as of its last listing (servers
    /// that compare: `pin: warn | enforce`): new, changed and removed tools.
    pub fn drift(&self) -> Vec<ToolDrift> {
        self.inner
            .servers
            .values()
            .flat_map(|c| c.drift())
            .collect()
    }

    /// Each server's state; a server [`OnError::Skip`] left out is
    /// `Failed(reason)`.
    pub fn status(&self) -> BTreeMap<String, ServerStatus> {
        let skipped = self
            .inner
            .skipped
            .iter()
            .map(|(n, reason)| (n.clone(), ServerStatus::Failed(reason.clone())));
        self.inner
            .servers
            .iter()
            .map(|(n, c)| (n.clone(), c.status()))
            .chain(skipped)
            .collect()
    }

    /// The names of the servers in use (without the ones
    /// [`OnError::Skip`] left out).
    pub fn server_names(&self) -> impl Iterator<Item = &str> {
        self.inner.servers.keys().map(String::as_str)
    }

    /// When the listing `server`'s tools come from was fetched, when it is a
    /// recorded one (with a manifest store): for a `Cataloged` server the
    /// manifest's age, for a connected one its last recorded listing.
    pub fn listed_at(&self, server: &str) -> Result<Option<std::time::SystemTime>, McpError> {
        Ok(self.connection(server)?.listed_at())
    }

    /// The servers that may own the tool `name`, best first: the server
    /// whose current tools (live or from its manifest) include it; else the
    /// servers whose naming prefix (`<server>__`) the name starts with. Empty
    /// when no server fits (connect the others to find out).
    pub fn servers_for_tool(&self, name: &str) -> Vec<String> {
        for (server, conn) in &self.inner.servers {
            if conn.tools().iter().any(|t| t.spec().name == name) {
                return vec![server.clone()];
            }
        }
        self.inner
            .servers
            .keys()
            .filter(|server| {
                let probe = qualified_name(self.inner.options.naming, server, "x");
                let prefix = probe.strip_suffix('x').unwrap_or(&probe);
                name.starts_with(prefix)
            })
            .cloned()
            .collect()
    }

    /// Connects one server (unless connected), even a `Cataloged` one.
    pub async fn connect_server(&self, server: &str) -> Result<(), McpError> {
        self.connection(server)?.connect().await.map(|_| ())
    }

    /// Connects what a run needs now: every server that is not connected,
    /// except the `Cataloged` ones (they connect on their first call).
    /// Failures are handled as by [`connect_all`](Self::connect_all).
    pub async fn connect_needed(&self) -> Result<(), McpError> {
        let conns: Vec<&Arc<Connection>> = self.inner.servers.values().collect();
        let results = futures::future::join_all(conns.iter().map(|c| c.ready())).await;
        self.settle(&conns, results)
    }

    /// How many times `server` was (re)connected or tried; for diagnostics.
    pub fn connect_attempts(&self, server: &str) -> Result<u64, McpError> {
        Ok(self.connection(server)?.attempts())
    }

    pub(super) fn connection(&self, server: &str) -> Result<&Arc<Connection>, McpError> {
        self.inner
            .servers
            .get(server)
            .ok_or_else(|| McpError::UnknownServer {
                server: server.to_owned(),
            })
    }

    /// Connects every server that is not connected (`Cataloged` ones
    /// too, which refreshes their manifests), in parallel; the first
    /// failure (in name order) is returned after all attempts finished.
    /// With [`OnError::Skip`] a server that cannot connect is left out
    /// instead (a `tracing` warning; its status says `Failed`), and the
    /// next `connect_all` (an agent's next run) tries it again.
    pub async fn connect_all(&self) -> Result<(), McpError> {
        let conns: Vec<&Arc<Connection>> = self.inner.servers.values().collect();
        let results = futures::future::join_all(
            conns
                .iter()
                .map(|c| async { c.connect().await.map(|_| ()) }),
        )
        .await;
        self.settle(&conns, results)
    }

    /// The outcome of connecting `conns`: `NeedsAuth` is no failure, a
    /// failure is a warning with [`OnError::Skip`], else the first is returned.
    fn settle(
        &self,
        conns: &[&Arc<Connection>],
        results: Vec<Result<(), McpError>>,
    ) -> Result<(), McpError> {
        for (conn, r) in conns.iter().zip(results) {
            match r {
                // Not signed in: no tools from that server; the rest keeps working.
                Err(McpError::NeedsAuth { .. }) | Ok(_) => {}
                Err(e) if self.inner.options.on_error == OnError::Skip => {
                    warnings::skipped_server(conn.name(), &e);
                }
                Err(e) => return Err(e),
            }
        }
        self.check_names()
    }

    /// Replaces the roots offered to every server (those of
    /// [`ConnectOptions::roots`]) and tells each connected server that was
    /// offered roots (`notifications/roots/list_changed`, 2025-11-25; a
    /// 2026-07-28 server asks for them when it needs them). Servers that
    /// connect later get the new ones.
    pub async fn set_roots(&self, roots: impl IntoIterator<Item = McpRoot>) {
        self.inner.roots.set(roots.into_iter().collect());
        futures::future::join_all(self.inner.servers.values().map(|c| c.roots_changed())).await;
    }

    /// Disconnects every server and stops every stdio process group.
    /// Idempotent; with `lazy` a later tool call reconnects.
    pub async fn close(&self) {
        futures::future::join_all(self.inner.servers.values().map(|c| c.close())).await;
    }

    /// Two servers' tools ending with one name is an error naming both.
    fn check_names(&self) -> Result<(), McpError> {
        let mut names = ToolNames::new();
        for tool in self.tool_list() {
            let spec = tool.spec();
            if let ToolOrigin::Mcp { server, tool } = &spec.origin {
                let name = names.insert(self.inner.options.naming, server, tool)?;
                debug_assert_eq!(name, spec.name);
            }
        }
        Ok(())
    }
}

#[async_trait]
impl ToolSource for McpClient {
    fn name(&self) -> &str {
        "mcp"
    }

    /// Connects what is not connected (but a `Cataloged` server); without
    /// `lazy`, a server that was closed or dropped stays down (its tools'
    /// calls fail).
    async fn ready(&self) -> Result<(), ToolSourceError> {
        self.connect_needed()
            .await
            .map_err(|e| ToolSourceError::new("mcp", e))
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tool_list()
    }

    /// The servers' `instructions` (see [`McpServer::instructions`]).
    fn instructions(&self) -> Option<String> {
        self.context_instructions()
    }

    async fn close(&self) {
        McpClient::close(self).await;
    }
}
