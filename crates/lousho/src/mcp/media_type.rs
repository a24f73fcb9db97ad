//! The media type of a `Content-Type` header, read one way for the whole
//! crate: the essence before any `;` parameter, without surrounding blanks,
//! compared without regard to case (RFC 9110), so `Application/JSON;
//! charset=utf-8` is JSON.

use reqwest::header::{CONTENT_TYPE, HeaderMap};

/// The media types MCP's Streamable HTTP uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MediaType {
    /// `application/json`.
    Json,
    /// `text/event-stream`.
    EventStream,
}

impl MediaType {
    /// The media type of a `Content-Type` value; `None` for any other type.
    pub(crate) fn of(value: &[u8]) -> Option<Self> {
        let essence = value.split(|b| *b == b';').next()?;
        let essence = std::str::from_utf8(essence).ok()?.trim_matches([' ', '\t']);
        if essence.eq_ignore_ascii_case("application/json") {
            Some(Self::Json)
        } else if essence.eq_ignore_ascii_case("text/event-stream") {
            Some(Self::EventStream)
        } else {
            None
        }
    }

    /// The media type of `headers`' `Content-Type`, when it is one of these.
    pub(crate) fn of_headers(headers: &HeaderMap) -> Option<Self> {
        Self::of(headers.get(CONTENT_TYPE)?.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::MediaType;

    #[test]
    fn the_essence_is_compared_without_case_or_parameters() {
        assert_eq!(
            MediaType::of(b"Application/JSON; charset=utf-8"),
            Some(MediaType::Json)
        );
        assert_eq!(
            MediaType::of(b" text/event-stream"),
            Some(MediaType::EventStream)
        );
        assert_eq!(MediaType::of(b"application/json-seq"), None);
        assert_eq!(MediaType::of(b"text/event-streamx"), None);
        assert_eq!(MediaType::of(b"text/html"), None);
    }
}
