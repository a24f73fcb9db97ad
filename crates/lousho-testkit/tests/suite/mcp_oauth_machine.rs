//! Machine-to-machine OAuth (`grant: client_credentials`, SEP-1046) against
//! the local authorization server + MCP server: no operator, the token is
//! fetched (and fetched again on expiry or rejection) by the connection,
//! `client_secret_basic` and `private_key_jwt`, secrets kept out of
//! `Debug`, errors and logs.

use lousho::mcp::OAuthSettings;
use lousho::mcp::oauth::{self, FileTokenStore, MemoryTokenStore, TokenStore};
use lousho::mcp::{ConnectOptions, McpClient, McpError, ServerStatus};
use lousho::tool::ToolContext;
use lousho::{McpServer, connect_mcp};
use lousho_testkit::oauth_fixture::{
    MachineClient, OAuthFixture, TEST_EC_PRIVATE_KEY_PEM, TEST_EC_PUBLIC_KEY_PEM, serve_oauth_with,
};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

const SECRET: &str = "machine-secret-value";

async fn with_secret(lifetime: Duration) -> (OAuthFixture, McpServer) {
    let server = serve_oauth_with(
        lifetime,
        Some(MachineClient::SecretBasic {
            id: "report-bot".into(),
            secret: SECRET.into(),
        }),
    )
    .await;
    let entry = McpServer::http(&server.url)
        .oauth(OAuthSettings::client_credentials("report-bot").client_secret(SECRET));
    (server, entry)
}

async fn with_key() -> OAuthFixture {
    serve_oauth_with(
        Duration::from_secs(3600),
        Some(MachineClient::PrivateKeyJwt {
            id: "signing-bot".into(),
            public_key_pem: TEST_EC_PUBLIC_KEY_PEM.into(),
        }),
    )
    .await
}

async fn echo(mcp: &McpClient) -> lousho::tool::ToolOutput {
    let tools = mcp.tools();
    let tool = tools.get("m2m__echo").expect("echo tool");
    tool.call(json!({"text": "hi"}), ToolContext::new("t"))
        .await
        .unwrap()
}

fn grants(server: &OAuthFixture) -> u64 {
    server.log.client_credentials_grants.load(Ordering::Relaxed)
}

fn no_operator(server: &OAuthFixture) {
    assert_eq!(server.log.authorizations.load(Ordering::Relaxed), 0);
    assert_eq!(server.log.registrations.load(Ordering::Relaxed), 0);
}

#[tokio::test]
async fn a_client_secret_gets_a_token_without_an_operator() {
    let (server, entry) = with_secret(Duration::from_secs(3600)).await;
    let store = MemoryTokenStore::new();
    let mcp_entry = entry.clone();
    // No authorizer: nobody could sign in, and nobody needs to.
    let mcp = connect_mcp(
        [("m2m", mcp_entry)],
        ConnectOptions::default().tokens(Arc::new(store.clone())),
    )
    .await
    .unwrap();
    assert_eq!(mcp.status()["m2m"], ServerStatus::Connected);
    let out = echo(&mcp).await;
    assert!(!out.is_error, "{}", out.to_model_text());
    assert_eq!(grants(&server), 1, "refusals: {:?}", server.log.refusals);
    no_operator(&server);
    // RFC 8707: the server's URL as the token request's `resource`.
    assert_eq!(
        *server.log.resources.lock().unwrap(),
        vec![server.url.clone()]
    );
    // Keyed by the URL and the credentials' identity (never the secret).
    let key = oauth::store_key(&entry).unwrap();
    assert!(key.starts_with(&server.url) && key != server.url, "{key}");
    assert!(!key.contains(SECRET), "{key}");
    assert!(store.load(&server.url).await.unwrap().is_none());
    let stored = store.load(&key).await.unwrap().expect("stored");
    assert_eq!(stored.client_id(), "report-bot");
    assert!(stored.has_access_token() && !stored.has_refresh_token());
    mcp.close().await;
    server.stop().await;
}

#[tokio::test]
async fn a_private_key_file_signs_a_jwt_assertion() {
    let server = with_key().await;
    let dir = std::env::temp_dir().join(format!("lousho-m2m-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("bot-key.pem");
    std::fs::write(&key, TEST_EC_PRIVATE_KEY_PEM).unwrap();
    let entry = McpServer::http(&server.url)
        .oauth(OAuthSettings::client_credentials("signing-bot").private_key_file(&key));
    let mcp = connect_mcp(
        [("m2m", entry)],
        ConnectOptions::default().tokens(Arc::new(MemoryTokenStore::new())),
    )
    .await
    .unwrap();
    assert_eq!(mcp.status()["m2m"], ServerStatus::Connected);
    assert!(!echo(&mcp).await.is_error);
    assert!(server.log.refusals.lock().unwrap().is_empty());
    assert_eq!(grants(&server), 1);
    no_operator(&server);
    mcp.close().await;
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_key_the_server_does_not_know_is_refused_with_a_clear_error() {
    let server = with_key().await;
    // Another client id: the assertion's `iss`/`sub` do not match.
    let entry = McpServer::http(&server.url).oauth(
        OAuthSettings::client_credentials("someone-else").private_key_pem(TEST_EC_PRIVATE_KEY_PEM),
    );
    let err = connect_mcp(
        [("m2m", entry)],
        ConnectOptions::default().tokens(Arc::new(MemoryTokenStore::new())),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, McpError::OAuth { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("invalid_client"), "{text}");
    assert!(!text.contains("PRIVATE KEY"), "{text}");
    assert_eq!(grants(&server), 0);
    server.stop().await;
}

#[tokio::test]
async fn a_wrong_secret_is_an_error_not_needs_auth() {
    let (server, _) = with_secret(Duration::from_secs(3600)).await;
    let entry = McpServer::http(&server.url)
        .oauth(OAuthSettings::client_credentials("report-bot").client_secret("wrong-secret-value"));
    let err = connect_mcp(
        [("m2m", entry)],
        ConnectOptions::default().tokens(Arc::new(MemoryTokenStore::new())),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, McpError::OAuth { .. }), "{err}");
    assert!(!err.to_string().contains("wrong-secret-value"), "{err}");
    assert_eq!(grants(&server), 0);
    server.stop().await;
}

#[tokio::test]
async fn an_expired_token_is_fetched_again_before_use() {
    // Token ages are whole seconds and a token is fetched again once less
    // than half its life is left: 6 s leaves a loaded machine 2 s for the
    // first call before that, and 4.1 s later it is due for certain.
    let (server, entry) = with_secret(Duration::from_secs(6)).await;
    let mcp = connect_mcp(
        [("m2m", entry)],
        ConnectOptions::default().tokens(Arc::new(MemoryTokenStore::new())),
    )
    .await
    .unwrap();
    assert!(!echo(&mcp).await.is_error);
    assert_eq!(grants(&server), 1);
    tokio::time::sleep(Duration::from_millis(4100)).await; // the token is about to expire
    let out = echo(&mcp).await;
    assert!(!out.is_error, "{}", out.to_model_text());
    assert!(grants(&server) >= 2, "fetched again");
    assert_eq!(mcp.status()["m2m"], ServerStatus::Connected);
    no_operator(&server);
    mcp.close().await;
    server.stop().await;
}

#[tokio::test]
async fn a_revoked_token_is_replaced_and_the_call_retried() {
    let (server, entry) = with_secret(Duration::from_secs(3600)).await;
    let mcp = connect_mcp(
        [("m2m", entry)],
        ConnectOptions::default().tokens(Arc::new(MemoryTokenStore::new())),
    )
    .await
    .unwrap();
    assert!(!echo(&mcp).await.is_error);
    server.revoke_access_tokens();
    let out = echo(&mcp).await;
    assert!(!out.is_error, "{}", out.to_model_text());
    assert_eq!(grants(&server), 2);
    assert_eq!(mcp.status()["m2m"], ServerStatus::Connected);
    mcp.close().await;
    server.stop().await;
}

#[tokio::test]
async fn the_next_start_reuses_the_stored_token() {
    let (server, entry) = with_secret(Duration::from_secs(3600)).await;
    let path = std::env::temp_dir()
        .join(format!("lousho-m2m-reuse-{}", std::process::id()))
        .join("tokens.json");
    let _ = std::fs::remove_file(&path);
    for _ in 0..2 {
        let store: Arc<dyn TokenStore> = Arc::new(FileTokenStore::new(&path));
        let mcp = connect_mcp(
            [("m2m", entry.clone())],
            ConnectOptions::default().tokens(store),
        )
        .await
        .unwrap();
        assert!(!echo(&mcp).await.is_error);
        mcp.close().await;
    }
    assert_eq!(grants(&server), 1, "the second start used the stored token");
    server.stop().await;
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[tokio::test]
async fn changed_credentials_for_the_same_url_do_not_reuse_the_old_token() {
    let (server, entry) = with_secret(Duration::from_secs(3600)).await;
    let store: Arc<dyn TokenStore> = Arc::new(MemoryTokenStore::new());
    let connect = |entry: McpServer| {
        connect_mcp(
            [("m2m", entry)],
            ConnectOptions::default().tokens(store.clone()),
        )
    };
    let mcp = connect(entry.clone()).await.unwrap();
    assert!(!echo(&mcp).await.is_error);
    mcp.close().await;
    assert_eq!(grants(&server), 1);
    // The token fetched with the right credentials sits in the store; had it
    // been reused, these entries would connect. Each must ask for a token
    // with its own credentials, which the server refuses.
    let changed = [
        OAuthSettings::client_credentials("report-bot").client_secret("another-secret-value"),
        OAuthSettings::client_credentials("other-bot").client_secret(SECRET),
    ];
    for (n, settings) in changed.into_iter().enumerate() {
        let changed = McpServer::http(&server.url).oauth(settings);
        assert_ne!(
            oauth::store_key(&changed).unwrap(),
            oauth::store_key(&entry).unwrap()
        );
        assert!(
            oauth::stored_token(&changed, store.as_ref())
                .await
                .unwrap()
                .is_none()
        );
        let err = connect(changed).await.unwrap_err();
        assert!(matches!(err, McpError::OAuth { .. }), "{err}");
        assert!(server.log.refusals.lock().unwrap().len() > n);
        assert_eq!(grants(&server), 1);
    }
    // The original credentials still find their own token.
    let mcp = connect(entry).await.unwrap();
    assert!(!echo(&mcp).await.is_error);
    mcp.close().await;
    assert_eq!(grants(&server), 1, "the old credentials reused their token");
    server.stop().await;
}

#[tokio::test]
async fn login_fetches_and_stores_a_token_without_a_browser() {
    let (server, entry) = with_secret(Duration::from_secs(3600)).await;
    let store: Arc<dyn TokenStore> = Arc::new(MemoryTokenStore::new());
    let grant = oauth::login(&entry, store.clone(), |_| {
        panic!("no URL for a machine client")
    })
    .await
    .unwrap();
    assert_eq!(grant.client_id(), "report-bot");
    assert!(grant.has_access_token());
    assert_eq!(grants(&server), 1);
    let kept = oauth::stored_token(&entry, store.as_ref()).await.unwrap();
    assert_eq!(kept.expect("stored").client_id(), "report-bot");
    server.stop().await;
}

#[test]
fn spec_files_take_the_client_credentials_keys() {
    let entry = McpServer::from_json_str(
        r#"{"url": "https://mcp.example.com/mcp",
            "oauth": {"grant": "client_credentials", "clientId": "bot", "privateKeyFile": "bot.pem", "signingAlgorithm": "ES256"}}"#,
    )
    .unwrap();
    let oauth = entry.oauth.as_ref().unwrap();
    assert_eq!(oauth.client_id.as_deref(), Some("bot"));
    let err = McpServer::from_json_str(
        r#"{"url": "https://mcp.example.com/mcp", "oauth": {"grant": "client_credentials", "clientId": "bot"}}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("needs `clientSecret`"), "{err}");
}

#[tokio::test(flavor = "current_thread")]
async fn secrets_keys_and_tokens_never_reach_debug_errors_or_logs() {
    let (logs, _guard) = super::fixture::capture_logs();

    let (server, entry) = with_secret(Duration::from_secs(2)).await;
    let store = MemoryTokenStore::new();
    let mcp = connect_mcp(
        [("m2m", entry.clone())],
        ConnectOptions::default().tokens(Arc::new(store.clone())),
    )
    .await
    .unwrap();
    assert!(!echo(&mcp).await.is_error);
    tokio::time::sleep(Duration::from_millis(2200)).await;
    assert!(!echo(&mcp).await.is_error); // fetched again here
    server.revoke_access_tokens();
    assert!(!echo(&mcp).await.is_error); // and here
    let keyed = OAuthSettings::client_credentials("k").private_key_pem(TEST_EC_PRIVATE_KEY_PEM);

    let mut seen = logs.text();
    seen.push_str(&format!(
        "{store:?} {mcp:?} {entry:?} {:?} {keyed:?}",
        entry.oauth
    ));
    let issued: Vec<String> = server.log.issued.lock().unwrap().clone();
    assert!(issued.len() >= 3, "tokens issued: {issued:?}");
    assert!(seen.len() > 1000, "the logs were captured");
    let key_body = TEST_EC_PRIVATE_KEY_PEM.lines().nth(1).unwrap();
    for secret in issued.iter().map(String::as_str).chain([SECRET, key_body]) {
        assert!(!seen.contains(secret), "`{secret}` leaked");
    }
    mcp.close().await;
    server.stop().await;
}

#[tokio::test]
async fn credentials_are_not_sent_to_a_server_that_publishes_no_oauth_metadata() {
    // A plain MCP server: no protected-resource or authorization-server
    // metadata, so the only token endpoint would be a guessed `/token`.
    let open = lousho_testkit::mcp_fixture::serve_http(false).await;
    let entry = McpServer::http(&open.url)
        .oauth(OAuthSettings::client_credentials("report-bot").client_secret(SECRET));
    let err = connect_mcp(
        [("m2m", entry)],
        ConnectOptions::default().tokens(Arc::new(MemoryTokenStore::new())),
    )
    .await
    .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("publishes no OAuth metadata"), "{text}");
    let seen = open.seen_headers.lock().unwrap().clone();
    assert!(
        seen.iter().all(|h| !h.contains_key("authorization")),
        "no credentials reached the server: {seen:?}"
    );
    open.stop().await;
}

#[tokio::test]
async fn a_server_that_rejects_every_token_gets_three_more_then_an_error() {
    let (server, entry) = with_secret(Duration::from_secs(3600)).await;
    server.reject_tokens.store(true, Ordering::Relaxed);
    let err = connect_mcp(
        [("m2m", entry)],
        ConnectOptions::default().tokens(Arc::new(MemoryTokenStore::new())),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, McpError::OAuth { .. }), "{err}");
    assert!(err.to_string().contains("rejected 3 fresh tokens"), "{err}");
    assert_eq!(grants(&server), 4, "the first token and three more");
    server.stop().await;
}
