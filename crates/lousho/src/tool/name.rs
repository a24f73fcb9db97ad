/// The longest tool name model providers accept.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// True when `name` matches the providers' rule `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_TOOL_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
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
}
