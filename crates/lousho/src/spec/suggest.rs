//! "Did you mean …?" for misspelt keys and names.

/// The candidate closest to `word`, when it is close enough to be a likely
/// typo (case differences always count as close).
pub(crate) fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| {
            let score = if c.to_ascii_lowercase() == lower {
                1.0
            } else {
                strsim::jaro_winkler(&lower, &c.to_ascii_lowercase())
            };
            (c, score)
        })
        .filter(|(_, score)| *score >= 0.85)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(c, _)| c)
}

/// The field names of serde's "unknown field `x`, expected one of `a`, `b`"
/// message (serde's own wording, stable across its versions).
pub(crate) fn expected_fields(message: &str) -> Vec<&str> {
    let Some((_, expected)) = message.split_once("expected ") else {
        return Vec::new();
    };
    expected.split('`').skip(1).step_by(2).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_keys_only() {
        let keys = ["name", "mcpServers", "maxTurns", "model"];
        assert_eq!(did_you_mean("mcpservers", keys), Some("mcpServers"));
        assert_eq!(did_you_mean("max_turns", keys), Some("maxTurns"));
        assert_eq!(did_you_mean("modle", keys), Some("model"));
        assert_eq!(did_you_mean("zebra", keys), None);
        assert_eq!(
            expected_fields("unknown field `x`, expected one of `name`, `model`"),
            ["name", "model"]
        );
        assert_eq!(
            expected_fields("unknown field `x`, expected `name`"),
            ["name"]
        );
    }
}
