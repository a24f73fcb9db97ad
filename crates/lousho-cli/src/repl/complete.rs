//! Tab completion in the interactive prompt, from what the MCP servers
//! offer: `@` completes a server, then its resources' URIs (and the fixed
//! start of its resource templates, then a template's variable through
//! `completion/complete`); `/` completes `server:prompt`, then its argument
//! names (`key=`) and values (`completion/complete`, with the arguments
//! already typed as context). Listings come from the live server or its
//! manifest; a server that does not answer within a second adds nothing.

use lousho::mcp::{CompletionTarget, McpClient};
use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use std::collections::BTreeMap;
use std::time::Duration;

/// How long one completion may wait for a server.
const WAIT: Duration = Duration::from_secs(1);

/// The prompt's helper: completion from the servers of `mcp`.
pub struct Helper {
    mcp: Option<McpClient>,
    runtime: tokio::runtime::Handle,
}

impl Helper {
    /// Completes from `mcp`'s servers, asking them on `runtime` (the line
    /// editor runs on a blocking thread).
    pub fn new(mcp: Option<McpClient>, runtime: tokio::runtime::Handle) -> Self {
        Self { mcp, runtime }
    }
}

impl Completer for Helper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let Some(mcp) = &self.mcp else {
            return Ok((pos, Vec::new()));
        };
        let found = self.runtime.block_on(async {
            tokio::time::timeout(WAIT * 3, candidates(mcp, line, pos))
                .await
                .unwrap_or_default()
        });
        let (start, words) = found.unwrap_or((pos, Vec::new()));
        let pairs = words
            .into_iter()
            .map(|w| Pair {
                display: w.clone(),
                replacement: w,
            })
            .collect();
        Ok((start, pairs))
    }
}

impl Hinter for Helper {
    type Hint = String;
}
impl Highlighter for Helper {}
impl Validator for Helper {}
impl rustyline::Helper for Helper {}

/// `f` within [`WAIT`], or `None`.
async fn within<T, E>(f: impl Future<Output = Result<T, E>>) -> Option<T> {
    tokio::time::timeout(WAIT, f).await.ok()?.ok()
}

/// Where the word being completed starts (bytes) and what may replace it,
/// for the cursor at `pos` of `line`. `None`: nothing to offer.
pub async fn candidates(mcp: &McpClient, line: &str, pos: usize) -> Option<(usize, Vec<String>)> {
    let before = line.get(..pos)?;
    let start = before.rfind(char::is_whitespace).map_or(0, |i| {
        i + before[i..].chars().next().map_or(1, char::len_utf8)
    });
    let word = &before[start..];
    let words = if let Some(rest) = word.strip_prefix('@') {
        mention(mcp, rest).await
    } else if start == 0 && word.starts_with('/') {
        prompt_names(mcp, &word[1..]).await
    } else if let Some(first) = before
        .strip_prefix('/')
        .and_then(|b| b.split_whitespace().next())
    {
        prompt_argument(mcp, first, &before[..start], word).await
    } else {
        Vec::new()
    };
    Some((start, words))
}

/// `@server:uri` candidates for what follows the `@`.
async fn mention(mcp: &McpClient, typed: &str) -> Vec<String> {
    let Some((server, uri)) = typed.split_once(':') else {
        return mcp
            .server_names()
            .filter(|s| s.starts_with(typed))
            .map(|s| format!("@{s}:"))
            .collect();
    };
    if !mcp.server_names().any(|s| s == server) {
        return Vec::new();
    }
    let mut out: Vec<String> = within(mcp.list_resources(server))
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.uri.starts_with(uri))
        .map(|r| format!("@{server}:{}", r.uri))
        .collect();
    for template in within(mcp.list_resource_templates(server))
        .await
        .unwrap_or_default()
    {
        let t = &template.uri_template;
        let Some(open) = t.find('{') else {
            continue;
        };
        let fixed = &t[..open];
        if fixed.starts_with(uri) && fixed != uri {
            out.push(format!("@{server}:{fixed}"));
        } else if let Some(value) = uri.strip_prefix(fixed) {
            // The first variable, completed by the server.
            let Some(close) = t[open..].find('}') else {
                continue;
            };
            let variable =
                t[open + 1..open + close].trim_start_matches(['+', '#', '/', '.', ';', '?', '&']);
            let target = CompletionTarget::ResourceTemplate(t.clone());
            let values = within(mcp.complete(server, target, variable, value, BTreeMap::new()))
                .await
                .unwrap_or_default();
            out.extend(values.into_iter().map(|v| format!("@{server}:{fixed}{v}")));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `/server:prompt` candidates for what follows the `/`.
async fn prompt_names(mcp: &McpClient, typed: &str) -> Vec<String> {
    let (server_part, name_part) = typed.split_once(':').unwrap_or((typed, ""));
    let mut out = Vec::new();
    let servers: Vec<String> = mcp.server_names().map(str::to_owned).collect();
    for server in servers {
        let exact = typed.contains(':');
        if (exact && server != server_part) || (!exact && !server.starts_with(server_part)) {
            continue;
        }
        let prompts = within(mcp.list_prompts(&server)).await.unwrap_or_default();
        out.extend(
            prompts
                .into_iter()
                .filter(|p| p.name.starts_with(name_part))
                .map(|p| format!("/{server}:{} ", p.name)),
        );
    }
    out
}

/// `key=` and `key=value` candidates for an argument of the prompt `first`
/// (`/server:name`), with the arguments typed before `word` as context.
async fn prompt_argument(mcp: &McpClient, first: &str, earlier: &str, word: &str) -> Vec<String> {
    let Some((server, name)) = first.split_once(':') else {
        return Vec::new();
    };
    if !mcp.server_names().any(|s| s == server) {
        return Vec::new();
    }
    let typed: BTreeMap<String, String> = crate::compose::split_words(earlier)
        .into_iter()
        .skip(1)
        .filter_map(|w| w.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned())))
        .collect();
    match word.split_once('=') {
        None => {
            let prompts = within(mcp.list_prompts(server)).await.unwrap_or_default();
            let Some(prompt) = prompts.into_iter().find(|p| p.name == name) else {
                return Vec::new();
            };
            prompt
                .arguments
                .into_iter()
                .filter(|a| a.name.starts_with(word) && !typed.contains_key(&a.name))
                .map(|a| format!("{}=", a.name))
                .collect()
        }
        Some((key, value)) => {
            let target = CompletionTarget::Prompt(name.to_owned());
            within(mcp.complete(server, target, key, value, typed))
                .await
                .unwrap_or_default()
                .into_iter()
                .map(|v| {
                    if v.contains(char::is_whitespace) {
                        format!("{key}=\"{v}\"")
                    } else {
                        format!("{key}={v}")
                    }
                })
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::candidates;
    use lousho::McpServer;
    use lousho::connect_mcp;
    use lousho::mcp::ConnectOptions;

    /// server-everything, when installed (`interop/install.sh`; under
    /// `CI=true` a missing peer fails).
    fn everything() -> Option<McpServer> {
        let index = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "../../interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        );
        if !index.exists() {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("server-everything is missing: run interop/install.sh");
            }
            eprintln!("SKIPPED: server-everything is not installed (interop/install.sh)");
            return None;
        }
        Some(McpServer::stdio("node").args([index.display().to_string(), "stdio".into()]))
    }

    async fn words(mcp: &lousho::mcp::McpClient, line: &str) -> (usize, Vec<String>) {
        candidates(mcp, line, line.len()).await.unwrap()
    }

    #[tokio::test]
    async fn resources_templates_prompts_and_arguments_complete_from_server_everything() {
        let Some(entry) = everything() else { return };
        let mcp = connect_mcp([("ev", entry)], ConnectOptions::default())
            .await
            .unwrap();
        assert_eq!(words(&mcp, "read @e").await, (5, vec!["@ev:".to_owned()]));
        let (start, uris) = words(&mcp, "read @ev:demo://resource/static/document/").await;
        assert_eq!(start, 5);
        assert!(
            uris.iter()
                .any(|u| u.starts_with("@ev:demo://resource/static/document/")),
            "{uris:?}"
        );
        // A template's fixed start, then its variable through completion/complete.
        let (_, fixed) = words(&mcp, "@ev:demo://resource/dynamic/te").await;
        assert_eq!(fixed, ["@ev:demo://resource/dynamic/text/"]);
        let (_, values) = words(&mcp, "@ev:demo://resource/dynamic/text/7").await;
        assert_eq!(values, ["@ev:demo://resource/dynamic/text/7"]);
        // Prompts, their argument names, then values with context.
        let (_, prompts) = words(&mcp, "/ev:args").await;
        assert_eq!(prompts, ["/ev:args-prompt "]);
        let (start, names) = words(&mcp, "/ev:args-prompt ").await;
        assert_eq!(start, 16);
        assert!(names.contains(&"city=".to_owned()), "{names:?}");
        let (_, cities) = words(&mcp, "/ev:completable-prompt department=Eng").await;
        assert_eq!(cities, ["department=Engineering"]);
        let (_, names) = words(&mcp, "/ev:completable-prompt department=Engineering n").await;
        assert_eq!(names, ["name="]);
        let (_, leads) = words(&mcp, "/ev:completable-prompt department=Engineering name=A").await;
        assert_eq!(leads, ["name=Alice"]);
        // Plain words complete nothing.
        assert!(words(&mcp, "hello wor").await.1.is_empty());
        mcp.close().await;
    }
}
