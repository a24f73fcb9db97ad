//! Serve an agent over MCP (documented at [`crate::mcp`], where its items
//! are re-exported).

mod agent_tool;
mod annotations;
mod approval;
mod arguments;
mod audit;
mod caller;
mod caller_store;
mod cancel;
mod catalog;
mod completion;
mod error;
mod handle;
mod handler;
mod http;
mod invalid_params;
mod limits;
mod mrtr;
mod options;
mod peer_channel;
pub(crate) mod prompts;
mod recover_id;
mod request_sweep;
mod resource_server;
mod resources;
mod result;
mod sessions;
mod shared_rounds;
mod shared_tasks;
#[cfg(feature = "builtin")]
mod skills;
mod stdio;
mod task_link;
mod task_owners;
mod task_records;
mod tasks;
mod transcripts;
mod uri_template;
#[cfg(feature = "builtin")]
mod workspace_files;

pub use catalog::ServerCatalog;
pub use completion::{CompletionRequest, MAX_COMPLETION_VALUES};
pub use prompts::{
    DefinedPrompt, IntoPromptMessages, PromptError, PromptMessage, PromptRole, define_prompt,
    define_prompt_with_context,
};
pub use resources::{
    DefinedResource, DefinedResourceTemplate, IntoResourceContent, ResourceContent, ResourceError,
    define_resource, define_resource_template,
};
pub use uri_template::UriTemplateError;
#[cfg(feature = "builtin")]
pub use workspace_files::{MAX_LISTED_FILES, WorkspaceFiles};

pub use error::ServeError;
pub use handle::McpServerHandle;
pub use limits::CallerLimits;
pub use options::{
    Auth, BearerToken, DEFAULT_APPROVAL_TIMEOUT, DEFAULT_BODY_TIMEOUT,
    DEFAULT_CLIENT_SHARE_PERCENT, DEFAULT_HEADER_TIMEOUT, DEFAULT_HTTP_PATH, DEFAULT_HTTP_PORT,
    DEFAULT_MAX_AGENT_RUNS, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CALLS, DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MIN_BODY_RATE, DEFAULT_PAGE_SIZE, HttpOptions, ParseServeApprovalsError,
    ServeApprovals, ServeOptions, ServeTransport, default_max_connections,
};
pub use resource_server::{DEFAULT_OAUTH_CLOCK_SKEW, OAuthResource, OAuthResourceError};

use crate::policy::Decision;
use crate::tool::{ToolSet, is_valid_tool_name, sanitize_tool_name};
use annotations::{agent_tool_annotations, is_exposed, to_rmcp_annotations};
use handler::{LoushoServer, Served};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Starts serving `options.agent` over MCP and returns a handle to the
/// running server. Over HTTP the port is bound before this returns
/// ([`McpServerHandle::local_addr`]); over stdio the server runs until stdin
/// closes ([`McpServerHandle::wait`]) or [`McpServerHandle::close`].
pub async fn serve_mcp(options: ServeOptions) -> Result<McpServerHandle, ServeError> {
    let ServeOptions {
        agent,
        name,
        description,
        tool_name,
        tools,
        agents: more_agents,
        transport,
        auth,
        approvals,
        approval_timeout,
        max_line_bytes,
        sessions: store,
        session_lease,
        resources,
        mut resource_templates,
        prompts,
        page_size,
        #[cfg(feature = "builtin")]
        skills,
        title,
        icons,
        transcripts,
        #[cfg(feature = "builtin")]
        files,
        caller_limits,
    } = options;
    let mut resources = resources;
    #[cfg(feature = "builtin")]
    let skills = match skills {
        Some(folder) => {
            let served = tokio::task::spawn_blocking(move || skills::ServedSkills::load(&folder))
                .await
                .map_err(|e| ServeError::Agent(crate::AgentError::Internal(e.to_string())))??;
            let served = std::sync::Arc::new(served);
            resources.extend(served.resources());
            Some(served)
        }
        None => None,
    };
    if let Some(Auth::Bearer(token)) = &auth
        && token.0.trim().is_empty()
    {
        return Err(ServeError::EmptyBearerToken);
    }
    let named = Named::of(&agent, name, description, tool_name, store.is_some())?;
    let guard = match (&transport, &auth) {
        (ServeTransport::Http(_), Some(auth)) => Some(http::Guard::new(auth, &named.server)?),
        _ => None,
    };
    let direct = exposed_direct_tools(&agent, &tools, approvals)?;
    let agent_tools = agent_tools(&agent, &named, more_agents, &direct, store.is_some()).await?;
    let shutdown = CancellationToken::new();
    if let Some(store) = transcripts {
        let (list, one) = transcripts::offers(store);
        resources.push(list);
        resource_templates.push(one);
    }
    #[cfg(feature = "builtin")]
    for f in &files {
        let (listed, template) = f.clone().offers(&shutdown).await;
        resources.extend(listed);
        resource_templates.push(template);
    }
    let mut agents = std::collections::HashMap::new();
    let mut agent_listed = Vec::with_capacity(agent_tools.len());
    for (mut tool, agent) in agent_tools {
        if tool.name == named.tool {
            tool.title.clone_from(&title);
            tool.icons = catalog::wire::icons(&icons);
        }
        agents.insert(tool.name.to_string(), agent);
        agent_listed.push(tool);
    }
    let catalog = ServerCatalog::new(catalog::Initial {
        agent: agent.clone(),
        approvals,
        page_size,
        identity: catalog::wire::Identity {
            name: named.server,
            title,
            icons,
            instructions: named.description,
        },
        agent_tools: agent_listed,
        direct,
        resources,
        templates: resource_templates,
        prompts,
    })?;
    #[cfg(feature = "builtin")]
    for f in files {
        tokio::spawn(f.watch(catalog.clone(), shutdown.clone()));
    }

    let limiter = limits::Limiter::new(caller_limits, store.as_ref());
    let server = LoushoServer::new(Served {
        limiter,
        agent,
        agents,
        catalog: catalog.clone(),
        shutdown: shutdown.clone(),
        store,
        lease: session_lease,
        #[cfg(feature = "builtin")]
        skills,
        approval: (approvals == ServeApprovals::Elicit).then_some(approval_timeout),
        answers: match &transport {
            ServeTransport::Stdio => true,
            ServeTransport::Http(http) => http.stateful,
        },
    });
    match transport {
        ServeTransport::Stdio => Ok(handle::spawn_stdio(
            server,
            max_line_bytes,
            shutdown,
            catalog,
        )),
        ServeTransport::Http(http_options) => {
            start_http(server, http_options, guard, shutdown, catalog).await
        }
    }
}

/// The names the server goes by: its own, its (first) agent tool's, and that
/// tool's description.
struct Named {
    server: String,
    tool: String,
    description: String,
}

impl Named {
    /// The names given, or the agent's, or defaults; a tool name MCP does not
    /// allow is an error.
    fn of(
        agent: &crate::Agent,
        name: Option<String>,
        description: Option<String>,
        tool_name: Option<String>,
        sessions: bool,
    ) -> Result<Self, ServeError> {
        let server = name
            .or_else(|| agent.name().map(str::to_owned))
            .unwrap_or_else(|| "lousho-agent".to_owned());
        let tool = tool_name.unwrap_or_else(|| match server.as_str() {
            "" => "agent".to_owned(),
            name => sanitize_tool_name(name),
        });
        if !is_valid_tool_name(&tool) {
            return Err(ServeError::InvalidToolName(tool));
        }
        let description = description
            .or_else(|| agent.description().map(str::to_owned))
            .unwrap_or_else(|| {
                if sessions {
                    sessions::default_description(&server)
                } else {
                    format!("Ask the {server} agent. Each call is a fresh conversation.")
                }
            });
        Ok(Self {
            server,
            tool,
            description,
        })
    }
}

/// The tools served directly that the agent's permission rules let through
/// (`approvals` decides for those that need approval); each one left out is
/// logged with how to expose it.
fn exposed_direct_tools(
    agent: &crate::Agent,
    tools: &[Arc<dyn crate::tool::Tool>],
    approvals: ServeApprovals,
) -> Result<ToolSet, ServeError> {
    let all = options::direct_tool_set(tools)?;
    if approvals == ServeApprovals::Allow
        && all
            .iter()
            .any(|t| annotations::decision(agent, t.as_ref()) == Decision::Ask)
    {
        tracing::warn!(
            "`approvals: allow`: tools that need approval are exposed and run with no human gate; any MCP client that can reach the server can call them"
        );
    }
    let mut direct = ToolSet::new();
    for tool in all.iter() {
        if is_exposed(agent, tool.as_ref(), approvals != ServeApprovals::Deny) {
            direct.insert(tool.clone())?;
            continue;
        }
        let name = &tool.spec().name;
        if annotations::decision(agent, tool.as_ref()) == Decision::Deny {
            tracing::warn!(tool = %name, "not exposing a tool the agent's permission rules deny");
        } else {
            tracing::warn!(
                tool = %name,
                "not exposing a tool that needs approval (ask the client's user with `ServeApprovals::Elicit` (spec: `serve.approvals: elicit`), allow it with a permission rule, or expose it without a human gate with `ServeApprovals::Allow` (spec: `serve.approvals: allow`))"
            );
        }
    }
    Ok(direct)
}

/// Each agent's tool (the first agent's first) with its agent; a name taken
/// twice (by agents or a direct tool) is an error naming both.
async fn agent_tools(
    agent: &crate::Agent,
    named: &Named,
    more_agents: Vec<(String, crate::Agent)>,
    direct: &ToolSet,
    sessions: bool,
) -> Result<Vec<(rmcp::model::Tool, crate::Agent)>, ServeError> {
    if let Some(clash) = direct.get(&named.tool) {
        return Err(crate::tool::DuplicateToolError {
            name: named.tool.clone(),
            first: format!("the agent tool (\"{}\")", named.description),
            second: format!("a direct tool (\"{}\")", clash.spec().description),
        }
        .into());
    }
    let listing = agent_listing(
        agent,
        named.tool.clone(),
        named.description.clone(),
        sessions,
    )
    .await?;
    let mut agent_tools = vec![(listing, agent.clone())];
    for (name, extra) in more_agents {
        if !is_valid_tool_name(&name) {
            return Err(ServeError::InvalidToolName(name));
        }
        let description = crate::agent::agent_description(&name, &extra);
        if let Some(first) = first_holder(&agent_tools, direct, &name) {
            return Err(crate::tool::DuplicateToolError {
                name,
                first,
                second: format!("the agent tool (\"{description}\")"),
            }
            .into());
        }
        let listing = agent_listing(&extra, name, description, sessions).await?;
        agent_tools.push((listing, extra));
    }
    Ok(agent_tools)
}

/// What already holds tool name `name`, as a duplicate-name error names it.
fn first_holder(
    agent_tools: &[(rmcp::model::Tool, crate::Agent)],
    direct: &ToolSet,
    name: &str,
) -> Option<String> {
    if let Some((tool, _)) = agent_tools.iter().find(|(t, _)| t.name == name) {
        return Some(format!(
            "the agent tool (\"{}\")",
            tool.description.as_deref().unwrap_or_default()
        ));
    }
    direct
        .get(name)
        .map(|t| format!("a direct tool (\"{}\")", t.spec().description))
}

/// Binds the HTTP listener and serves `server` behind the screen.
async fn start_http(
    server: LoushoServer,
    http_options: HttpOptions,
    guard: Option<http::Guard>,
    shutdown: CancellationToken,
    catalog: ServerCatalog,
) -> Result<McpServerHandle, ServeError> {
    let listener = http::bind(&http_options).await?;
    let bound = listener.local_addr()?;
    if guard.is_none() && !http::is_loopback(&http_options.host) {
        tracing::warn!(
            host = %http_options.host,
            "serving MCP on a non-loopback address without auth: anyone who can reach it can run the agent; require a bearer token (`Auth::bearer`; spec: `serve.auth`; lousho mcp: `--token-env VAR`)"
        );
    }
    let cancels = cancel::CancelRegistry::default();
    let app = http::router(server, cancels, &http_options, guard, bound, &shutdown);
    let limits = http::ConnLimits {
        header_timeout: http_options.header_timeout,
        max_connections: http_options.max_connections,
        min_body_rate: http_options.min_body_rate,
    };
    Ok(handle::spawn_http(
        listener,
        app,
        limits,
        bound,
        http_options.path,
        shutdown,
        catalog,
    ))
}

/// An agent's tool as `tools/list` shows it: `{ "message": string }` in,
/// annotations from the tools it can reach, its `outputSchema` (the agent's
/// output schema, `{reply, session}` with sessions on).
async fn agent_listing(
    agent: &crate::Agent,
    tool_name: String,
    description: String,
    sessions: bool,
) -> Result<rmcp::model::Tool, ServeError> {
    let reachable = if !agent.has_tool_sources() {
        Some(agent.tools()?)
    } else {
        match agent.ready().await {
            Ok(()) => Some(agent.tools()?),
            Err(e) => {
                tracing::warn!(error = %e, "a tool source is not ready; advertising the agent tool as not read-only");
                None
            }
        }
    };
    let annotations = agent_tool_annotations(agent, reachable.as_ref());
    let mut tool = rmcp::model::Tool::new(
        tool_name,
        description,
        Arc::new(match agent_tool::input_schema(sessions) {
            serde_json::Value::Object(o) => o,
            _ => serde_json::Map::new(),
        }),
    )
    .with_annotations(to_rmcp_annotations(&annotations));
    tool.output_schema = agent_tool::output_schema(agent, sessions).map(Arc::new);
    Ok(tool)
}
