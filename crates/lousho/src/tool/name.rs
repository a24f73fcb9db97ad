//! Tool names: the providers' rule and the one sanitiser that meets it.
//!
//! Every name lousho makes (MCP tools' `<server>__<tool>`, the agent tool of
//! `serve_mcp`) goes through [`sanitize_tool_name`]: each character outside
//! `[a-zA-Z0-9_-]` becomes `_`, and a name longer than 64 characters is cut
//! and gets a short stable hash of the whole name, so two long names that
//! share a prefix stay apart.

/// The longest tool name model providers accept.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// Length of the hash suffix (`_` + 8 hex digits) added to a name that was cut.
const HASH_SUFFIX_LEN: usize = 9;

/// True when `name` matches the providers' rule `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_TOOL_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A valid tool name for `name`: each character outside `[a-zA-Z0-9_-]`
/// becomes `_` (an empty name becomes `_`); over 64 characters it is cut and
/// gets `_` and 8 hex digits of a stable hash of the whole name.
///
/// ```
/// use lousho::tool::{is_valid_tool_name, sanitize_tool_name};
/// assert_eq!(sanitize_tool_name("support bot v2.1"), "support_bot_v2_1");
/// let long = sanitize_tool_name(&"x".repeat(100));
/// assert_eq!(long.len(), 64);
/// assert!(is_valid_tool_name(&long));
/// ```
pub fn sanitize_tool_name(name: &str) -> String {
    cap(normalize(name))
}

/// Each character outside `[a-zA-Z0-9_-]` becomes `_`; empty becomes `_`.
/// No length cap: for one segment of a longer name.
pub(crate) fn normalize(name: &str) -> String {
    if name.is_empty() {
        return "_".to_owned();
    }
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Cuts a normalised (ASCII) name to the limit, with the hash suffix.
pub(crate) fn cap(name: String) -> String {
    if name.len() <= MAX_TOOL_NAME_LEN {
        return name;
    }
    let keep = MAX_TOOL_NAME_LEN - HASH_SUFFIX_LEN;
    let hash = fnv1a32(name.as_bytes());
    // Normalised names are ASCII, so every index is a char boundary.
    let kept = name.get(..keep).unwrap_or_default();
    format!("{kept}_{hash:08x}")
}

/// A tool-name pattern that is not a valid glob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InvalidGlob {
    /// The pattern.
    pub(crate) pattern: String,
    /// What is wrong with it.
    pub(crate) message: String,
}

/// The one glob dialect for tool names (permission rules and MCP servers'
/// `tools.allow` / `tools.deny`): `*` any run of characters, `?` one
/// character, `[abc]` a class, `{a,b}` alternatives; case-sensitive.
pub(crate) fn compile_name_globs<'a>(
    patterns: impl IntoIterator<Item = &'a str>,
) -> Result<globset::GlobSet, InvalidGlob> {
    let mut builder = globset::GlobSetBuilder::new();
    for pattern in patterns {
        let glob = globset::Glob::new(pattern).map_err(|e| InvalidGlob {
            pattern: pattern.to_owned(),
            message: e.kind().to_string(),
        })?;
        builder.add(glob);
    }
    builder.build().map_err(|e| InvalidGlob {
        pattern: e.glob().unwrap_or_default().to_owned(),
        message: e.kind().to_string(),
    })
}

/// FNV-1a (32 bit): small, stable across versions and platforms.
fn fnv1a32(bytes: &[u8]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for b in bytes {
        hash ^= u32::from(*b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_the_provider_rule() {
        assert!(is_valid_tool_name("docs__search"));
        assert!(is_valid_tool_name("a-b_C9"));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name("has space"));
        assert!(!is_valid_tool_name("fetch:url"));
        assert!(!is_valid_tool_name(&"x".repeat(65)));
        assert!(is_valid_tool_name(&"x".repeat(64)));
    }

    #[test]
    fn sanitising_replaces_characters_and_cuts_with_a_stable_hash() {
        assert_eq!(sanitize_tool_name("fetch:url"), "fetch_url");
        assert_eq!(sanitize_tool_name("é/x"), "__x");
        assert_eq!(sanitize_tool_name(""), "_");
        assert_eq!(sanitize_tool_name(&"x".repeat(64)), "x".repeat(64));
        let long = "t".repeat(80);
        let a = sanitize_tool_name(&long);
        assert_eq!(a.len(), MAX_TOOL_NAME_LEN);
        assert!(is_valid_tool_name(&a));
        assert_eq!(a, sanitize_tool_name(&long), "stable");
        let b = sanitize_tool_name(&format!("{long}x"));
        assert_ne!(a, b, "names sharing the kept prefix stay apart");
        assert_eq!(a[..55], b[..55]);
    }
}
