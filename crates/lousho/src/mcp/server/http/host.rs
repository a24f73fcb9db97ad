//! Which host a request is for, checked before anything else (DNS-rebinding
//! protection): exactly one `Host` header, no user info in it, and an
//! absolute-form request target (`POST http://host/mcp`) only for an allowed
//! host — that authority, not the `Host` header, is what HTTP says the
//! request is for. rmcp checks the `Host` header too; this closes the gaps
//! its check leaves (duplicates, `evil@127.0.0.1`, absolute targets).

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The hosts a request may be for.
#[derive(Debug, Clone)]
pub(crate) struct AllowedHosts(Vec<Authority>);

/// A host with an optional port, lower-cased, IPv6 without brackets.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Authority {
    host: String,
    port: Option<u16>,
}

impl AllowedHosts {
    /// From `host` or `host:port` entries (`[::1]`, `::1` and `[::1]:3920` too).
    pub(crate) fn new<'a>(entries: impl IntoIterator<Item = &'a str>) -> Self {
        Self(
            entries
                .into_iter()
                .filter_map(|e| parse(e).or_else(|| bare(e)))
                .collect(),
        )
    }

    fn allows(&self, a: &Authority) -> bool {
        self.0
            .iter()
            .any(|ok| ok.host == a.host && ok.port.is_none_or(|p| a.port == Some(p)))
    }

    /// `Err` says why not: `400` for a malformed or ambiguous host, `403`
    /// for a host that is not allowed.
    pub(crate) fn check(&self, req: &Request) -> Result<(), Refused> {
        let mut hosts = req.headers().get_all(header::HOST).iter();
        let host = hosts.next();
        if hosts.next().is_some() {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                "Bad Request: more than one Host header",
            ));
        }
        if let Some(host) = host {
            let Some(a) = host.to_str().ok().and_then(parse) else {
                return Err(refuse(
                    StatusCode::BAD_REQUEST,
                    "Bad Request: the Host header must be host[:port]",
                ));
            };
            if !self.allows(&a) {
                tracing::warn!(host = %a.host, "refused a request for another host (possible DNS rebinding)");
                return Err(refuse(
                    StatusCode::FORBIDDEN,
                    "Forbidden: Host header is not allowed",
                ));
            }
        }
        if let Some(target) = req.uri().authority() {
            let Some(a) = parse(target.as_str()) else {
                return Err(refuse(
                    StatusCode::BAD_REQUEST,
                    "Bad Request: the request target's authority must be host[:port]",
                ));
            };
            if !self.allows(&a) {
                tracing::warn!(host = %a.host, "refused an absolute-form request for another host");
                return Err(refuse(
                    StatusCode::FORBIDDEN,
                    "Forbidden: the request target's host is not allowed",
                ));
            }
        }
        Ok(())
    }
}

/// `host[:port]` without user info; `None` when malformed.
fn parse(s: &str) -> Option<Authority> {
    if s.contains('@') || s.is_empty() {
        return None;
    }
    let a: axum::http::uri::Authority = s.parse().ok()?;
    Some(Authority {
        host: normalize(a.host()),
        port: a.port_u16(),
    })
}

/// An allowed-host entry that is not an authority (a bare IPv6 address).
fn bare(s: &str) -> Option<Authority> {
    let s = s.trim();
    (!s.is_empty() && !s.contains('@')).then(|| Authority {
        host: normalize(s),
        port: None,
    })
}

fn normalize(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

/// A request refused for its host.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Refused {
    status: StatusCode,
    message: &'static str,
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        (self.status, self.message).into_response()
    }
}

fn refuse(status: StatusCode, message: &'static str) -> Refused {
    Refused { status, message }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(target: &str, hosts: &[&str]) -> Request {
        let mut b = Request::builder().method("POST").uri(target);
        for h in hosts {
            b = b.header(header::HOST, *h);
        }
        b.body(axum::body::Body::empty()).unwrap()
    }

    fn status(r: Result<(), Refused>) -> u16 {
        r.map_or_else(|e| e.status.as_u16(), |()| 200)
    }

    #[test]
    fn hosts_are_checked_exactly() {
        let ok = AllowedHosts::new([
            "localhost",
            "127.0.0.1",
            "::1",
            "[::1]",
            "api.example.com:8443",
        ]);
        let cases = [
            ("/mcp", vec!["127.0.0.1:3920"], 200),
            ("/mcp", vec!["LOCALHOST"], 200),
            ("/mcp", vec!["[::1]:9"], 200),
            ("/mcp", vec!["api.example.com:8443"], 200),
            ("/mcp", vec!["api.example.com:443"], 403),
            ("/mcp", vec!["evil.example.com"], 403),
            ("/mcp", vec!["127.0.0.1", "127.0.0.1"], 400),
            ("/mcp", vec!["127.0.0.1", "evil.example.com"], 400),
            ("/mcp", vec!["evil@127.0.0.1"], 400),
            ("http://evil.example.com/mcp", vec!["127.0.0.1"], 403),
            ("http://127.0.0.1:3920/mcp", vec!["127.0.0.1"], 200),
            ("http://evil@127.0.0.1/mcp", vec!["127.0.0.1"], 400),
        ];
        for (target, hosts, want) in cases {
            assert_eq!(
                status(ok.check(&request(target, &hosts))),
                want,
                "{target} {hosts:?}"
            );
        }
    }
}
