//! MCP client errors carry facts: an HTTP status only when the server sent
//! one (read from typed errors, never from the words), the OS error as a
//! real source, and the directory a stdio `cwd` names when it is missing.

use super::fixture::{fixture, scratch};
use lousho::mcp::{ConnectOptions, McpError};
use lousho::{McpServer, connect_mcp};
use std::error::Error as _;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

async fn connect_error(name: &str, entry: McpServer) -> McpError {
    tokio::time::timeout(
        LIMIT,
        connect_mcp([(name, entry)], ConnectOptions::default()),
    )
    .await
    .expect("bounded")
    .expect_err("the connect must fail")
}

/// A loopback HTTP server answering every request with 401 (with a bearer
/// challenge or without one); returns its `/mcp` URL.
async fn unauthorized_server(challenge: bool) -> String {
    let app = axum::Router::new().fallback(move || async move {
        let mut response = axum::response::Response::new(axum::body::Body::from("go away"));
        *response.status_mut() = axum::http::StatusCode::UNAUTHORIZED;
        if challenge {
            response.headers_mut().insert(
                "www-authenticate",
                axum::http::HeaderValue::from_static("Bearer realm=\"test\""),
            );
        }
        response
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

#[tokio::test]
async fn numbers_in_a_url_whose_connect_fails_are_no_status() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    // Nothing listens there: the words carry `443` and `500`, no status was sent.
    let url = format!("http://127.0.0.1:{port}/443/500/mcp");
    let err = connect_error("down", McpServer::http(url)).await;
    let McpError::Http { status, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(*status, None, "{err}");
    assert!(err.to_string().contains("443"), "{err}");
    // The cause in words, not the transport's chain of wrappers.
    assert!(err.to_string().contains("connection refused"), "{err}");
    assert!(!err.to_string().contains("Transport ["), "{err}");
    assert!(
        err.source().is_some(),
        "the transport error is kept: {err:?}"
    );
}

#[tokio::test]
async fn a_401_from_the_server_is_status_401_with_or_without_a_challenge() {
    for challenge in [true, false] {
        let url = unauthorized_server(challenge).await;
        let err = connect_error("locked", McpServer::http(url)).await;
        let McpError::Http { status, .. } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(*status, Some(401), "challenge {challenge}: {err}");
        assert!(err.source().is_some(), "{err:?}");
        let text = err.to_string();
        assert!(
            text.contains("HTTP 401 Unauthorized")
                && text.contains("set the entry's headers.Authorization or configure oauth"),
            "what to do: {text}"
        );
    }
}

#[tokio::test]
async fn a_missing_command_keeps_the_os_error_as_its_source() {
    let err = connect_error(
        "nope",
        McpServer::stdio("/nonexistent/lousho-no-such-server"),
    )
    .await;
    let McpError::Spawn { source, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
    let via_trait = err.source().expect("a source");
    assert_eq!(via_trait.to_string(), source.to_string());
}

#[tokio::test]
async fn a_missing_working_directory_is_named_instead_of_the_command() {
    let missing = scratch("cwd").join("not-here");
    let err = connect_error("lost", fixture("serve").cwd(&missing)).await;
    let McpError::WorkingDirectory { dir, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(dir, &missing);
    let text = err.to_string();
    assert!(text.contains(&missing.display().to_string()), "{text}");
    assert!(!text.contains("check that it is installed"), "{text}");
    assert!(err.source().is_some());
}
