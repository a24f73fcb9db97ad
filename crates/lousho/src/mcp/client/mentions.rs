//! Resources attached to a user's message: `@server:uri` mentions (as MCP
//! hosts offer them), read through the server and added to the message as
//! parts after its text — the run's input carries them, the model needs no
//! tool call to see them.
//!
//! ```no_run
//! # async fn demo(mcp: lousho::mcp::McpClient, agent: lousho::Agent) -> Result<(), Box<dyn std::error::Error>> {
//! let message = mcp
//!     .message_with_resources("Summarise @docs:file:///guide.md please")
//!     .await?;
//! let reply = agent.send(message).await?;
//! # Ok(()) }
//! ```

use super::connect::McpClient;
use super::error::McpError;
use crate::model::{Message, Part, Role};
use std::ops::Range;

/// One `@server:uri` in a message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceMention {
    /// The server's name.
    pub server: String,
    /// The resource's URI.
    pub uri: String,
    /// Where the mention is in the text (bytes, the `@` included).
    pub range: Range<usize>,
}

/// The `@server:uri` mentions in `text` whose server `is_server` knows: a
/// mention starts a word (`@` at the start or after whitespace) and runs to
/// the next whitespace; a sentence's closing punctuation (`.,;:!?)`) after
/// it is not part of the URI. Other `@` words are left alone.
pub fn resource_mentions(text: &str, is_server: impl Fn(&str) -> bool) -> Vec<ResourceMention> {
    let mut found = Vec::new();
    let mut start = 0;
    for word in text.split_inclusive(char::is_whitespace) {
        let at = start;
        start += word.len();
        let word = word.trim_end();
        let Some(rest) = word.strip_prefix('@') else {
            continue;
        };
        let Some((server, uri)) = rest.split_once(':') else {
            continue;
        };
        let uri = uri.trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
        if server.is_empty() || uri.is_empty() || !is_server(server) {
            continue;
        }
        let len = 1 + server.len() + 1 + uri.len();
        found.push(ResourceMention {
            server: server.to_owned(),
            uri: uri.to_owned(),
            range: at..at + len,
        });
    }
    found
}

impl McpClient {
    /// `text` as a user message with the resources it mentions attached:
    /// its text as written, then each `@server:uri` resource of one of this
    /// client's servers, read (connecting the server if needed) and turned
    /// into parts ([`resource_parts`](super::resource_parts): text, images,
    /// other blobs described). A mention read twice is attached once. A
    /// read that fails is the error (nothing is sent).
    pub async fn message_with_resources(&self, text: &str) -> Result<Message, McpError> {
        let mentions = resource_mentions(text, |s| self.server_names().any(|n| n == s));
        let mut message = Message::user(text);
        let mut seen = Vec::new();
        for m in mentions {
            if seen.contains(&(m.server.clone(), m.uri.clone())) {
                continue;
            }
            message
                .parts
                .extend(self.resource_message_parts(&m.server, &m.uri).await?);
            seen.push((m.server, m.uri));
        }
        Ok(message)
    }

    /// Adds the resource `uri` of `server` to `message` (a user message
    /// of the run's input) as parts after what it holds.
    pub async fn attach_resource(
        &self,
        message: &mut Message,
        server: &str,
        uri: &str,
    ) -> Result<(), McpError> {
        debug_assert_eq!(message.role, Role::User, "resources go in user messages");
        let parts: Vec<Part> = self.resource_message_parts(server, uri).await?;
        message.parts.extend(parts);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::resource_mentions;

    #[test]
    fn mentions_of_known_servers_are_found_with_their_place() {
        let text = "Read @ev:demo://resource/static/document/a.md, then @other:x and mail me@ev:y (@ev:z).";
        let found = resource_mentions(text, |s| s == "ev");
        let uris: Vec<&str> = found.iter().map(|m| m.uri.as_str()).collect();
        assert_eq!(uris, ["demo://resource/static/document/a.md"]);
        assert_eq!(
            &text[found[0].range.clone()],
            "@ev:demo://resource/static/document/a.md"
        );
        // `(@ev:z)`: not at a word start, left alone.
        let found = resource_mentions("@ev:file:///a b\n@ev:c?", |s| s == "ev");
        let uris: Vec<&str> = found.iter().map(|m| m.uri.as_str()).collect();
        assert_eq!(uris, ["file:///a", "c"]);
        assert!(resource_mentions("@ev: @ev @:x", |_| true).is_empty());
    }
}
