//! Opaque access tokens checked by token introspection (RFC 7662) against a
//! real authorization server, `oidc-provider` (interop/oidc/provider.mjs,
//! whose client `carol` gets opaque tokens and whose client `mcp-server`
//! may introspect): an active token for this audience calls; revoked,
//! unknown and other-audience tokens get the same `401 invalid_token`
//! challenge as bad JWTs; JWTs are still checked against the keys, never
//! introspected; introspected scopes gate tools; answers are cached (a
//! burst of calls with one token costs one introspection, counted at the
//! issuer); wrong introspection credentials or an unreachable endpoint
//! answer `503` saying what to fix. Under `CI=true` a missing
//! `oidc-provider` fails.

use super::serve_oauth::{call, free_port, list, post, serve, tool_names};
use lousho::mcp::OAuthResource;
use lousho_testkit::oidc_provider::{INTROSPECTION_CLIENT, Idp, hs256};
use serde_json::json;

/// Tokens for `audience` from `idp`, introspected as the test client.
fn introspecting(idp: &Idp, audience: &str) -> OAuthResource {
    let (id, secret) = INTROSPECTION_CLIENT;
    OAuthResource::new(&idp.issuer, audience).introspection(id, secret)
}

/// The fixture served on a free port behind the resource `resource` makes
/// for its audience: the server, its URL, the audience and the port.
async fn serve_free(
    resource: impl FnOnce(&str) -> OAuthResource,
) -> (lousho::mcp::McpServerHandle, String, String, u16) {
    let port = free_port();
    let audience = format!("http://127.0.0.1:{port}/mcp");
    let server = serve(port, resource(&audience)).await;
    let url = server.url().unwrap();
    (server, url, audience, port)
}

#[tokio::test]
async fn opaque_tokens_are_introspected_and_refused_like_bad_jwts() {
    let Some(idp) = Idp::start().await else {
        return;
    };
    let (server, url, audience, port) = serve_free(|a| introspecting(&idp, a)).await;
    let metadata = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp");

    let opaque = idp.token("carol", &audience, "mcp:use").await;
    assert_eq!(opaque.split('.').count(), 1, "carol's tokens are opaque");
    let revoked = idp.token("carol", &audience, "mcp:use").await;
    idp.revoke("carol", &revoked).await;
    let elsewhere = idp
        .token("carol", "http://127.0.0.1:1/other", "mcp:use")
        .await;
    let jwt = idp.token("alice", &audience, "mcp:use").await;
    let jwt_elsewhere = idp
        .token("alice", "http://127.0.0.1:1/other", "mcp:use")
        .await;
    let hs = hs256(
        idp.kid.as_bytes(),
        &idp.kid,
        &idp.claims("alice", &audience, "mcp:use"),
    );

    let too_long = "a".repeat(9 * 1024);

    // (case, token, status, introspections it costs)
    let cases: Vec<(&str, &str, u16, u64)> = vec![
        ("an active opaque token", &opaque, 200, 1),
        ("the same token again (cached)", &opaque, 200, 0),
        ("a revoked opaque token", &revoked, 401, 1),
        (
            "an unknown opaque token",
            "Zm9yZ2VkLW9wYXF1ZS10b2tlbg",
            401,
            1,
        ),
        ("an opaque token for another audience", &elsewhere, 401, 1),
        ("a JWT (checked against the keys)", &jwt, 200, 0),
        ("a JWT for another audience", &jwt_elsewhere, 401, 0),
        ("an HS256 JWT (refused, not introspected)", &hs, 401, 0),
        (
            "an opaque token over 8 KiB (never sent on)",
            &too_long,
            401,
            0,
        ),
    ];
    for (case, token, want, cost) in &cases {
        let before = idp.introspections().await;
        let (status, challenge, body) = post(&url, Some(token), &list()).await;
        assert_eq!(status, *want, "{case}: {body}");
        assert_eq!(idp.introspections().await - before, *cost, "{case}");
        if *want == 401 {
            assert!(
                challenge.starts_with(&format!("Bearer resource_metadata=\"{metadata}\""))
                    && challenge.contains("error=\"invalid_token\""),
                "{case}: {challenge}"
            );
            assert!(!challenge.contains(*token), "{case}: the token leaks");
        } else {
            assert!(tool_names(&body).contains(&"echo".to_owned()), "{case}");
        }
    }
    server.close().await.unwrap();
}

#[tokio::test]
async fn a_burst_of_calls_with_one_token_costs_one_introspection() {
    let Some(idp) = Idp::start().await else {
        return;
    };
    let (server, url, audience, _) = serve_free(|a| introspecting(&idp, a)).await;
    let token = idp.token("carol", &audience, "mcp:use").await;
    let before = idp.introspections().await;

    // Eight at once (they wait for one introspection), then four in turn.
    let mut burst = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (url, token) = (url.clone(), token.clone());
        burst.spawn(async move { post(&url, Some(&token), &list()).await.0 });
    }
    while let Some(status) = burst.join_next().await {
        assert_eq!(status.unwrap(), 200);
    }
    for _ in 0..4 {
        let (status, _, body) =
            post(&url, Some(&token), &call("echo", json!({"text": "hi"}))).await;
        assert_eq!(status, 200, "{body}");
    }
    assert_eq!(idp.introspections().await - before, 1);
    server.close().await.unwrap();
}

#[tokio::test]
async fn introspected_scopes_open_tools_like_jwt_scopes() {
    let Some(idp) = Idp::start().await else {
        return;
    };
    let (server, url, audience, _) = serve_free(|a| {
        introspecting(&idp, a)
            .scope("mcp:use")
            .tool_scope("test-agent", "mcp:research")
    })
    .await;

    let basic = idp.token("carol", &audience, "mcp:use").await;
    let (status, _, body) = post(&url, Some(&basic), &list()).await;
    assert_eq!(status, 200, "{body}");
    let names = tool_names(&body);
    assert!(names.contains(&"echo".to_owned()), "{names:?}");
    assert!(!names.contains(&"test-agent".to_owned()), "{names:?}");
    let agent = call("test-agent", json!({"message": "hello"}));
    let (status, challenge, _) = post(&url, Some(&basic), &agent).await;
    assert_eq!(status, 403);
    assert!(
        challenge.contains("error=\"insufficient_scope\"")
            && challenge.contains("scope=\"mcp:use mcp:research\""),
        "{challenge}"
    );

    let full = idp.token("carol", &audience, "mcp:use mcp:research").await;
    let (status, _, body) = post(&url, Some(&full), &agent).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["result"]["isError"] != json!(true), "{body}");

    // Without the scope every call needs, nothing.
    let admin = idp.token("carol", &audience, "mcp:admin").await;
    let (status, challenge, _) = post(&url, Some(&admin), &list()).await;
    assert_eq!(status, 403);
    assert!(challenge.contains("scope=\"mcp:use\""), "{challenge}");
    server.close().await.unwrap();
}

/// POSTs `tools/list` with `token`: status, `Retry-After`, body text.
async fn post_text(url: &str, token: &str) -> (u16, Option<String>, String) {
    let res = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(token)
        .body(list().to_string())
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    let retry = res
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, retry, res.text().await.unwrap())
}

#[tokio::test]
async fn a_misconfigured_or_unreachable_introspection_is_503_not_an_accept() {
    let Some(idp) = Idp::start().await else {
        return;
    };
    let nowhere = format!("http://127.0.0.1:{}/token/introspection", free_port());
    // (case, settings, the opaque token's status, words of the answer)
    type Settings = fn(OAuthResource, &str) -> OAuthResource;
    let cases: Vec<(&str, Settings, u16, &str)> = vec![
        (
            "wrong client secret",
            |r, _| r.introspection(INTROSPECTION_CLIENT.0, "not-the-secret"),
            503,
            "refused this server's introspection credentials (HTTP 401, invalid_client)",
        ),
        (
            "unknown client",
            |r, _| r.introspection("nobody", "nothing"),
            503,
            "introspection credentials",
        ),
        (
            "an endpoint nobody listens on",
            |r, nowhere| {
                r.introspection(INTROSPECTION_CLIENT.0, INTROSPECTION_CLIENT.1)
                    .introspection_endpoint(nowhere)
            },
            503,
            "cannot introspect the token",
        ),
        (
            "no introspection configured",
            |r, _| r,
            401,
            "invalid_token",
        ),
    ];
    for (case, settings, want, words) in cases {
        let (server, url, audience, _) =
            serve_free(|a| settings(OAuthResource::new(&idp.issuer, a), &nowhere)).await;
        let opaque = idp.token("carol", &audience, "mcp:use").await;
        let before = idp.introspections().await;
        let (status, retry, body) = post_text(&url, &opaque).await;
        assert_eq!(status, want, "{case}: {body}");
        assert!(body.contains(words), "{case}: {body}");
        assert!(!body.contains(&opaque), "{case}: the token leaks: {body}");
        assert!(!body.contains("not-the-secret"), "{case}: the secret leaks");
        if want == 503 {
            assert!(retry.is_some(), "{case}: Retry-After");
            // Not cached: the next call asks again (and fails the same way).
            let (again, _, _) = post_text(&url, &opaque).await;
            assert_eq!(again, 503, "{case}");
        } else {
            assert_eq!(idp.introspections().await, before, "{case}");
        }
        // JWTs never need the introspection endpoint.
        let jwt = idp.token("alice", &audience, "mcp:use").await;
        let (status, _, body) = post_text(&url, &jwt).await;
        assert_eq!(status, 200, "{case}: {body}");
        server.close().await.unwrap();
    }
}
