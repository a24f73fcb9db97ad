//! lousho's own MCP client signs in to a served lousho agent end to end
//! (issue 33): the agent is an OAuth resource server trusting a real
//! authorization server, `oidc-provider` (interop/oidc/provider.mjs); the
//! client gets `401`, finds the Protected Resource Metadata, then the
//! authorization server's metadata, registers (dynamically, or as the
//! pre-registered `lousho`), sends the user through authorization code +
//! PKCE with the served agent as the RFC 8707 `resource`, and calls the
//! agent's tools with the token — stepping up when a tool needs a scope it
//! was not granted. The user's browser is played by
//! [`oidc_provider::sign_in`], which fills in the provider's own sign-in
//! and consent forms. Under `CI=true` a missing `oidc-provider` fails.

use lousho::mcp::oauth::{self, Authorizer, MemoryTokenStore, OAuthError, TokenStore};
use lousho::mcp::{Auth, ConnectOptions, HttpOptions, McpServerHandle, OAuthResource};
use lousho::mcp::{OAuthSettings, ServerStatus};
use lousho::tool::{ToolContext, ToolOutput};
use lousho::{McpServer, connect_mcp, serve_mcp};
use lousho_testkit::oauth_fixture::free_port;
use lousho_testkit::oidc_provider::{self, Idp};
use lousho_testkit::serve::{CancelProbe, fixture_options};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// The fixture agent served on a free port behind `idp`, `scoped` (given
/// the issuer and audience): which scopes open what.
async fn serve(
    idp: &Idp,
    scoped: impl FnOnce(OAuthResource) -> OAuthResource,
) -> (McpServerHandle, String) {
    let port = free_port();
    let audience = format!("http://127.0.0.1:{port}/mcp");
    let server = serve_mcp(
        fixture_options(&CancelProbe::default())
            .http(HttpOptions::new().port(port))
            .auth(Auth::oauth(scoped(OAuthResource::new(
                &idp.issuer,
                &audience,
            )))),
    )
    .await
    .unwrap();
    assert_eq!(server.url().unwrap(), audience);
    (server, audience)
}

/// The user `carol` at her browser: every authorization URL she is sent to
/// is kept, and she signs in and consents.
#[derive(Debug)]
struct Carol {
    issuer: String,
    urls: Mutex<Vec<String>>,
}

#[lousho::async_trait]
impl Authorizer for Carol {
    async fn authorize(&self, authorization_url: &str) -> Result<String, OAuthError> {
        self.urls.lock().unwrap().push(authorization_url.to_owned());
        Ok(oidc_provider::sign_in(&self.issuer, "carol", authorization_url).await)
    }
}

async fn call(mcp: &lousho::mcp::McpClient, tool: &str, args: Value) -> ToolOutput {
    let tools = mcp.tools();
    let tool = tools
        .get(tool)
        .unwrap_or_else(|| panic!("{tool} among {:?}", tools.names().collect::<Vec<_>>()));
    tool.call(args, ToolContext::new("t")).await.unwrap()
}

/// What an authorization URL asks for.
fn query(url: &str) -> Vec<(String, String)> {
    reqwest::Url::parse(url)
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn param<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

#[tokio::test(flavor = "multi_thread")]
async fn login_registers_signs_in_with_pkce_for_the_agent_and_the_grant_calls_it() {
    let Some(idp) = Idp::start().await else {
        return;
    };
    // Every call needs `mcp:use`, the agent itself (`test-agent`) also
    // `mcp:research`.
    let (server, audience) = serve(&idp, |r| {
        r.scope("mcp:use").tool_scope("test-agent", "mcp:research")
    })
    .await;
    let redirect = format!("http://127.0.0.1:{}/callback", free_port());
    let entry = McpServer::http(&audience).oauth(OAuthSettings::new(&redirect));
    let store: Arc<dyn TokenStore> = Arc::new(MemoryTokenStore::new());

    // `lousho login`'s path: the URL goes to the operator, whose browser
    // ends at the loopback redirect URI lousho listens on.
    let seen = Arc::new(Mutex::new(None));
    let issuer = idp.issuer.clone();
    let grant = oauth::login(&entry, store.clone(), {
        let seen = seen.clone();
        move |url: &str| {
            *seen.lock().unwrap() = Some(url.to_owned());
            oidc_provider::sign_in_in_background(&issuer, "carol", url);
        }
    })
    .await
    .unwrap();
    let url = seen.lock().unwrap().clone().expect("an authorization URL");
    assert!(
        url.starts_with(&format!("{}/auth?", idp.issuer)),
        "the endpoint from the issuer's metadata: {url}"
    );
    let asked = query(&url);
    assert_eq!(param(&asked, "resource"), Some(audience.as_str()), "{url}");
    assert_eq!(
        param(&asked, "code_challenge_method"),
        Some("S256"),
        "{url}"
    );
    assert_eq!(param(&asked, "redirect_uri"), Some(redirect.as_str()));
    let scope = param(&asked, "scope").unwrap_or_default();
    assert!(scope.split(' ').any(|s| s == "mcp:use"), "{url}");
    // Registered dynamically: a client id the provider made up.
    assert!(!grant.client_id().is_empty() && grant.client_id() != "lousho");
    assert!(grant.has_access_token());
    assert!(grant.scopes().iter().any(|s| s == "mcp:use"), "{grant:?}");

    // The next start uses the grant: the served agent's own tool answers.
    let mcp = connect_mcp(
        [("agent", entry.clone())],
        ConnectOptions::default().tokens(store.clone()),
    )
    .await
    .unwrap();
    assert_eq!(mcp.status()["agent"], ServerStatus::Connected);
    let out = call(&mcp, "agent__echo", json!({"text": "signed in"})).await;
    assert!(!out.is_error, "{}", out.to_model_text());
    assert!(out.to_model_text().contains("signed in"));
    // The agent needs a scope carol was not asked for, and there is nobody
    // to ask her here: it is listed to her only after a step-up.
    assert!(mcp.tools().get("agent__test-agent").is_none());
    mcp.close().await;
    server.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_connection_signs_in_on_401_and_steps_up_on_403_by_itself() {
    let Some(idp) = Idp::start().await else {
        return;
    };
    // Every call needs both scopes; the client asks for one of them only
    // (its settings name it), so its first token falls short.
    let (server, audience) = serve(&idp, |r| r.scope("mcp:use").scope("mcp:research")).await;
    let redirect = format!("http://127.0.0.1:{}/callback", free_port());
    // The pre-registered public client (a native app: any loopback port).
    let entry = McpServer::http(&audience).oauth(
        OAuthSettings::new(&redirect)
            .client_id("lousho")
            .scopes(["mcp:use"]),
    );
    let store = MemoryTokenStore::new();
    let carol = Arc::new(Carol {
        issuer: idp.issuer.clone(),
        urls: Mutex::new(Vec::new()),
    });
    let mcp = connect_mcp(
        [("agent", entry.clone())],
        ConnectOptions::default()
            .tokens(Arc::new(store.clone()))
            .authorizer(carol.clone()),
    )
    .await
    .unwrap();
    assert_eq!(mcp.status()["agent"], ServerStatus::Connected);

    // Sent to the provider twice: to sign in (401), then to step up (403
    // insufficient_scope) — both times for the agent as the resource.
    let urls = carol.urls.lock().unwrap().clone();
    assert_eq!(urls.len(), 2, "{urls:?}");
    for url in &urls {
        let asked = query(url);
        assert_eq!(param(&asked, "client_id"), Some("lousho"), "{url}");
        assert_eq!(param(&asked, "resource"), Some(audience.as_str()), "{url}");
        assert_eq!(param(&asked, "code_challenge_method"), Some("S256"));
    }
    let scopes = |url: &str| -> Vec<String> {
        let asked = query(url);
        let scope = param(&asked, "scope").unwrap_or_default().to_owned();
        scope.split(' ').map(str::to_owned).collect()
    };
    assert!(
        !scopes(&urls[0]).contains(&"mcp:research".to_owned()),
        "{urls:?}"
    );
    assert!(
        scopes(&urls[1]).contains(&"mcp:research".to_owned()),
        "{urls:?}"
    );
    let grant = oauth::stored_token(&entry, &store)
        .await
        .unwrap()
        .expect("the grant is stored");
    assert_eq!(grant.client_id(), "lousho");
    assert!(
        grant.scopes().iter().any(|s| s == "mcp:research"),
        "{grant:?}"
    );

    // The served agent answers carol: its own tool, and the agent itself
    // (which runs its model and calls its tools on the server's side).
    let out = call(&mcp, "agent__echo", json!({"text": "hi"})).await;
    assert!(!out.is_error, "{}", out.to_model_text());
    let out = call(&mcp, "agent__test-agent", json!({"message": "hello"})).await;
    assert!(!out.is_error, "{}", out.to_model_text());
    assert_eq!(carol.urls.lock().unwrap().len(), 2, "no further sign-in");
    mcp.close().await;
    server.close().await.unwrap();
}
