//! A served agent as an OAuth resource server (issue 33) against a real
//! authorization server, `oidc-provider` (interop/oidc/provider.mjs): its
//! tokens call; expired, wrong-audience, wrong-issuer, badly signed,
//! unsigned, HS256, unknown-key and missing tokens are refused with `401`
//! and the challenge MCP names; scopes open tools (`403
//! insufficient_scope` for step-up). Under `CI=true` a missing
//! `oidc-provider` fails.

use lousho::mcp::{Auth, HttpOptions, McpServerHandle, OAuthResource};
use lousho::serve_mcp;
use lousho_testkit::oidc_provider::{Idp, hs256, now, unsigned};
use lousho_testkit::serve::{CancelProbe, fixture_options};
use serde_json::{Value, json};

/// A port nobody listens on now (the audience must name the server's port
/// before it binds).
pub(super) fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// The fixture served on `port` behind `resource`.
pub(super) async fn serve(port: u16, resource: OAuthResource) -> McpServerHandle {
    serve_mcp(
        fixture_options(&CancelProbe::default())
            .http(HttpOptions::new().port(port))
            .auth(Auth::oauth(resource)),
    )
    .await
    .unwrap()
}

/// POSTs a JSON-RPC request with `token` (if any): status,
/// `WWW-Authenticate`, body.
pub(super) async fn post(url: &str, token: Option<&str>, body: &Value) -> (u16, String, Value) {
    let mut req = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    let challenge = res
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = res.json().await.unwrap_or(Value::Null);
    (status, challenge, body)
}

pub(super) fn list() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
}

pub(super) fn call(tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}})
}

pub(super) fn tool_names(body: &Value) -> Vec<String> {
    body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn tokens_are_checked_against_the_issuers_keys_and_claims() {
    let Some(idp) = Idp::start().await else {
        return;
    };
    let port = free_port();
    let audience = format!("http://127.0.0.1:{port}/mcp");
    let server = serve(port, OAuthResource::new(&idp.issuer, &audience)).await;
    let url = server.url().unwrap();
    let metadata = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp");

    let valid = idp.token("alice", &audience, "mcp:use").await;
    let elsewhere = idp
        .token("alice", "http://127.0.0.1:1/other", "mcp:use")
        .await;
    let claims = idp.claims("alice", &audience, "mcp:use");
    let with = |key: &str, value: Value| {
        let mut c = claims.clone();
        c[key] = value;
        c
    };
    let expired = idp.forge(&with("exp", json!(now() - 3600)));
    let early = idp.forge(&with("nbf", json!(now() + 3600)));
    let other_issuer = idp.forge(&with("iss", json!("http://127.0.0.1:1")));
    let other_audience = idp.forge(&with("aud", json!("http://127.0.0.1:1/mcp")));
    let no_subject = idp.forge(&{
        let mut c = claims.clone();
        c.as_object_mut().unwrap().remove("sub");
        c
    });
    let bad_signature = idp.forge_stranger(&idp.kid, &claims);
    let unknown_kid = idp.forge_stranger("k-unknown", &claims);
    let none = unsigned(&claims);
    let hs = hs256(idp.kid.as_bytes(), &idp.kid, &claims);
    let forged_ok = idp.forge(&claims);

    // (case, token, status)
    let cases: Vec<(&str, Option<&str>, u16)> = vec![
        ("issued by the IdP", Some(&valid), 200),
        ("forged right with the IdP's key", Some(&forged_ok), 200),
        ("missing", None, 401),
        ("not a JWT", Some("opaque-token"), 401),
        ("for another resource (IdP)", Some(&elsewhere), 401),
        ("expired", Some(&expired), 401),
        ("not yet valid", Some(&early), 401),
        ("wrong issuer", Some(&other_issuer), 401),
        ("wrong audience", Some(&other_audience), 401),
        ("no subject", Some(&no_subject), 401),
        ("bad signature", Some(&bad_signature), 401),
        ("unknown kid", Some(&unknown_kid), 401),
        ("alg none", Some(&none), 401),
        ("HS256", Some(&hs), 401),
    ];
    for (case, token, want) in &cases {
        let (status, challenge, _) = post(&url, *token, &list()).await;
        assert_eq!(status, *want, "{case}");
        if *want == 401 {
            assert!(
                challenge.starts_with(&format!("Bearer resource_metadata=\"{metadata}\"")),
                "{case}: {challenge}"
            );
            let invalid = challenge.contains("error=\"invalid_token\"");
            assert_eq!(invalid, token.is_some(), "{case}: {challenge}");
        }
    }

    // The metadata names the issuer and the resource.
    let doc: Value = reqwest::get(&metadata).await.unwrap().json().await.unwrap();
    assert_eq!(doc["resource"], audience);
    assert_eq!(doc["authorization_servers"], json!([idp.issuer]));
    assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
    server.close().await.unwrap();
}

#[tokio::test]
async fn scopes_open_tools_and_a_missing_one_asks_for_step_up() {
    let Some(idp) = Idp::start().await else {
        return;
    };
    let port = free_port();
    let audience = format!("http://127.0.0.1:{port}/mcp");
    let resource = OAuthResource::new(&idp.issuer, &audience)
        .scope("mcp:use")
        .tool_scope("test-agent", "mcp:research");
    let server = serve(port, resource).await;
    let url = server.url().unwrap();

    let basic = idp.token("alice", &audience, "mcp:use").await;
    let (status, _, body) = post(&url, Some(&basic), &list()).await;
    assert_eq!(status, 200);
    let names = tool_names(&body);
    assert!(names.contains(&"echo".to_owned()), "{names:?}");
    assert!(!names.contains(&"test-agent".to_owned()), "{names:?}");
    let (status, _, body) = post(&url, Some(&basic), &call("echo", json!({"text": "hi"}))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "hi");

    let (status, challenge, _) = post(
        &url,
        Some(&basic),
        &call("test-agent", json!({"message": "hello"})),
    )
    .await;
    assert_eq!(status, 403);
    assert!(
        challenge.contains("error=\"insufficient_scope\"")
            && challenge.contains("scope=\"mcp:use mcp:research\""),
        "{challenge}"
    );

    // Stepped up, the agent is listed and answers.
    let full = idp.token("alice", &audience, "mcp:use mcp:research").await;
    let (_, _, body) = post(&url, Some(&full), &list()).await;
    assert!(tool_names(&body).contains(&"test-agent".to_owned()));
    let (status, _, body) = post(
        &url,
        Some(&full),
        &call("test-agent", json!({"message": "hello"})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["result"]["isError"] != json!(true), "{body}");

    // A token without the scope every call needs gets nowhere.
    let admin = idp.token("bob", &audience, "mcp:admin").await;
    let (status, challenge, _) = post(&url, Some(&admin), &list()).await;
    assert_eq!(status, 403);
    assert!(
        challenge.contains("error=\"insufficient_scope\"")
            && challenge.contains("scope=\"mcp:use\""),
        "{challenge}"
    );
    server.close().await.unwrap();
}

#[tokio::test]
async fn two_callers_never_share_a_session_even_by_the_same_id() {
    use lousho::session::{MemoryStore, SessionStore};
    use std::sync::Arc;
    let Some(idp) = Idp::start().await else {
        return;
    };
    let port = free_port();
    let audience = format!("http://127.0.0.1:{port}/mcp");
    let store = Arc::new(MemoryStore::new());
    let server = serve_mcp(
        fixture_options(&CancelProbe::default())
            .http(HttpOptions::new().port(port))
            .sessions(store.clone())
            .session_transcripts(store.clone())
            .auth(Auth::oauth(OAuthResource::new(&idp.issuer, &audience))),
    )
    .await
    .unwrap();
    let url = server.url().unwrap();
    let alice = idp.token("alice", &audience, "mcp:use").await;
    let bob = idp.token("bob", &audience, "mcp:use").await;
    let turn = |token: String, message: &'static str| {
        let url = url.clone();
        async move {
            let args = json!({"message": message, "session": "shared"});
            let (status, _, body) = post(&url, Some(&token), &call("test-agent", args)).await;
            assert_eq!(status, 200, "{body}");
            assert_eq!(body["result"]["structuredContent"]["session"], "shared");
        }
    };
    turn(alice.clone(), "one").await;
    turn(alice.clone(), "two").await;
    turn(bob.clone(), "three").await;

    let sessions = store.list().await.unwrap();
    let ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(!ids.contains(&"shared"), "{ids:?}");
    let of = |who: &str| {
        sessions
            .iter()
            .find(|s| s.id.contains(&format!("#{who}/")) && s.id.ends_with("/shared"))
            .unwrap_or_else(|| panic!("{who}'s session in {ids:?}"))
            .version
    };
    // Alice's two turns are hers alone; Bob's one turn started afresh.
    assert_eq!(of("alice"), 2 * of("bob"));

    // The session resources show each caller only its own conversation,
    // under the id it gave, and complete only its own ids.
    for (token, who) in [(&alice, "alice"), (&bob, "bob")] {
        let read = |uri: &str| {
            json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read",
                "params": {"uri": uri}})
        };
        let text = |body: &Value| -> Value {
            serde_json::from_str(body["result"]["contents"][0]["text"].as_str().unwrap()).unwrap()
        };
        let (status, _, body) = post(&url, Some(token), &read("lousho://sessions")).await;
        assert_eq!(status, 200, "{body}");
        let listed = text(&body);
        let rows = listed["sessions"].as_array().unwrap();
        assert_eq!(rows.len(), 1, "{who} sees only its session: {listed}");
        assert_eq!(rows[0]["id"], "shared", "{listed}");
        assert_eq!(rows[0]["messages"], of(who), "{who}: {listed}");
        let (_, _, body) = post(&url, Some(token), &read("lousho://sessions/shared")).await;
        assert_eq!(text(&body)["version"], of(who), "{who}: {body}");
        let complete = json!({"jsonrpc": "2.0", "id": 4, "method": "completion/complete",
            "params": {"ref": {"type": "ref/resource", "uri": "lousho://sessions/{id}"},
                "argument": {"name": "id", "value": ""}}});
        let (_, _, body) = post(&url, Some(token), &complete).await;
        assert_eq!(
            body["result"]["completion"]["values"],
            json!(["shared"]),
            "{who}: {body}"
        );
    }
    server.close().await.unwrap();
}
