//! Serve an agent over MCP (documented at [`crate::mcp`], where its items
//! are re-exported).

mod agent_tool;
mod annotations;
mod approval;
mod cancel;
mod error;
mod handle;
mod handler;
mod http;
mod invalid_params;
mod mrtr;
mod options;
mod peer_channel;
mod recover_id;
mod result;
mod sessions;
mod stdio;

pub use error::ServeError;
pub use handle::McpServerHandle;
pub use options::{
    Auth, BearerToken, DEFAULT_APPROVAL_TIMEOUT, DEFAULT_BODY_TIMEOUT,
    DEFAULT_CLIENT_SHARE_PERCENT, DEFAULT_HEADER_TIMEOUT, DEFAULT_HTTP_PATH, DEFAULT_HTTP_PORT,
    DEFAULT_MAX_AGENT_RUNS, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CALLS, DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MIN_BODY_RATE, HttpOptions, ParseServeApprovalsError, ServeApprovals, ServeOptions,
    ServeTransport, default_max_connections,
};

use crate::policy::Decision;
use crate::tool::{ToolSet, is_valid_tool_name, sanitize_tool_name};
use annotations::{agent_tool_annotations, is_exposed, to_rmcp_annotations, to_rmcp_tool};
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
    } = options;
    if let Some(Auth::Bearer(token)) = &auth
        && token.0.trim().is_empty()
    {
        return Err(ServeError::EmptyBearerToken);
    }
    let server_name = name
        .or_else(|| agent.name().map(str::to_owned))
        .unwrap_or_else(|| "lousho-agent".to_owned());
    let tool_name = tool_name.unwrap_or_else(|| match server_name.as_str() {
        "" => "agent".to_owned(),
        name => sanitize_tool_name(name),
    });
    if !is_valid_tool_name(&tool_name) {
        return Err(ServeError::InvalidToolName(tool_name));
    }
    let description = description
        .or_else(|| agent.description().map(str::to_owned))
        .unwrap_or_else(|| match store {
            Some(_) => sessions::default_description(&server_name),
            None => format!("Ask the {server_name} agent. Each call is a fresh conversation."),
        });

    let all_direct = options::direct_tool_set(&tools)?;
    if approvals == ServeApprovals::Allow
        && all_direct
            .iter()
            .any(|t| annotations::decision(&agent, t.as_ref()) == Decision::Ask)
    {
        tracing::warn!(
            "`approvals: allow`: tools that need approval are exposed and run with no human gate; any MCP client that can reach the server can call them"
        );
    }
    let mut direct = ToolSet::new();
    for tool in all_direct.iter() {
        if is_exposed(&agent, tool.as_ref(), approvals != ServeApprovals::Deny) {
            direct.insert(tool.clone())?;
        } else {
            let name = &tool.spec().name;
            if annotations::decision(&agent, tool.as_ref()) == Decision::Deny {
                tracing::warn!(tool = %name, "not exposing a tool the agent's permission rules deny");
            } else {
                tracing::warn!(
                    tool = %name,
                    "not exposing a tool that needs approval (ask the client's user with `ServeApprovals::Elicit` (spec: `serve.approvals: elicit`), allow it with a permission rule, or expose it without a human gate with `ServeApprovals::Allow` (spec: `serve.approvals: allow`))"
                );
            }
        }
    }
    if let Some(clash) = direct.get(&tool_name) {
        return Err(crate::tool::DuplicateToolError {
            name: tool_name.clone(),
            first: format!("the agent tool (\"{description}\")"),
            second: format!("a direct tool (\"{}\")", clash.spec().description),
        }
        .into());
    }

    let mut agent_tools = vec![(
        agent_listing(&agent, tool_name, description.clone(), store.is_some()).await?,
        agent.clone(),
    )];
    for (name, extra) in more_agents {
        if !is_valid_tool_name(&name) {
            return Err(ServeError::InvalidToolName(name));
        }
        let first = agent_tools
            .iter()
            .map(|(t, _)| t)
            .find(|t| t.name == name)
            .map(|t| {
                format!(
                    "the agent tool (\"{}\")",
                    t.description.as_deref().unwrap_or_default()
                )
            })
            .or_else(|| {
                direct
                    .get(&name)
                    .map(|t| format!("a direct tool (\"{}\")", t.spec().description))
            });
        let extra_description = crate::agent::agent_description(&name, &extra);
        if let Some(first) = first {
            return Err(crate::tool::DuplicateToolError {
                name,
                first,
                second: format!("the agent tool (\"{extra_description}\")"),
            }
            .into());
        }
        agent_tools.push((
            agent_listing(&extra, name, extra_description, store.is_some()).await?,
            extra,
        ));
    }
    let direct_listed = direct
        .iter()
        .map(|t| to_rmcp_tool(&agent, t.as_ref()))
        .collect();

    let shutdown = CancellationToken::new();
    let cancels = cancel::CancelRegistry::default();
    let server = LoushoServer::new(Served {
        agent,
        server_name,
        description,
        agent_tools,
        direct,
        direct_listed,
        shutdown: shutdown.clone(),
        store,
        approval: (approvals == ServeApprovals::Elicit).then_some(approval_timeout),
        answers: match &transport {
            ServeTransport::Stdio => true,
            ServeTransport::Http(http) => http.stateful,
        },
    });

    match transport {
        ServeTransport::Stdio => Ok(handle::spawn_stdio(server, max_line_bytes, shutdown)),
        ServeTransport::Http(http_options) => {
            let listener = http::bind(&http_options).await?;
            let bound = listener.local_addr()?;
            if auth.is_none() && !http::is_loopback(&http_options.host) {
                tracing::warn!(
                    host = %http_options.host,
                    "serving MCP on a non-loopback address without auth: anyone who can reach it can run the agent; require a bearer token (`Auth::bearer`; spec: `serve.auth`; lousho mcp: `--token-env VAR`)"
                );
            }
            let app = http::router(
                server,
                cancels,
                &http_options,
                auth.as_ref(),
                bound,
                &shutdown,
            );
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
            ))
        }
    }
}

/// An agent's tool as `tools/list` shows it: `{ "message": string }` in,
/// annotations from the tools it can reach.
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
    if sessions {
        tool.output_schema = Some(Arc::new(sessions::output_schema()));
    }
    Ok(tool)
}
