//! The client the official MCP conformance suite drives
//! (`conformance client --command target/debug/conformance-client`): the
//! server URL is the last argument, the scenario comes from
//! `MCP_CONFORMANCE_SCENARIO` and extra inputs (pre-registered client
//! credentials, client-credentials keys) from `MCP_CONFORMANCE_CONTEXT`. It
//! uses only lousho's public API: `connect_mcp` with an OAuth entry, a token
//! store and an authorizer that plays the user agent (the suite's
//! authorization endpoint redirects straight back with a code), or a
//! `client_credentials` entry for the SEP-1046 scenarios and an
//! `enterprise_managed` one for SEP-990 cross-app access; elicitation
//! requests are accepted with the schema's defaults. Exits 0 on success, 1 on
//! failure, within its own 20 s deadline.

use async_trait::async_trait;
use lousho::mcp::oauth::{Authorizer, MemoryTokenStore, OAuthError};
use lousho::mcp::{ConnectOptions, ServerStatus};
use lousho::mcp::{
    ElicitationRequest, ElicitationResponse, IdpSettings, OAuthSettings, SigningAlgorithm,
};
use lousho::tool::ToolContext;
use lousho::{McpServer, connect_mcp};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(20);
const REDIRECT_URI: &str = "http://localhost:3000/callback";
/// The client ID metadata document URL the suite's `auth/basic-cimd` expects.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// Plays the browser: GET the authorization URL and return the redirect's
/// `Location` without following it.
#[derive(Debug)]
struct Headless {
    http: reqwest::Client,
}

#[async_trait]
impl Authorizer for Headless {
    async fn authorize(&self, authorization_url: &str) -> Result<String, OAuthError> {
        let response = self
            .http
            .get(authorization_url)
            .send()
            .await
            .map_err(|e| OAuthError::Callback(format!("GET authorization URL: {e}")))?;
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| {
                OAuthError::Callback(format!(
                    "no redirect from the authorization endpoint ({})",
                    response.status()
                ))
            })?;
        let base = reqwest::Url::parse(authorization_url)
            .map_err(|e| OAuthError::Callback(e.to_string()))?;
        Ok(base
            .join(location)
            .map_err(|e| OAuthError::Callback(e.to_string()))?
            .to_string())
    }
}

async fn run(url: String, scenario: String, context: Value) -> Result<(), String> {
    let mut entry = McpServer::http(url);
    // Accept every elicitation with the schema's defaults (SEP-1034).
    let mut options =
        ConnectOptions::default().elicitation(|request: ElicitationRequest| async move {
            ElicitationResponse::Accept(request.defaults())
        });
    let text = |key: &str| context.get(key).and_then(Value::as_str);
    if scenario.starts_with("auth/client-credentials-") {
        // Machine to machine (SEP-1046): the connection fetches its own token.
        let mut settings = OAuthSettings::client_credentials(text("client_id").unwrap_or_default());
        if let Some(secret) = text("client_secret") {
            settings = settings.client_secret(secret);
        }
        if let Some(pem) = text("private_key_pem") {
            settings = settings.private_key_pem(pem);
        }
        if let Some(algorithm) = text("signing_algorithm") {
            let algorithm: SigningAlgorithm = serde_json::from_value(json!(algorithm))
                .map_err(|e| format!("signing_algorithm: {e}"))?;
            settings = settings.signing_algorithm(algorithm);
        }
        entry = entry.oauth(settings);
        options = options.tokens(Arc::new(MemoryTokenStore::new()));
    } else if scenario == "auth/cross-app-access-complete-flow" {
        // Enterprise-managed authorization (SEP-990): the user's ID token from
        // the IdP becomes a token for the server, without a browser.
        let mut idp = IdpSettings::new(
            text("idp_issuer").unwrap_or_default(),
            text("idp_client_id").unwrap_or_default(),
        )
        .id_token(text("idp_id_token").unwrap_or_default());
        if let Some(endpoint) = text("idp_token_endpoint") {
            idp = idp.token_endpoint(endpoint);
        }
        let mut settings =
            OAuthSettings::enterprise_managed(text("client_id").unwrap_or_default(), idp);
        if let Some(secret) = text("client_secret") {
            settings = settings.client_secret(secret);
        }
        entry = entry.oauth(settings);
        options = options.tokens(Arc::new(MemoryTokenStore::new()));
    } else if scenario.starts_with("auth/") {
        let mut settings =
            OAuthSettings::new(REDIRECT_URI).client_metadata_url(CLIENT_METADATA_URL);
        if let Some(id) = context.get("client_id").and_then(Value::as_str) {
            settings = settings.client_id(id);
        }
        if let Some(secret) = context.get("client_secret").and_then(Value::as_str) {
            settings = settings.client_secret(secret);
        }
        entry = entry.oauth(settings);
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| e.to_string())?;
        options = options
            .tokens(Arc::new(MemoryTokenStore::new()))
            .authorizer(Arc::new(Headless { http }));
    }
    let mcp = connect_mcp([("s", entry)], options)
        .await
        .map_err(|e| e.to_string())?;
    let status = mcp.status();
    if status.get("s") != Some(&ServerStatus::Connected) {
        mcp.close().await;
        return Err(format!("not connected: {status:?}"));
    }
    let tools = mcp.tools();
    let call = match scenario.as_str() {
        "tools_call" => Some(("s__add_numbers", json!({"a": 5, "b": 3}))),
        "sse-retry" => Some(("s__test_reconnection", json!({}))),
        "elicitation-sep1034-client-defaults" => {
            Some(("s__test_client_elicitation_defaults", json!({})))
        }
        s if s.starts_with("auth/") && tools.get("s__test-tool").is_some() => {
            Some(("s__test-tool", json!({})))
        }
        _ => None,
    };
    let mut result = Ok(());
    if let Some((name, args)) = call {
        match tools.get(name) {
            None => result = Err(format!("no tool {name}")),
            Some(tool) => match tool.call(args, ToolContext::new("conformance")).await {
                Ok(out) if out.is_error => {
                    result = Err(format!("{name} failed: {}", out.to_model_text()))
                }
                Ok(_) => {}
                Err(e) => result = Err(format!("{name} failed: {e}")),
            },
        }
    }
    mcp.close().await;
    result
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()))
        .init();
    let url = std::env::args().next_back().unwrap_or_default();
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    let outcome = match tokio::time::timeout(DEADLINE, run(url, scenario.clone(), context)).await {
        Ok(r) => r,
        Err(_) => Err(format!("no result within {DEADLINE:?}")),
    };
    match outcome {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("conformance-client ({scenario}): {e}");
            std::process::exit(1);
        }
    }
}
