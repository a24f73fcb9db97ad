//! OAuth for HTTP MCP servers against a local authorization server + MCP
//! server (`lousho_testkit::oauth_fixture`): sign-in, the 0600 token file,
//! reuse on the next start, refresh, `NeedsAuth`, secrets kept out of
//! `Debug` and logs.

use lousho::mcp::OAuthSettings;
use lousho::mcp::oauth::{self, FileTokenStore, MemoryTokenStore, OAuthError, TokenStore};
use lousho::mcp::{ConnectOptions, McpError, ServerStatus};
use lousho::tool::ToolContext;
use lousho::{McpServer, connect_mcp};
use lousho_testkit::oauth_fixture::{approve_in_background, free_port, serve_oauth};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

fn entry(url: &str) -> McpServer {
    let redirect = format!("http://127.0.0.1:{}/callback", free_port());
    McpServer::http(url).oauth(OAuthSettings::new(redirect))
}

fn temp_file(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("lousho-oauth-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir.join("tokens.json")
}

async fn echo(mcp: &lousho::mcp::McpClient, server: &str) -> lousho::tool::ToolOutput {
    let tools = mcp.tools();
    let tool = tools.get(&format!("{server}__echo")).expect("echo tool");
    tool.call(json!({"text": "hi"}), ToolContext::new("t"))
        .await
        .unwrap()
}

#[tokio::test]
async fn login_stores_a_0600_grant_that_the_next_start_reuses() {
    let server = serve_oauth(Duration::from_secs(3600)).await;
    let path = temp_file("reuse");
    let store: Arc<dyn TokenStore> = Arc::new(FileTokenStore::new(&path));
    let entry = entry(&server.url);
    let grant = oauth::login(&entry, store.clone(), approve_in_background)
        .await
        .unwrap();
    assert!(grant.has_access_token() && grant.has_refresh_token());
    assert_eq!(grant.client_id(), "fixture-client");
    assert_eq!(server.log.registrations.load(Ordering::Relaxed), 1);
    assert_eq!(server.log.code_exchanges.load(Ordering::Relaxed), 1);
    // RFC 8707: the server's URL as `resource` in the authorize and token requests.
    assert_eq!(
        *server.log.resources.lock().unwrap(),
        vec![server.url.clone(), server.url.clone()]
    );

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "token file mode {mode:o}");
    }
    let file: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert!(
        file.get(&server.url).is_some(),
        "keyed by server URL: {file}"
    );

    // First start: uses the grant.
    let mcp = connect_mcp(
        [("docs", entry.clone())],
        ConnectOptions::default().tokens(store),
    )
    .await
    .unwrap();
    assert_eq!(mcp.status()["docs"], ServerStatus::Connected);
    let out = echo(&mcp, "docs").await;
    assert!(!out.is_error, "{}", out.to_model_text());
    mcp.close().await;

    // Next start, a new store on the same file: no new sign-in.
    let again: Arc<dyn TokenStore> = Arc::new(FileTokenStore::new(&path));
    let mcp = connect_mcp(
        [("docs", entry.clone())],
        ConnectOptions::default().tokens(again.clone()),
    )
    .await
    .unwrap();
    assert_eq!(mcp.status()["docs"], ServerStatus::Connected);
    assert!(!echo(&mcp, "docs").await.is_error);
    assert_eq!(
        server.log.authorizations.load(Ordering::Relaxed),
        1,
        "no second authorization"
    );
    mcp.close().await;

    // Logout forgets it; the next start needs a sign-in again.
    assert!(oauth::logout(&entry, again.as_ref()).await.unwrap());
    let mcp = connect_mcp([("docs", entry)], ConnectOptions::default().tokens(again))
        .await
        .unwrap();
    assert_eq!(mcp.status()["docs"], ServerStatus::NeedsAuth);
    server.stop().await;
}

#[tokio::test]
async fn an_empty_store_means_needs_auth_and_the_other_servers_keep_working() {
    let secured = serve_oauth(Duration::from_secs(3600)).await;
    let open = lousho_testkit::mcp_fixture::serve_http(false).await;
    let mcp = connect_mcp(
        [
            ("secured", entry(&secured.url)),
            ("open", McpServer::http(&open.url)),
        ],
        ConnectOptions::default().tokens(Arc::new(MemoryTokenStore::new())),
    )
    .await
    .unwrap();
    let status = mcp.status();
    assert_eq!(status["secured"], ServerStatus::NeedsAuth);
    assert_eq!(status["open"], ServerStatus::Connected);
    let tools = mcp.tools();
    assert!(
        tools
            .iter()
            .all(|t| !t.spec().name.starts_with("secured__"))
    );
    assert!(!echo(&mcp, "open").await.is_error);
    // Nothing was sent to the authorization server without an operator.
    assert_eq!(secured.log.authorizations.load(Ordering::Relaxed), 0);
    mcp.close().await;
    open.stop().await;
    secured.stop().await;
}

#[tokio::test]
async fn oauth_servers_need_a_token_store() {
    let err = connect_mcp(
        [("secured", entry("http://127.0.0.1:9/mcp"))],
        ConnectOptions::default(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, McpError::TokensRequired { .. }), "{err}");
    assert!(err.to_string().contains("ConnectOptions::tokens"), "{err}");
}

#[tokio::test]
async fn expired_tokens_are_refreshed_and_the_store_updated() {
    let server = serve_oauth(Duration::from_secs(2)).await;
    let store = MemoryTokenStore::new();
    let shared: Arc<dyn TokenStore> = Arc::new(store.clone());
    let entry = entry(&server.url);
    oauth::login(&entry, shared.clone(), approve_in_background)
        .await
        .unwrap();
    let before = serde_json::to_string(&store.load(&server.url).await.unwrap().unwrap()).unwrap();
    let mcp = connect_mcp([("docs", entry)], ConnectOptions::default().tokens(shared))
        .await
        .unwrap();
    assert!(!echo(&mcp, "docs").await.is_error);
    tokio::time::sleep(Duration::from_millis(2200)).await; // the access token has expired
    let out = echo(&mcp, "docs").await;
    assert!(!out.is_error, "{}", out.to_model_text());
    assert!(
        server.log.refreshes.load(Ordering::Relaxed) >= 1,
        "refreshed"
    );
    assert_eq!(
        server.log.authorizations.load(Ordering::Relaxed),
        1,
        "without the operator"
    );
    let after = serde_json::to_string(&store.load(&server.url).await.unwrap().unwrap()).unwrap();
    assert_ne!(before, after, "the refreshed tokens are stored");
    assert_eq!(mcp.status()["docs"], ServerStatus::Connected);
    mcp.close().await;
    server.stop().await;
}

#[tokio::test]
async fn a_failed_refresh_turns_the_status_into_needs_auth() {
    let server = serve_oauth(Duration::from_secs(2)).await;
    let store: Arc<dyn TokenStore> = Arc::new(MemoryTokenStore::new());
    let entry = entry(&server.url);
    oauth::login(&entry, store.clone(), approve_in_background)
        .await
        .unwrap();
    let mcp = connect_mcp([("docs", entry)], ConnectOptions::default().tokens(store))
        .await
        .unwrap();
    assert!(!echo(&mcp, "docs").await.is_error);
    server.reject_refresh.store(true, Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let out = echo(&mcp, "docs").await;
    assert!(out.is_error);
    assert!(
        out.to_model_text().contains("lousho login"),
        "{}",
        out.to_model_text()
    );
    assert_eq!(mcp.status()["docs"], ServerStatus::NeedsAuth);
    mcp.close().await;
    server.stop().await;
}

#[tokio::test]
async fn a_redirect_uri_that_is_not_loopback_is_refused_before_anything_is_sent() {
    let server = serve_oauth(Duration::from_secs(3600)).await;
    let entry =
        McpServer::http(&server.url).oauth(OAuthSettings::new("https://example.com/callback"));
    let err = oauth::login(&entry, Arc::new(MemoryTokenStore::new()), |_| {
        panic!("no URL handed out")
    })
    .await
    .unwrap_err();
    assert!(matches!(err, OAuthError::RedirectUri { .. }), "{err}");
    assert_eq!(server.log.registrations.load(Ordering::Relaxed), 0);
    server.stop().await;
}

#[tokio::test(flavor = "current_thread")]
async fn tokens_never_reach_debug_output_errors_or_logs() {
    let (logs, _guard) = super::fixture::capture_logs();

    let server = serve_oauth(Duration::from_secs(2)).await;
    let store = MemoryTokenStore::new();
    let shared: Arc<dyn TokenStore> = Arc::new(store.clone());
    let entry = entry(&server.url).oauth(
        OAuthSettings::new(format!("http://127.0.0.1:{}/callback", free_port()))
            .client_secret("secret-client-value"),
    );
    let grant = oauth::login(&entry, shared.clone(), approve_in_background)
        .await
        .unwrap();
    let mcp = connect_mcp(
        [("docs", entry.clone())],
        ConnectOptions::default().tokens(shared.clone()),
    )
    .await
    .unwrap();
    assert!(!echo(&mcp, "docs").await.is_error);
    tokio::time::sleep(Duration::from_millis(2200)).await;
    assert!(!echo(&mcp, "docs").await.is_error); // a refresh happens here
    server.reject_refresh.store(true, Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let failed = echo(&mcp, "docs").await; // and a failed one here

    let mut seen = logs.text();
    seen.push_str(&format!(
        "{grant:?} {store:?} {mcp:?} {entry:?} {:?}",
        mcp.status()
    ));
    seen.push_str(&failed.to_model_text());
    seen.push_str(&format!("{:?}", FileTokenStore::new("x.json")));
    // Access and refresh tokens. (Authorization codes are single-use and
    // PKCE-bound; rmcp 3.11 logs them at DEBUG, so they are not checked.)
    let issued: Vec<String> = server
        .log
        .issued
        .lock()
        .unwrap()
        .iter()
        .filter(|t| t.starts_with("secret-"))
        .cloned()
        .collect();
    assert!(
        issued.len() >= 4,
        "access + refresh tokens issued: {issued:?}"
    );
    assert!(seen.len() > 1000, "the logs were captured");
    for secret in issued.iter().chain([&"secret-client-value".to_owned()]) {
        assert!(!seen.contains(secret.as_str()), "`{secret}` leaked");
    }
    mcp.close().await;
    server.stop().await;
}

#[tokio::test]
async fn the_file_store_keeps_servers_apart_and_leaves_no_temporary_files() {
    let path = temp_file("apart");
    let store = FileTokenStore::new(&path);
    let grant = |client: &str| -> oauth::StoredToken {
        serde_json::from_value(
            json!({"client_id": client, "token_response": null, "granted_scopes": ["a"]}),
        )
        .unwrap()
    };
    assert!(
        store.load("http://a/mcp").await.unwrap().is_none(),
        "no file yet"
    );
    store.save("http://a/mcp", grant("client-a")).await.unwrap();
    store.save("http://b/mcp", grant("client-b")).await.unwrap();
    assert_eq!(
        store
            .load("http://a/mcp")
            .await
            .unwrap()
            .unwrap()
            .client_id(),
        "client-a"
    );
    assert_eq!(
        store
            .load("http://b/mcp")
            .await
            .unwrap()
            .unwrap()
            .client_id(),
        "client-b"
    );
    store.remove("http://a/mcp").await.unwrap();
    assert!(store.load("http://a/mcp").await.unwrap().is_none());
    assert_eq!(
        store.load("http://b/mcp").await.unwrap().unwrap().scopes(),
        ["a".to_owned()]
    );
    let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        vec!["tokens.json".to_owned()],
        "only the token file remains"
    );
    // A file that is not a token file: the error says so and shows no content.
    std::fs::write(&path, "not json: secret-xyz").unwrap();
    let err = store.load("http://b/mcp").await.unwrap_err().to_string();
    assert!(
        err.contains("is not a token file") && !err.contains("secret-xyz"),
        "{err}"
    );
}
