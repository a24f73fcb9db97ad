//! The operator's side of `lousho login`: hand out the authorization URL and
//! catch the browser's redirect on the redirect URI's loopback port.

use super::error::OAuthError;
use super::flow::Authorizer;
use crate::sync::MutexExt;
use async_trait::async_trait;
use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Mutex;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// How long the operator has to approve in the browser.
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

const PAGE: &str = "<!doctype html><title>lousho</title><p>Signed in. You can close this window and return to the terminal.</p>";

/// Listens on the redirect URI's port (loopback only) and returns the first
/// request that carries `code` or `error` on the redirect path.
pub(crate) struct LoopbackAuthorizer<F> {
    listener: tokio::sync::Mutex<Option<TcpListener>>,
    path: String,
    origin: String,
    on_url: Mutex<Option<F>>,
    timeout: Duration,
}

impl<F> fmt::Debug for LoopbackAuthorizer<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopbackAuthorizer")
            .field("origin", &self.origin)
            .field("path", &self.path)
            .finish()
    }
}

impl<F: FnOnce(&str) + Send> LoopbackAuthorizer<F> {
    /// Binds the redirect URI's port on 127.0.0.1 (before anyone is sent to
    /// the authorization server, so the redirect cannot be missed).
    pub(crate) async fn bind(
        redirect_uri: &str,
        on_url: F,
        timeout: Duration,
    ) -> Result<Self, OAuthError> {
        let bad = |reason: &str| OAuthError::RedirectUri {
            uri: redirect_uri.to_owned(),
            reason: reason.to_owned(),
        };
        let url = reqwest::Url::parse(redirect_uri).map_err(|_| bad("is not a URL"))?;
        if url.scheme() != "http" {
            return Err(bad(
                "must be an http:// loopback URL (http://127.0.0.1:PORT/path or http://localhost:PORT/path) for `lousho login`",
            ));
        }
        let host = url.host_str().unwrap_or_default();
        let loopback = host.eq_ignore_ascii_case("localhost")
            || host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        if !loopback {
            return Err(bad(
                "must point at this machine (127.0.0.1, [::1] or localhost) so the sign-in can catch the redirect",
            ));
        }
        let port = url
            .port()
            .ok_or_else(|| bad("needs an explicit port, e.g. http://127.0.0.1:8765/callback"))?;
        let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
            .await
            .map_err(|e| {
                bad(&format!(
                    "cannot be listened on ({e}); is another sign-in running?"
                ))
            })?;
        Ok(Self {
            listener: tokio::sync::Mutex::new(Some(listener)),
            path: url.path().to_owned(),
            origin: format!("{}://{}", url.scheme(), url.authority()),
            on_url: Mutex::new(Some(on_url)),
            timeout,
        })
    }

    async fn wait(&self, listener: &TcpListener) -> Result<String, OAuthError> {
        loop {
            let (mut stream, _) = listener
                .accept()
                .await
                .map_err(|e| OAuthError::Callback(format!("accepting the redirect failed: {e}")))?;
            let mut buf = vec![0u8; 8192];
            let mut len = 0;
            while len < buf.len() {
                let Ok(Ok(n)) =
                    tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf[len..]))
                        .await
                else {
                    break;
                };
                if n == 0 {
                    break;
                }
                len += n;
                if buf[..len].windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
            let head = String::from_utf8_lossy(&buf[..len]);
            let target = head
                .lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(1))
                .unwrap_or_default();
            let full = format!("{}{}", self.origin, target);
            let matches = reqwest::Url::parse(&full)
                .ok()
                .filter(|u| u.path() == self.path)
                .filter(|u| u.query_pairs().any(|(k, _)| k == "code" || k == "error"));
            let (status, body) = if matches.is_some() {
                ("200 OK", PAGE)
            } else {
                ("404 Not Found", "not found")
            };
            let response = format!(
                "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
            let _ = stream.shutdown().await;
            if matches.is_some() {
                return Ok(full);
            }
        }
    }
}

#[async_trait]
impl<F: FnOnce(&str) + Send> Authorizer for LoopbackAuthorizer<F> {
    async fn authorize(&self, authorization_url: &str) -> Result<String, OAuthError> {
        let mut guard = self.listener.lock().await;
        let listener = guard
            .as_mut()
            .ok_or_else(|| OAuthError::Callback("the listener is gone".into()))?;
        let on_url = self.on_url.lock_unpoisoned().take();
        if let Some(on_url) = on_url {
            on_url(authorization_url);
        }
        match tokio::time::timeout(self.timeout, self.wait(listener)).await {
            Ok(result) => result,
            Err(_) => Err(OAuthError::Timeout(self.timeout)),
        }
    }
}
