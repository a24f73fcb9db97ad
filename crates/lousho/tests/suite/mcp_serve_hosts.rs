//! Who may reach a served agent over HTTP: the `Host` a request is for (one
//! header, no user info, absolute-form targets included), allowed extra
//! hosts, and the bearer scheme; raw HTTP requests over loopback.

use lousho::mcp::{Auth, HttpOptions, ServeError};
use lousho::{ServeOptions, serve_mcp};
use lousho_testkit::serve::{CancelProbe, fixture_agent};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

/// Sends `POST <target>` with these extra header lines and an `initialize`
/// body; returns the status code.
async fn status(addr: SocketAddr, target: &str, headers: &[&str]) -> u16 {
    let mut head = format!("POST {target} HTTP/1.1\r\n");
    for h in headers {
        head.push_str(h);
        head.push_str("\r\n");
    }
    let req = format!(
        "{head}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{INIT}",
        INIT.len()
    );
    let call = async {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(req.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out).await;
        String::from_utf8_lossy(&out)
            .split_whitespace()
            .nth(1)
            .unwrap_or("0")
            .parse()
            .unwrap()
    };
    tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .unwrap()
}

#[tokio::test]
async fn duplicate_hosts_user_info_and_foreign_absolute_targets_are_refused() {
    let probe = CancelProbe::default();
    let server =
        serve_mcp(ServeOptions::new(fixture_agent(&probe)).http(HttpOptions::new().port(0)))
            .await
            .unwrap();
    let addr = server.local_addr().unwrap();
    let local = format!("Host: {addr}");
    let cases: [(&str, Vec<&str>, u16); 7] = [
        ("/mcp", vec![&local], 200),
        ("/mcp", vec![&local, &local], 400),
        ("/mcp", vec![&local, "Host: evil.example.com"], 400),
        ("/mcp", vec!["Host: evil@127.0.0.1"], 400),
        ("http://evil.example.com/mcp", vec![&local], 403),
        (
            "http://evil.example.com:80/mcp",
            vec!["Host: 127.0.0.1"],
            403,
        ),
        ("http://127.0.0.1/mcp", vec![&local], 200),
    ];
    let mut got = Vec::new();
    for (target, headers, _) in &cases {
        got.push(status(addr, target, headers).await);
    }
    let want: Vec<u16> = cases.iter().map(|c| c.2).collect();
    assert_eq!(got, want, "{cases:?}");
    server.close().await.unwrap();
}

#[tokio::test]
async fn an_allowed_host_is_reachable_by_its_name() {
    let probe = CancelProbe::default();
    let server = serve_mcp(
        ServeOptions::new(fixture_agent(&probe))
            .http(HttpOptions::new().port(0).allow_host("agents.example.com")),
    )
    .await
    .unwrap();
    let addr = server.local_addr().unwrap();
    assert_eq!(
        status(addr, "/mcp", &["Host: agents.example.com"]).await,
        200
    );
    assert_eq!(
        status(addr, "/mcp", &["Host: agents.example.com:8443"]).await,
        200
    );
    assert_eq!(
        status(
            addr,
            "http://agents.example.com/mcp",
            &["Host: agents.example.com"]
        )
        .await,
        200
    );
    assert_eq!(
        status(addr, "/mcp", &["Host: other.example.com"]).await,
        403
    );
    server.close().await.unwrap();
}

#[tokio::test]
async fn the_bearer_scheme_is_case_insensitive() {
    let probe = CancelProbe::default();
    let server = serve_mcp(
        ServeOptions::new(fixture_agent(&probe))
            .http(HttpOptions::new().port(0))
            .auth(Auth::bearer("t0ken")),
    )
    .await
    .unwrap();
    let addr = server.local_addr().unwrap();
    let host = format!("Host: {addr}");
    let mut got = Vec::new();
    for auth in [
        "Authorization: Bearer t0ken",
        "Authorization: bearer t0ken",
        "Authorization: BEARER t0ken",
        "Authorization: bearer wrong",
        "Authorization: Basic t0ken",
    ] {
        got.push(status(addr, "/mcp", &[&host, auth]).await);
    }
    assert_eq!(got, [200, 200, 200, 401, 401]);
    server.close().await.unwrap();
}

#[tokio::test]
async fn an_empty_bearer_token_is_refused_at_start() {
    let probe = CancelProbe::default();
    for token in ["", "  "] {
        let err = serve_mcp(
            ServeOptions::new(fixture_agent(&probe))
                .http(HttpOptions::new().port(0))
                .auth(Auth::bearer(token)),
        )
        .await
        .unwrap_err();
        assert!(matches!(err, ServeError::EmptyBearerToken), "{err}");
        assert!(err.to_string().contains("empty"), "{err}");
    }
}

#[tokio::test]
async fn unusable_oauth_settings_are_refused_at_start() {
    use lousho::mcp::{OAuthResource, OAuthResourceError};
    let probe = CancelProbe::default();
    let cases = [
        // Tokens from a plain-http issuer on the network could be forged.
        OAuthResource::new("http://idp.example.com", "https://a.example.com/mcp"),
        OAuthResource::new("https://idp.example.com", "a.example.com/mcp"),
        OAuthResource::new("https://idp.example.com", "https://a.example.com/mcp")
            .scope("two words"),
        OAuthResource::new("https://idp.example.com", "https://a.example.com/mcp")
            .tool_scope("[", "x"),
    ];
    for resource in cases {
        let err = serve_mcp(
            ServeOptions::new(fixture_agent(&probe))
                .http(HttpOptions::new().port(0))
                .auth(Auth::oauth(resource.clone())),
        )
        .await
        .unwrap_err();
        assert!(
            matches!(
                err,
                ServeError::OAuth(
                    OAuthResourceError::InvalidUrl { .. }
                        | OAuthResourceError::InvalidScope(_)
                        | OAuthResourceError::InvalidToolPattern { .. }
                )
            ),
            "{resource:?}: {err}"
        );
    }
}
