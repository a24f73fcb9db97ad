//! From a spec file to a ready agent: load, build, connect its MCP servers.

mod chain;

use crate::approve;
use crate::progress::Spinner;
use crate::servers::Servers;
use lousho::Agent;
use lousho::cassette::Cassette;
use lousho::mcp::DiskManifestStore;
use lousho::mcp::{McpClient, McpError, ServerStatus};
use lousho::model::ModelError;
use lousho::spec::{AgentSpec, SpecLoader};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// Who answers approval questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approvals {
    /// The terminal (y/n/always, and servers' questions); denied with a hint
    /// when stdin is not one (and servers are told nobody can answer).
    Terminal,
    /// The terminal when stdin is one; otherwise nobody, so a call that
    /// needs approval pauses the run (`lousho run` then saves it for
    /// `lousho resume`).
    TerminalOrPause,
    /// Nobody: a call that needs approval pauses the run (serving over MCP
    /// turns that into an `isError` result).
    Nobody,
}

impl Approvals {
    /// Whether the terminal answers approval questions.
    fn asks_terminal(self) -> bool {
        match self {
            Approvals::Terminal => true,
            Approvals::TerminalOrPause => std::io::IsTerminal::is_terminal(&std::io::stdin()),
            Approvals::Nobody => false,
        }
    }
}

/// The model to use instead of the spec's.
#[derive(Clone)]
pub enum ModelChoice<'a> {
    /// The spec's own.
    Spec,
    /// A model string from the command line.
    Named(&'a str),
    /// A model value.
    Model(Arc<dyn lousho::Model>),
}

/// Reads a spec file. `${LOUSHO_BIN}` is this very binary unless the
/// environment sets it, so a spec can mount a second `lousho mcp` as a stdio
/// server without `lousho` being on `PATH`. `LOUSHO_SPEC_MAX_BYTES` raises or
/// lowers the size limit for spec files (default 1 MiB).
pub fn spec(path: &Path) -> anyhow::Result<AgentSpec> {
    let mut loader = SpecLoader::new();
    if let Some(limit) = std::env::var_os("LOUSHO_SPEC_MAX_BYTES") {
        let bytes = limit.to_str().and_then(|l| l.trim().parse::<u64>().ok());
        let Some(bytes) = bytes else {
            anyhow::bail!(
                "LOUSHO_SPEC_MAX_BYTES={}: not a number of bytes; set it to e.g. 4194304 or unset it",
                limit.to_string_lossy()
            );
        };
        loader = loader.max_file_bytes(bytes);
    }
    if std::env::var_os("LOUSHO_BIN").is_none()
        && let Ok(exe) = std::env::current_exe()
    {
        loader = loader.var("LOUSHO_BIN", exe.to_string_lossy());
    }
    let mut spec = match host_config(path) {
        // Another client's MCP config given where a spec goes
        // (`lousho tools claude_desktop_config.json`): its servers, the
        // model from LOUSHO_MODEL (or --model), else the test model.
        Some(name) => loader.parse(
            &format!(
                "model: ${{LOUSHO_MODEL:-test}}\nmcpServers: {}\n",
                serde_json::to_string(&name)?
            ),
            path,
        )?,
        None => loader.load(path)?,
    };
    chain::enter(&mut spec)?;
    Ok(spec)
}

/// The file name of `path` when it is another client's MCP config rather
/// than a spec: a `.toml` file (Codex), or a `.json` file with `mcpServers`
/// or `servers` and no spec keys (Claude Code, Claude Desktop, Cursor, VS Code).
fn host_config(path: &Path) -> Option<String> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    let name = path.file_name()?.to_string_lossy().into_owned();
    match ext.as_str() {
        "toml" => Some(name),
        "json" => {
            let text = std::fs::read_to_string(path).ok()?;
            let value: serde_json::Value = serde_json::from_str(&text).ok()?;
            let top = value.as_object()?;
            let servers = top.contains_key("mcpServers") || top.contains_key("servers");
            let spec_keys = ["model", "prompt", "tools", "permissions", "serve"];
            (servers && !spec_keys.iter().any(|k| top.contains_key(*k))).then_some(name)
        }
        _ => None,
    }
}

/// Builds the agent; its MCP servers go through one [`McpClient`] (in
/// [`Servers`]) the caller can connect (with progress) and ask for status.
/// With `catalog`, tool manifests are kept on disk
/// ([`DiskManifestStore::from_env`]) and servers with a fresh one start only
/// when one of their tools is called.
///
/// The agents of the spec's `agents:` that it lists among its `tools` are
/// built too (dropped with it: their servers stop on drop); use
/// [`build_team`] to run or serve them.
pub fn build(
    spec: &AgentSpec,
    model: ModelChoice<'_>,
    approvals: Approvals,
    tokens: Option<&Path>,
    catalog: bool,
) -> anyhow::Result<(Agent, Option<Servers>)> {
    let team = build_team(spec, model.clone(), approvals, tokens, catalog, None)?;
    build_one(spec, model, approvals, tokens, catalog, &team, None)
}

/// Builds the agent to run: the spec's top agent, or with `agent` the one of
/// its `agents:` by that name; with the team, to close at the end. With a
/// `cassette`, every agent's model and MCP servers go through it.
pub fn build_chosen(
    spec: &AgentSpec,
    agent: Option<&str>,
    model: ModelChoice<'_>,
    approvals: Approvals,
    tokens: Option<&Path>,
    catalog: bool,
    cassette: Option<&Cassette>,
) -> anyhow::Result<(Agent, Option<Servers>, Team)> {
    let team = build_team(spec, model.clone(), approvals, tokens, catalog, cassette)?;
    let (agent, mcp) = match agent {
        None => build_one(spec, model, approvals, tokens, catalog, &team, cassette)?,
        Some(name) => match team.agents.get(name) {
            Some(chosen) => chosen.clone(),
            None => {
                let names: Vec<&str> = team.agents.keys().map(String::as_str).collect();
                anyhow::bail!(crate::exit::Usage(format!(
                    "--agent {name}: {} has no agent `{name}` under `agents:`; {}",
                    spec.path.display(),
                    if names.is_empty() {
                        "it defines none".to_owned()
                    } else {
                        format!("its agents are: {}", names.join(", "))
                    }
                )));
            }
        },
    };
    Ok((agent, mcp, team))
}

/// The agents of a spec's `agents:`, built (each with the agents it calls
/// as tools), with their MCP servers.
pub struct Team {
    /// By name: the agent and its servers.
    pub agents: BTreeMap<String, (Agent, Option<Servers>)>,
}

impl Team {
    /// Closes every agent's servers.
    pub async fn close(&self) {
        futures::future::join_all(self.agents.values().map(|(a, _)| a.close())).await;
    }
}

/// Builds the agents of `spec`'s `agents:` (each after those it calls),
/// through `cassette` when there is one.
pub fn build_team(
    spec: &AgentSpec,
    model: ModelChoice<'_>,
    approvals: Approvals,
    tokens: Option<&Path>,
    catalog: bool,
    cassette: Option<&Cassette>,
) -> anyhow::Result<Team> {
    let mut agents = BTreeMap::new();
    for name in spec.agent_order() {
        let Some(sub) = spec.agents.get(name) else {
            continue;
        };
        let team = Team { agents };
        let built = build_one(
            sub,
            model.clone(),
            approvals,
            tokens,
            catalog,
            &team,
            cassette,
        )
        .map_err(|e| e.context(format!("agents.{name}")))?;
        agents = team.agents;
        agents.insert(name.to_owned(), built);
    }
    Ok(Team { agents })
}

/// Builds one agent of a spec file (the top one or one of its `agents`),
/// giving it the agents of `team` it lists among its tools. With a
/// `cassette` (`lousho run --record/--replay`), its model and its MCP
/// servers are recorded into it or replayed from it.
pub fn build_one(
    spec: &AgentSpec,
    model: ModelChoice<'_>,
    approvals: Approvals,
    tokens: Option<&Path>,
    catalog: bool,
    team: &Team,
    cassette: Option<&Cassette>,
) -> anyhow::Result<(Agent, Option<Servers>)> {
    let mut builder = spec.agent_builder_without_mcp()?;
    let built: BTreeMap<String, Agent> = team
        .agents
        .iter()
        .map(|(n, (a, _))| (n.clone(), a.clone()))
        .collect();
    builder = builder.tools(
        spec.agent_tools_from(&built)
            .into_iter()
            .map(|t| Arc::new(t) as Arc<dyn lousho::Tool>)
            .collect::<Vec<_>>(),
    );
    builder = match model {
        ModelChoice::Spec => {
            if spec.model.is_none() {
                anyhow::bail!(
                    "{}: no `model:` in the spec; add one (e.g. `model: openai/gpt-4o-mini`, or `test` offline) or pass --model",
                    spec.path.display()
                );
            }
            builder
        }
        // One model from the command line replaces the spec's whole list.
        ModelChoice::Named(m) => builder.models([m]),
        ModelChoice::Model(m) => builder.models([m]),
    };
    let mut options = spec.mcp_options.clone();
    if approvals != Approvals::Nobody {
        options = crate::elicit::install(options);
        // Shown on the spinner (a terminal only; `lousho mcp` has none).
        options = options.on_progress(crate::progress::server_progress);
    }
    if let Some(store) = crate::tokens::for_servers(&spec.mcp_servers, tokens)? {
        options = options.tokens(store);
    }
    if let Some(cassette) = cassette {
        builder = builder.cassette(cassette.clone());
        options = options.cassette(cassette.clone());
    }
    if catalog && !spec.mcp_servers.is_empty() {
        match DiskManifestStore::from_env() {
            Ok(store) => options = options.manifests(Arc::new(store)),
            Err(e) => tracing::warn!("not using tool manifests: {e}"),
        }
    }
    let mut servers = spec.mcp_servers.clone();
    crate::logging::keep_from_children(&mut servers);
    let mcp = (!servers.is_empty()).then(|| {
        let client = McpClient::new(servers, options);
        // Servers offering the Skills extension add their skills.
        builder = std::mem::take(&mut builder).skill_source(Arc::new(client.clone()));
        Servers::new(client)
    });
    if let Some(mcp) = &mcp {
        builder = builder.tool_source(Arc::new(mcp.clone()));
    }
    if approvals.asks_terminal() {
        builder = approve::install(builder);
    }
    let agent = builder.build().map_err(|e| match e {
        lousho::agent::BuildError::Model(m @ ModelError::MissingApiKey { .. }) => {
            anyhow::Error::new(m)
        }
        other => anyhow::Error::new(other),
    })?;
    Ok((agent, mcp))
}

/// Connects the servers a run needs now (all of them with `refresh`; else
/// those without a fresh manifest), with a spinner (or a plain line when
/// stderr is not a terminal), then one status line per server on stderr.
#[allow(clippy::print_stderr)]
pub async fn connect(servers: &Servers, show: bool, refresh: bool) -> Result<(), McpError> {
    let mcp = servers.client();
    let status = mcp.status();
    let names: Vec<&str> = mcp
        .server_names()
        .filter(|n| refresh || status.get(*n) != Some(&ServerStatus::Cataloged))
        .collect();
    let spinner = (show && !names.is_empty())
        .then(|| Spinner::start(format!("connecting MCP servers: {}", names.join(", "))));
    let result = if refresh {
        mcp.connect_all().await
    } else {
        mcp.connect_needed().await
    };
    drop(spinner);
    if show {
        for (name, status) in mcp.status() {
            let tools = mcp.server_tools(&name).map(|t| t.len()).unwrap_or(0);
            match status {
                ServerStatus::Connected => eprintln!("mcp: {name} connected ({tools} tools)"),
                ServerStatus::Cataloged => {
                    eprintln!("mcp: {name} cataloged ({tools} tools; starts when one is called)")
                }
                ServerStatus::Failed(e) => eprintln!("mcp: {name} failed: {e}"),
                ServerStatus::NeedsAuth => eprintln!("mcp: {name} needs sign-in"),
                _ => eprintln!("mcp: {name} idle"),
            }
        }
    }
    result
}
