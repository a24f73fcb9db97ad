//! The two questions about a session's protocol era, each answered in one
//! place for client and server, with rmcp's own [`ProtocolVersion`] helpers
//! (no list of versions of ours).

use rmcp::model::ProtocolVersion;

/// Whether a session of `version` was opened with the `initialize` handshake
/// (2025-11-25 and before): it has a session, and the server may send its
/// own requests (elicitation, sampling) and `list_changed` notifications.
// The server asks only `carries_request_meta`.
#[cfg_attr(not(feature = "mcp-client"), allow(dead_code))]
pub(crate) fn uses_handshake(version: &ProtocolVersion) -> bool {
    version.has_initialize()
}

/// Whether each request of a session of `version` carries the protocol
/// metadata in its `_meta` (2026-07-28 on, SEP-2567): no handshake, the
/// server asks through input-required results, list changes arrive on a
/// `subscriptions/listen` stream.
pub(crate) fn carries_request_meta(version: &ProtocolVersion) -> bool {
    version >= &ProtocolVersion::NO_INITIALIZE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_version_is_of_exactly_one_era() {
        for version in ProtocolVersion::KNOWN_VERSIONS {
            assert_ne!(
                uses_handshake(version),
                carries_request_meta(version),
                "{version}"
            );
        }
        assert!(uses_handshake(&ProtocolVersion::LATEST_WITH_INITIALIZE));
        assert!(carries_request_meta(&ProtocolVersion::LATEST));
    }
}
