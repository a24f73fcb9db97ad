//! The one SHA-256 digest in hex, for tool fingerprints, server identities,
//! token-store keys and the counters of per-caller limits (secrets are only
//! ever stored as such digests).

use sha2::{Digest, Sha256};
use std::fmt::Write as _;

/// SHA-256 of `bytes` as 64 lower-case hex digits.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in digest {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_digest() {
        assert_eq!(
            super::sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
