//! `lousho mcp`: serve a spec's agent over MCP, exactly as `serve_mcp` does.

use crate::cli::McpArgs;
use crate::load::{self, Approvals, ModelChoice, Team};
use crate::servers::Servers;
use crate::signals::Signal;
use lousho::mcp::{
    Auth, CallerLimits, HttpOptions, McpServerHandle, OAuthResource, ServeApprovals, ServeError,
};
use lousho::spec::{
    AgentSpec, ServeCallerLimits, ServeOAuth, ServeSpec, ServedResources, SpecError, SpecErrorKind,
};
use lousho::{Agent, ToolSet};
use lousho::{ServeOptions, serve_mcp};
use std::process::ExitCode;
use std::time::Duration;

/// The HTTP settings: flags over the spec's `serve:` keys over the defaults.
fn http_options(args: &McpArgs, serve: &ServeSpec) -> HttpOptions {
    let mut http = HttpOptions::new()
        .host(args.host.clone())
        .port(args.port)
        .path(args.path.clone());
    for host in serve.allowed_hosts.iter().chain(&args.allow_hosts) {
        http = http.allow_host(host.clone());
    }
    if let Some(n) = args.max_connections.or(serve.max_connections) {
        http = http.max_connections(n);
    }
    let ms = |v: Option<u64>| v.map(Duration::from_millis);
    if let Some(t) = ms(args.header_timeout_ms).or(serve.header_timeout) {
        http = http.header_timeout(t);
    }
    if let Some(t) = ms(args.body_timeout_ms).or(serve.body_timeout) {
        http = http.body_timeout(t);
    }
    if let Some(n) = serve.max_body_bytes {
        http = http.max_body_bytes(n);
    }
    if let Some(n) = args.min_body_rate.or(serve.min_body_rate) {
        http = http.min_body_rate(n);
    }
    if let Some(n) = args.max_calls.or(serve.max_calls) {
        http = http.max_calls(n);
    }
    if let Some(n) = args.max_agent_runs.or(serve.max_agent_runs) {
        http = http.max_agent_runs(n);
    }
    if let Some(n) = args.client_share_percent.or(serve.client_share_percent) {
        http = http.client_share_percent(n);
    }
    http.stateful(serve.stateful)
}

/// Runs the command. Over stdio nothing but the protocol reaches stdout.
pub async fn run(
    args: McpArgs,
    store_flag: Option<&str>,
    tokens: Option<&std::path::Path>,
    catalog: bool,
    signals: &crate::signals::Signals,
) -> anyhow::Result<ExitCode> {
    let Some(path) = &args.spec else {
        anyhow::bail!(crate::exit::Usage(
            "lousho mcp needs a spec file: lousho mcp agent.yaml".into()
        ));
    };
    let spec = load::spec(path)?;
    let model = args
        .model
        .as_deref()
        .map_or(ModelChoice::Spec, ModelChoice::Named);
    // Nobody can approve over MCP: a run that needs approval returns isError.
    let team = load::build_team(
        &spec,
        model.clone(),
        Approvals::Nobody,
        tokens,
        catalog,
        None,
    )?;
    let name = server_name(&spec);
    let (agent, mcp, options) = served_agents(&spec, &args, model, tokens, catalog, &team, &name)?;
    let mut options = spec.serve_offers(with_serve_settings(options, &spec.serve))?;
    let transcripts = spec.serve.resources.contains(&ServedResources::Sessions);
    let limits = spec.serve.caller_limits.map(caller_limits);
    // serve.limits counts in a store named on the command line (shared by
    // replicas), else in the sessions' store, else in memory.
    let limits_in_store = limits.is_some() && store_flag.is_some();
    if spec.serve.sessions || transcripts || limits_in_store {
        // serve.sessions: the conversations live in the session store
        // (--store / LOUSHO_STORE), which replicas may share (PostgreSQL);
        // serve.resources `sessions` serves their transcripts.
        let store = tokio::select! {
            r = crate::store::open(store_flag) => r?,
            signal = signals.any() => return stopped(signal, &agent, &team).await,
        };
        if spec.serve.sessions {
            options = options
                .sessions(store.clone())
                .session_lease(crate::store::lease()?);
        }
        if transcripts {
            options = options.session_transcripts(store.clone());
        }
        if let Some(limits) = limits.clone() {
            options = options.caller_limits(limits.store(store));
        }
    } else if let Some(limits) = limits {
        options = options.caller_limits(limits);
    }
    if let Some(folder) = &spec.serve.skills {
        options = options.skills(folder);
    }
    if !spec.serve.tools.is_empty() {
        // Tools known from the servers' manifests need no connect.
        let known = agent.tools()?;
        let needs_mcp = spec.serve.tools.iter().any(|t| !known.contains(t));
        if needs_mcp && let Some(mcp) = &mcp {
            tokio::select! {
                r = load::connect(mcp, false, false) => r?,
                signal = signals.any() => return stopped(signal, &agent, &team).await,
            }
        }
        options = options.tools(direct_tools(&spec, &agent)?);
    }
    if args.http {
        options = options.http(http_options(&args, &spec.serve));
        if let Some(token) = bearer_token(&args, &spec)? {
            options = options.auth(Auth::bearer(token));
        } else if let Some(oauth) = &spec.serve.oauth {
            options = options.auth(Auth::oauth(oauth_resource(oauth)));
        }
    }
    let handle = serve_mcp(options).await?;
    let (signal, served) = serve_until_done(handle, args.http, &name, signals).await;
    agent.close().await;
    team.close().await;
    served?;
    Ok(signal.map_or(ExitCode::SUCCESS, Signal::exit_code))
}

/// The MCP server's name: the spec's `name`, else its file's stem.
fn server_name(spec: &AgentSpec) -> String {
    spec.name.clone().unwrap_or_else(|| {
        spec.path
            .file_stem()
            .map_or_else(|| "agent".to_owned(), |s| s.to_string_lossy().into_owned())
    })
}

/// The agent served as the server's main tool (the spec's top agent, or its
/// first agent when the file only defines `agents:` and no model), with its
/// MCP servers, and the serving options with every other agent of the file
/// as a tool of its own.
fn served_agents(
    spec: &AgentSpec,
    args: &McpArgs,
    model: ModelChoice<'_>,
    tokens: Option<&std::path::Path>,
    catalog: bool,
    team: &Team,
    name: &str,
) -> anyhow::Result<(Agent, Option<Servers>, ServeOptions)> {
    let serves_top = spec.agents.is_empty() || spec.model.is_some() || args.model.is_some();
    let mut more = team.agents.iter();
    let (agent, mcp, mut options) = if serves_top {
        let (agent, mcp) =
            load::build_one(spec, model, Approvals::Nobody, tokens, catalog, team, None)?;
        let mut options = ServeOptions::new(agent.clone()).name(name.to_owned());
        if let Some(description) = &spec.description {
            options = options.description(description.clone());
        }
        (agent, mcp, options)
    } else {
        let Some((first, (agent, mcp))) = more.next() else {
            anyhow::bail!("{}: no agent to serve", spec.path.display());
        };
        let options = ServeOptions::new(agent.clone())
            .name(name.to_owned())
            .tool_name(first.clone());
        (agent.clone(), mcp.clone(), options)
    };
    for (tool_name, (extra, _)) in more {
        options = options.agent(tool_name.clone(), extra.clone());
    }
    Ok((agent, mcp, options))
}

/// `options` with the spec's `serve:` approvals, approval timeout and line limit.
fn with_serve_settings(mut options: ServeOptions, serve: &ServeSpec) -> ServeOptions {
    options = options.approvals(match serve.approvals {
        lousho::spec::Approvals::Elicit => ServeApprovals::Elicit,
        lousho::spec::Approvals::Allow => ServeApprovals::Allow,
        _ => ServeApprovals::Deny,
    });
    if let Some(t) = serve.approval_timeout {
        options = options.approval_timeout(t);
    }
    if let Some(n) = serve.max_line_bytes {
        options = options.max_line_bytes(n);
    }
    options
}

/// A signal came before serving began: close everything, exit as it says.
async fn stopped(signal: Signal, agent: &Agent, team: &Team) -> anyhow::Result<ExitCode> {
    agent.close().await;
    team.close().await;
    Ok(signal.exit_code())
}

/// The tools `serve.tools` names, from the agent's (an unknown name is an
/// error listing the agent's tools).
fn direct_tools(spec: &AgentSpec, agent: &Agent) -> anyhow::Result<ToolSet> {
    let all = agent.tools()?;
    let mut direct = ToolSet::new();
    for tool_name in &spec.serve.tools {
        let Some(tool) = all.get(tool_name) else {
            let names: Vec<String> = all.iter().map(|t| t.spec().name.clone()).collect();
            return Err(SpecError::from_parts(
                &spec.path,
                SpecErrorKind::Invalid(format!(
                    "serve.tools: the agent has no tool `{tool_name}`; its tools are: {}",
                    names.join(", ")
                )),
            )
            .into());
        };
        direct.insert(tool.clone())?;
    }
    Ok(direct)
}

/// The spec's `serve.limits.perCaller`.
fn caller_limits(spec: ServeCallerLimits) -> CallerLimits {
    let mut limits = CallerLimits::new();
    if let Some(n) = spec.concurrent_runs {
        limits = limits.concurrent_runs(n);
    }
    if let Some(n) = spec.runs_per_minute {
        limits = limits.runs_per_minute(n);
    }
    if let Some(n) = spec.tokens_per_day {
        limits = limits.tokens_per_day(n);
    }
    limits
}

/// The spec's `serve.auth: { type: oauth, … }` as resource-server settings.
fn oauth_resource(oauth: &ServeOAuth) -> OAuthResource {
    let mut resource = OAuthResource::new(oauth.issuer.clone(), oauth.audience.clone());
    for scope in &oauth.scopes {
        resource = resource.scope(scope.clone());
    }
    for (pattern, scope) in &oauth.tool_scopes {
        resource = resource.tool_scope(pattern.clone(), scope.clone());
    }
    if let Some(uri) = &oauth.jwks_uri {
        resource = resource.jwks_uri(uri.clone());
    }
    if let Some(skew) = oauth.clock_skew {
        resource = resource.clock_skew(skew);
    }
    if let Some(client) = &oauth.introspection {
        resource = resource.introspection(client.client_id.clone(), client.client_secret.clone());
    }
    if let Some(url) = &oauth.introspection_endpoint {
        resource = resource.introspection_endpoint(url.clone());
    }
    resource
}

/// The bearer token HTTP clients must send: from `--token-env`, else the
/// spec's `serve.auth.token`; an empty one is an error (no client could call).
fn bearer_token(args: &McpArgs, spec: &AgentSpec) -> anyhow::Result<Option<String>> {
    if let Some(var) = &args.token_env {
        let token = std::env::var(var).map_err(|_| {
            anyhow::anyhow!("--token-env {var}: the environment variable `{var}` is not set")
        })?;
        if token.trim().is_empty() {
            anyhow::bail!(
                "--token-env {var}: the environment variable `{var}` is empty, so no client could call the server; set it to a secret token"
            );
        }
        return Ok(Some(token));
    }
    if spec
        .serve
        .bearer_token
        .as_ref()
        .is_some_and(|t| t.trim().is_empty())
    {
        anyhow::bail!(
            "{}: serve.auth.token is empty, so no client could call the server; set it to a secret token (e.g. \"${{TOKEN}}\" with TOKEN set)",
            spec.path.display()
        );
    }
    Ok(spec.serve.bearer_token.clone())
}

/// Serves until the client goes away (stdio) or a signal comes (both); the
/// signal, if one came, and how serving ended.
#[allow(clippy::print_stderr)]
async fn serve_until_done(
    handle: McpServerHandle,
    http: bool,
    name: &str,
    signals: &crate::signals::Signals,
) -> (Option<Signal>, Result<(), ServeError>) {
    if http {
        eprintln!(
            "lousho: serving `{name}` over MCP at {} (Ctrl-C to stop)",
            handle.url().unwrap_or_default()
        );
        let signal = signals.any().await;
        (Some(signal), handle.close().await)
    } else {
        // On a signal the handle is dropped, which stops the server (its
        // in-flight runs are cancelled).
        tokio::select! {
            r = handle.wait() => (None, r),
            signal = signals.any() => (Some(signal), Ok(())),
        }
    }
}
