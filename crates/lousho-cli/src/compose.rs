//! What the user's words become for the agent: `@server:uri` mentions
//! attach the resources they name (read through the server), and an MCP
//! prompt (`--prompt server:name key=value …` or `/server:name key=value …`
//! in the prompt) becomes the messages it gets from its server.

use crate::exit::Usage;
use crate::servers::Servers;
use lousho::mcp::McpError;
use lousho::model::Message;
use std::collections::BTreeMap;

/// A prompt of a server with its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptCall {
    /// The server.
    pub server: String,
    /// The prompt's name.
    pub name: String,
    /// Its arguments.
    pub arguments: BTreeMap<String, String>,
}

/// `text` as a user message, with the resources it mentions attached.
pub async fn message(mcp: Option<&Servers>, text: &str) -> anyhow::Result<Message> {
    let Some(mcp) = mcp else {
        return Ok(Message::user(text));
    };
    mcp.client()
        .message_with_resources(text)
        .await
        .map_err(|e| user_error(e, "attaching a resource"))
}

/// Reads `SERVER:NAME [KEY=VALUE]…` (the words of `--prompt`).
pub fn parse_prompt(words: &[String]) -> Result<PromptCall, Usage> {
    let usage = |why: String| {
        Usage(format!(
            "--prompt: {why} (the form is `--prompt SERVER:NAME KEY=VALUE …`)"
        ))
    };
    let Some((first, rest)) = words.split_first() else {
        return Err(usage("no prompt named".into()));
    };
    let Some((server, name)) = first
        .split_once(':')
        .filter(|(s, n)| !s.is_empty() && !n.is_empty())
    else {
        return Err(usage(format!("`{first}` is not SERVER:NAME")));
    };
    let mut arguments = BTreeMap::new();
    for word in rest {
        let Some((key, value)) = word.split_once('=') else {
            return Err(usage(format!("`{word}` is not KEY=VALUE")));
        };
        arguments.insert(key.to_owned(), value.to_owned());
    }
    Ok(PromptCall {
        server: server.to_owned(),
        name: name.to_owned(),
        arguments,
    })
}

/// A prompt line of the interactive prompt: `/server:name key=value …`
/// (values with spaces in double quotes) when `server` is one of the
/// servers; `None` for any other line (sent as a message).
pub fn prompt_line(mcp: &Servers, line: &str) -> Option<Result<PromptCall, Usage>> {
    let rest = line.strip_prefix('/')?;
    let (server, _) = rest.split_once(':')?;
    if !mcp.client().server_names().any(|s| s == server) {
        return None;
    }
    Some(parse_prompt(&split_words(rest)))
}

/// The messages of `call`'s prompt, got from its server.
pub async fn prompt_messages(
    mcp: Option<&Servers>,
    call: &PromptCall,
) -> anyhow::Result<Vec<Message>> {
    let Some(mcp) = mcp.filter(|m| m.client().server_names().any(|s| s == call.server)) else {
        anyhow::bail!(Usage(format!(
            "--prompt {}:{}: the spec has no MCP server `{}`",
            call.server, call.name, call.server
        )));
    };
    let got = mcp
        .client()
        .get_prompt(&call.server, &call.name, call.arguments.clone())
        .await
        .map_err(|e| user_error(e, "getting the prompt"))?;
    Ok(got.messages)
}

/// Errors the user can fix by typing something else are usage errors.
fn user_error(e: McpError, doing: &str) -> anyhow::Error {
    match e {
        McpError::NotListed { .. }
        | McpError::MissingArgument { .. }
        | McpError::NotOffered { .. } => anyhow::Error::new(Usage(e.to_string())),
        other => anyhow::Error::new(other).context(format!("{doing} failed")),
    }
}

/// Words split at whitespace; double quotes keep spaces in a word (and are
/// dropped).
pub fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_words_are_server_name_and_arguments() {
        let words: Vec<String> = ["ev:args-prompt", "city=Paris", "state=Île de France"]
            .map(String::from)
            .to_vec();
        let call = parse_prompt(&words).unwrap();
        assert_eq!(
            (call.server.as_str(), call.name.as_str()),
            ("ev", "args-prompt")
        );
        assert_eq!(call.arguments["state"], "Île de France");
        assert!(parse_prompt(&["ev".into()]).is_err());
        assert!(parse_prompt(&["ev:p".into(), "city".into()]).is_err());
        assert_eq!(
            split_words(r#"ev:p city="New York" state=NY "#),
            ["ev:p", "city=New York", "state=NY"]
        );
    }
}
