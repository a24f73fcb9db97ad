//! Finding the line of a key or an offset in a spec file's text, for errors
//! that serde reports without a position.

/// The line (from 1) of byte `offset`.
pub(crate) fn line_of_offset(text: &str, offset: usize) -> usize {
    text.get(..offset).map_or(0, |t| t.matches('\n').count()) + 1
}

/// The line of the key at `path` (`mcpServers.files.command`, `tools[2]`):
/// each segment is looked for as a `key:` after the previous one's line.
/// Good for block-style YAML; `None` when not found.
pub(crate) fn line_of_key(text: &str, path: &str) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let mut from = 0;
    let mut found = None;
    for segment in path.split('.') {
        let name = segment.split('[').next().unwrap_or_default();
        if name.is_empty() {
            continue;
        }
        let hit = lines.iter().enumerate().skip(from).find(|(_, l)| {
            let t = l.trim_start().trim_start_matches("- ");
            let t = t.trim_start_matches(['"', '\'']);
            t.strip_prefix(name).is_some_and(|r| {
                r.trim_start_matches(['"', '\''])
                    .trim_start()
                    .starts_with(':')
            })
        });
        match hit {
            Some((i, _)) => {
                found = Some(i + 1);
                from = i + 1;
            }
            None => break,
        }
    }
    found
}

/// Where an error in the file is: the file and its text (for line numbers).
pub(super) struct At<'a> {
    pub(super) path: &'a std::path::Path,
    pub(super) text: &'a str,
}

impl At<'_> {
    /// `kind` at `key` (and the key's line).
    pub(super) fn key(&self, kind: super::SpecErrorKind, key: &str) -> super::SpecError {
        super::SpecError::new(self.path, kind)
            .at(line_of_key(self.text, key), None)
            .key(key.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_keys_in_order() {
        let text = "model: test\nmcpServers:\n  files:\n    command: x\n  docs:\n    command: y\n";
        assert_eq!(line_of_key(text, "mcpServers.docs.command"), Some(6));
        assert_eq!(line_of_key(text, "mcpServers.files"), Some(3));
        assert_eq!(line_of_key(text, "model"), Some(1));
        assert_eq!(line_of_key(text, "serve"), None);
        assert_eq!(line_of_offset(text, 13), 2);
    }
}
