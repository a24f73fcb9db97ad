//! Enterprise-managed authorization (`grant: enterprise_managed`, SEP-990)
//! against the local identity provider + authorization server + MCP server:
//! the user's ID token is exchanged at the IdP for an ID-JAG, which the
//! authorization server redeems for a token; no browser, re-exchanged when
//! the server rejects the token; secrets and tokens stay out of logs.

use lousho::mcp::oauth::MemoryTokenStore;
use lousho::mcp::{ConnectOptions, McpClient, McpError, ServerStatus};
use lousho::mcp::{IdpSettings, OAuthSettings};
use lousho::tool::ToolContext;
use lousho::{McpServer, connect_mcp};
use lousho_testkit::oauth_fixture::{
    IDP_CLIENT_ID, IDP_CLIENT_SECRET, MachineClient, OAuthFixture, serve_oauth_with,
};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

const ID_TOKEN: &str = "id-token-of-alice";
const APP_SECRET: &str = "xaa-app-secret-value";

async fn server() -> OAuthFixture {
    serve_oauth_with(
        Duration::from_secs(3600),
        Some(MachineClient::Enterprise {
            id: "xaa-app".into(),
            secret: APP_SECRET.into(),
            id_token: ID_TOKEN.into(),
        }),
    )
    .await
}

fn entry(server: &OAuthFixture, idp: IdpSettings) -> McpServer {
    McpServer::http(&server.url)
        .oauth(OAuthSettings::enterprise_managed("xaa-app", idp).client_secret(APP_SECRET))
}

fn idp(server: &OAuthFixture) -> IdpSettings {
    let base = server.url.trim_end_matches("/mcp");
    IdpSettings::new(format!("{base}/idp"), IDP_CLIENT_ID).client_secret(IDP_CLIENT_SECRET)
}

async fn echo(mcp: &McpClient) -> lousho::tool::ToolOutput {
    let tools = mcp.tools();
    let tool = tools.get("corp__echo").expect("echo tool");
    tool.call(json!({"text": "hi"}), ToolContext::new("t"))
        .await
        .unwrap()
}

fn count(n: &std::sync::atomic::AtomicU64) -> u64 {
    n.load(Ordering::Relaxed)
}

#[tokio::test]
async fn the_users_id_token_becomes_a_token_for_the_server_without_a_browser() {
    let server = server().await;
    // No `tokenEndpoint`: it comes from the IdP's OpenID configuration.
    let entry = entry(&server, idp(&server).id_token(ID_TOKEN));
    let mcp = connect_mcp(
        [("corp", entry.clone())],
        ConnectOptions::default().tokens(Arc::new(MemoryTokenStore::new())),
    )
    .await
    .unwrap();
    assert_eq!(mcp.status()["corp"], ServerStatus::Connected);
    let out = echo(&mcp).await;
    assert!(!out.is_error, "{}", out.to_model_text());
    assert_eq!(
        count(&server.log.token_exchanges),
        1,
        "{:?}",
        server.log.refusals
    );
    assert_eq!(count(&server.log.jwt_bearer_grants), 1);
    assert_eq!(count(&server.log.authorizations), 0);
    assert_eq!(count(&server.log.registrations), 0);
    let shown = format!("{entry:?}");
    for secret in [ID_TOKEN, APP_SECRET, IDP_CLIENT_SECRET] {
        assert!(!shown.contains(secret), "`{secret}` in {shown}");
    }
    mcp.close().await;
    server.stop().await;
}

#[tokio::test]
async fn a_stale_id_token_says_to_sign_in_again_and_the_file_is_read_anew() {
    let server = server().await;
    let dir = std::env::temp_dir().join(format!("lousho-xaa-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("id-token");
    std::fs::write(&file, "stale-id-token-value\n").unwrap();
    let entry = entry(&server, idp(&server).id_token_file(&file));
    let err = connect_mcp(
        [("corp", entry.clone())],
        ConnectOptions::default().tokens(Arc::new(MemoryTokenStore::new())),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, McpError::OAuth { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("idp.idToken"), "{text}");
    assert!(!text.contains("stale-id-token-value"), "{text}");
    // A sign-in helper refreshes the file; the next start uses it.
    std::fs::write(&file, format!("{ID_TOKEN}\n")).unwrap();
    let mcp = connect_mcp(
        [("corp", entry)],
        ConnectOptions::default().tokens(Arc::new(MemoryTokenStore::new())),
    )
    .await
    .unwrap();
    assert!(!echo(&mcp).await.is_error);
    mcp.close().await;
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "current_thread")]
async fn a_rejected_token_is_exchanged_again_and_nothing_secret_is_logged() {
    let (logs, _guard) = super::fixture::capture_logs();

    let server = server().await;
    let entry = entry(&server, idp(&server).id_token(ID_TOKEN));
    let mcp = connect_mcp(
        [("corp", entry)],
        ConnectOptions::default().tokens(Arc::new(MemoryTokenStore::new())),
    )
    .await
    .unwrap();
    assert!(!echo(&mcp).await.is_error);
    server.revoke_access_tokens();
    let out = echo(&mcp).await;
    assert!(!out.is_error, "{}", out.to_model_text());
    assert_eq!(count(&server.log.token_exchanges), 2);
    assert_eq!(count(&server.log.jwt_bearer_grants), 2);
    assert_eq!(mcp.status()["corp"], ServerStatus::Connected);

    let seen = logs.text();
    assert!(seen.len() > 1000, "the logs were captured");
    let issued: Vec<String> = server.log.issued.lock().unwrap().clone();
    for secret in issued
        .iter()
        .map(String::as_str)
        .chain([ID_TOKEN, APP_SECRET, IDP_CLIENT_SECRET])
    {
        assert!(!seen.contains(secret), "`{secret}` leaked");
    }
    mcp.close().await;
    server.stop().await;
}
