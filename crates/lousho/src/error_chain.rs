//! Walking an error's sources: the one place lousho turns a chain into words
//! and looks for a fact (a status, a challenge) along it.

use std::error::Error;

/// The error and each of its sources, outermost first.
pub(crate) fn sources<'a>(
    e: &'a (dyn Error + 'static),
) -> impl Iterator<Item = &'a (dyn Error + 'static)> {
    std::iter::successors(Some(e), |e: &&'a (dyn Error + 'static)| cause(*e))
}

/// An error's cause. Two rmcp errors hold their cause without naming it as
/// their source, which would lose the reason a server could not be reached
/// ("connection refused", a DNS failure): its HTTP client error (reqwest's
/// error inside) and its handshake error (the transport's error inside, or
/// the legacy fallback's when both protocol eras failed). Those are reached
/// by downcasting.
fn cause<'a>(e: &'a (dyn Error + 'static)) -> Option<&'a (dyn Error + 'static)> {
    #[cfg(feature = "mcp-client")]
    {
        use rmcp::service::ClientInitializeError;
        use rmcp::transport::streamable_http_client::StreamableHttpError;
        if let Some(StreamableHttpError::Client(inner)) =
            e.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            return Some(inner);
        }
        match e.downcast_ref::<ClientInitializeError>() {
            Some(ClientInitializeError::TransportError { error, .. }) => return Some(error),
            Some(ClientInitializeError::LegacyFallbackFailed { fallback, .. }) => {
                return Some(fallback.as_ref());
            }
            _ => {}
        }
    }
    // An I/O error made from another error (a TLS library's, say) gives
    // that error's source as its own, skipping the error itself.
    if let Some(inner) = e
        .downcast_ref::<std::io::Error>()
        .and_then(|io| io.get_ref())
    {
        return Some(inner);
    }
    e.source()
}

/// The error and its sources joined with `: `, leaving out a source whose
/// text the words so far already hold (many errors repeat their source).
pub(crate) fn error_chain(e: &(dyn Error + 'static)) -> String {
    let mut out = e.to_string();
    for inner in sources(e).skip(1) {
        let text = inner.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] std::io::Error);

    #[derive(Debug, thiserror::Error)]
    #[error("wrapped: {0}")]
    struct Repeats(#[source] std::io::Error);

    #[test]
    fn chains_sources_once_and_walks_them() {
        let e = Outer(std::io::Error::other("disk on fire"));
        assert_eq!(error_chain(&e), "outer: disk on fire");
        // The I/O error, and the error it was made from (its text already
        // in the words).
        assert_eq!(sources(&e).count(), 3);
        assert!(sources(&e).any(|s| s.is::<std::io::Error>()));
        let e = Repeats(std::io::Error::other("gone"));
        assert_eq!(error_chain(&e), "wrapped: gone");
    }
}
