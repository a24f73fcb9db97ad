//! Servers' `instructions` in the agent's context, as MCP hosts do: each
//! server's (unless its entry says `instructions: false`), bounded, under a
//! heading naming the server, appended to the system prompt at the start of
//! each run. They come from the live server or its manifest, so a
//! cataloged server's instructions are there before it starts.

use super::connect::McpClient;
use super::error::McpError;

/// The most of one server's `instructions` that reach the model (bytes;
/// cut at a character boundary, with a note).
pub const MAX_INSTRUCTIONS_BYTES: usize = 4096;

impl McpClient {
    /// `server`'s `instructions` as last listed (live, or from its manifest):
    /// `None` when it gave none or has not been listed yet.
    pub fn server_instructions(&self, server: &str) -> Result<Option<String>, McpError> {
        let conn = self.connection(server)?;
        Ok(conn
            .offers()
            .and_then(|o| o.instructions.clone())
            .filter(|i| !i.trim().is_empty()))
    }

    /// The text the agent's system prompt gains: every server's
    /// instructions (those whose entry keeps them on), each bounded to
    /// [`MAX_INSTRUCTIONS_BYTES`].
    pub(crate) fn context_instructions(&self) -> Option<String> {
        let mut out = String::new();
        for name in self.server_names() {
            let Ok(conn) = self.connection(name) else {
                continue;
            };
            if !conn.entry().instructions {
                continue;
            }
            let Ok(Some(text)) = self.server_instructions(name) else {
                continue;
            };
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(&format!(
                "# Instructions from the MCP server `{name}`\n{}",
                bounded(text.trim())
            ));
        }
        (!out.is_empty()).then_some(out)
    }
}

/// `text` cut to [`MAX_INSTRUCTIONS_BYTES`] at a character boundary.
fn bounded(text: &str) -> String {
    if text.len() <= MAX_INSTRUCTIONS_BYTES {
        return text.to_owned();
    }
    let mut end = MAX_INSTRUCTIONS_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[… cut: the instructions are {} bytes, at most {MAX_INSTRUCTIONS_BYTES} are shown]",
        &text[..end],
        text.len()
    )
}

#[cfg(test)]
mod tests {
    use super::{MAX_INSTRUCTIONS_BYTES, bounded};

    #[test]
    fn long_instructions_are_cut_at_a_character_boundary_with_a_note() {
        assert_eq!(bounded("short"), "short");
        let long = "é".repeat(MAX_INSTRUCTIONS_BYTES);
        let cut = bounded(&long);
        let (kept, note) = cut.split_once('\n').unwrap();
        assert!(kept.len() <= MAX_INSTRUCTIONS_BYTES && kept.chars().all(|c| c == 'é'));
        assert!(note.contains(&format!("{} bytes", long.len())), "{note}");
    }
}
