//! `lousho login` / `lousho logout`: an operator signs the agent in to an
//! OAuth-protected MCP server once; runs after that use the stored grant.

use crate::cli::{LoginArgs, LogoutArgs};
use crate::{exit, load, tokens};
use lousho::McpServer;
use lousho::mcp::oauth::{self, TokenStore};
use lousho::spec::AgentSpec;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

/// Runs `lousho login`.
#[allow(clippy::print_stderr)]
pub async fn login(args: LoginArgs, tokens: Option<&Path>) -> anyhow::Result<ExitCode> {
    let spec = load::spec(&args.spec)?;
    let entry = oauth_entry(&spec, &args.server)?;
    let store = tokens::file_store(tokens)?;
    let path = store.path().to_path_buf();
    let store: Arc<dyn TokenStore> = Arc::new(store);
    let server = args.server.clone();
    let open = !args.no_browser;
    let grant = oauth::login(entry, store, move |url| {
        eprintln!("To sign in to `{server}`, open this URL in a browser:\n\n  {url}\n");
        if open && crate::browser::open(url) {
            eprintln!("(opened in your browser)");
        }
        eprintln!("waiting for the authorization server's answer…");
    })
    .await?;
    let scopes = if grant.scopes().is_empty() {
        String::new()
    } else {
        format!(" (scopes: {})", grant.scopes().join(" "))
    };
    eprintln!(
        "signed in to `{}`{scopes}; the grant is stored in {}",
        args.server,
        path.display()
    );
    Ok(ExitCode::from(exit::OK))
}

/// Runs `lousho logout`.
#[allow(clippy::print_stderr)]
pub async fn logout(args: LogoutArgs, tokens: Option<&Path>) -> anyhow::Result<ExitCode> {
    let spec = load::spec(&args.spec)?;
    let entry = oauth_entry(&spec, &args.server)?;
    let store = tokens::file_store(tokens)?;
    if oauth::logout(entry, &store).await? {
        eprintln!(
            "signed out of `{}` (grant removed from {})",
            args.server,
            store.path().display()
        );
    } else {
        eprintln!("`{}` had no stored sign-in", args.server);
    }
    Ok(ExitCode::from(exit::OK))
}

/// The spec's entry `name`, which must be an HTTP server with `oauth`.
fn oauth_entry<'a>(spec: &'a AgentSpec, name: &str) -> anyhow::Result<&'a McpServer> {
    let Some(entry) = spec.mcp_servers.get(name) else {
        let known: Vec<&str> = spec.mcp_servers.keys().map(String::as_str).collect();
        anyhow::bail!(
            "{}: no MCP server `{name}` in mcpServers (servers: {})",
            spec.path.display(),
            if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            }
        );
    };
    if entry.oauth.is_none() {
        anyhow::bail!(
            "{}: MCP server `{name}` has no `oauth`; add `oauth: {{redirectUri: \"http://127.0.0.1:8765/callback\"}}` to its entry to sign in",
            spec.path.display()
        );
    }
    Ok(entry)
}
