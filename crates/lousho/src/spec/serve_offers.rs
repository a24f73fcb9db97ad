//! The `serve:` keys for what `lousho mcp` offers besides tools:
//! `resources` (the workspace's files, session transcripts), `prompts`
//! (message templates with arguments), and the `title` and `icons` clients
//! show. Read as written ([`PromptFile`]), checked and resolved
//! ([`ServedPrompt`], [`ServedResources`]).

use super::locate::At;
use super::{SpecError, SpecErrorKind};
use crate::tool::Icon;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;

/// `serve.prompts.<name>` as written.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct PromptFile {
    /// A display title.
    pub title: Option<String>,
    /// What the prompt is for (clients show it in their prompt pickers).
    pub description: Option<String>,
    /// Icons clients may show next to it.
    #[serde(default)]
    pub icons: Vec<Icon>,
    /// The arguments a client fills in, in order.
    #[serde(default)]
    pub arguments: Vec<PromptArgumentFile>,
    /// Start with the agent's own prompt (this file's `prompt`) as a user message.
    #[serde(default)]
    pub agent_prompt: bool,
    /// One user message, a template: `{{name}}` is the argument `name` (an optional argument not given: empty).
    pub text: Option<String>,
    /// Messages, each `{ role: user | assistant, text }`, templates like `text` (after it).
    #[serde(default)]
    pub messages: Vec<PromptMessageFile>,
}

/// One argument of a served prompt.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct PromptArgumentFile {
    /// Its name, as `{{name}}` in the templates.
    pub name: String,
    /// What to fill in.
    pub description: Option<String>,
    /// Whether a client must give it (default false).
    #[serde(default)]
    pub required: bool,
    /// Values clients suggest while their user types it (`completion/complete`).
    #[serde(default)]
    pub values: Vec<String>,
}

/// One message of a served prompt.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct PromptMessageFile {
    /// Who it is from: `user` (default) or `assistant`.
    #[serde(default)]
    pub role: PromptMessageRole,
    /// The text, a template (`{{name}}` is the argument `name`).
    pub text: String,
}

/// Who a served prompt's message is from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum PromptMessageRole {
    /// The user.
    #[default]
    User,
    /// The assistant (the model).
    Assistant,
}

/// One entry of `serve.resources`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServedResources {
    /// `workspace`: every file of the workspace (as the file tools see it).
    Workspace,
    /// A glob relative to the workspace (`docs/**/*.md`; `*` does not cross `/`).
    Glob(String),
    /// `sessions`: the transcripts of the session store's conversations.
    Sessions,
}

/// A prompt of `serve.prompts`, checked: every `{{name}}` names an argument.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServedPrompt {
    /// Its name (the key under `serve.prompts`).
    pub name: String,
    /// A display title.
    pub title: Option<String>,
    /// What it is for.
    pub description: Option<String>,
    /// Icons clients may show.
    pub icons: Vec<Icon>,
    /// Its arguments, in order.
    pub arguments: Vec<ServedPromptArgument>,
    /// Its messages: templates, the agent's prompt (with `agentPrompt`) first.
    pub messages: Vec<ServedPromptMessage>,
}

/// An argument of a [`ServedPrompt`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServedPromptArgument {
    /// Its name.
    pub name: String,
    /// What to fill in.
    pub description: Option<String>,
    /// Whether a client must give it.
    pub required: bool,
    /// Values suggested while a user types it.
    pub values: Vec<String>,
}

/// A message of a [`ServedPrompt`]: who from, and its text template.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServedPromptMessage {
    /// Who it is from.
    pub role: PromptMessageRole,
    /// The text; `{{name}}` is the argument `name`.
    pub template: String,
}

impl ServedPrompt {
    /// The messages with the arguments filled in (an argument not given is
    /// empty).
    pub fn render(&self, arguments: &BTreeMap<String, String>) -> Vec<(PromptMessageRole, String)> {
        self.messages
            .iter()
            .map(|m| (m.role, fill(&m.template, arguments)))
            .collect()
    }
}

/// `template` with each `{{name}}` (spaces inside allowed) replaced by the
/// argument `name`; placeholders naming no argument given stay empty.
fn fill(template: &str, arguments: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some((before, name, after)) = next_placeholder(rest) {
        out.push_str(before);
        out.push_str(arguments.get(name).map_or("", String::as_str));
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The text before the first `{{name}}` of `s`, the name, and the rest.
fn next_placeholder(s: &str) -> Option<(&str, &str, &str)> {
    let open = s.find("{{")?;
    let close = s[open + 2..].find("}}")? + open + 2;
    Some((&s[..open], s[open + 2..close].trim(), &s[close + 2..]))
}

/// The names the `{{…}}` placeholders of `template` use.
fn placeholders(template: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some((_, name, after)) = next_placeholder(rest) {
        out.push(name);
        rest = after;
    }
    out
}

/// `serve.resources`: `workspace`, `sessions` or globs; a glob that does not
/// compile is an error naming it.
pub(super) fn resources(
    entries: Vec<String>,
    at: &At<'_>,
) -> Result<Vec<ServedResources>, SpecError> {
    entries
        .into_iter()
        .enumerate()
        .map(|(i, entry)| match entry.as_str() {
            "workspace" => Ok(ServedResources::Workspace),
            "sessions" => Ok(ServedResources::Sessions),
            _ => {
                check_glob(&entry).map_err(|why| {
                    at.key(
                        SpecErrorKind::Invalid(why),
                        &format!("serve.resources[{i}]"),
                    )
                })?;
                Ok(ServedResources::Glob(entry))
            }
        })
        .collect()
}

#[cfg(feature = "builtin")]
fn check_glob(glob: &str) -> Result<(), String> {
    crate::builtin::fs::files::FileGlobs::new(&[glob.to_owned()])
        .map(drop)
        .map_err(|e| format!("`{glob}` is not a glob: {e}"))
}

#[cfg(not(feature = "builtin"))]
fn check_glob(_glob: &str) -> Result<(), String> {
    Ok(())
}

/// `serve.prompts`, checked: a prompt has messages, its arguments have
/// names (once each), its templates name only its arguments, and
/// `agentPrompt` needs the file's `prompt`.
pub(super) fn prompts(
    entries: BTreeMap<String, PromptFile>,
    agent_prompt: Option<&str>,
    at: &At<'_>,
) -> Result<Vec<ServedPrompt>, SpecError> {
    entries
        .into_iter()
        .map(|(name, p)| prompt(name, p, agent_prompt, at))
        .collect()
}

fn prompt(
    name: String,
    p: PromptFile,
    agent_prompt: Option<&str>,
    at: &At<'_>,
) -> Result<ServedPrompt, SpecError> {
    let key = format!("serve.prompts.{name}");
    let invalid =
        |why: String, sub: &str| at.key(SpecErrorKind::Invalid(why), &format!("{key}{sub}"));
    let mut arguments: Vec<ServedPromptArgument> = Vec::with_capacity(p.arguments.len());
    for (i, a) in p.arguments.into_iter().enumerate() {
        let sub = format!(".arguments[{i}]");
        if a.name.trim().is_empty() {
            return Err(invalid("an argument needs a name".to_owned(), &sub));
        }
        if arguments.iter().any(|b| b.name == a.name) {
            return Err(invalid(
                format!("the argument `{}` is given twice", a.name),
                &sub,
            ));
        }
        arguments.push(ServedPromptArgument {
            name: a.name,
            description: a.description,
            required: a.required,
            values: a.values,
        });
    }
    let mut messages = Vec::new();
    if p.agent_prompt {
        let Some(text) = agent_prompt else {
            return Err(invalid(
                "agentPrompt: true needs the agent's `prompt`; write one, or drop agentPrompt"
                    .to_owned(),
                ".agentPrompt",
            ));
        };
        messages.push(ServedPromptMessage {
            role: PromptMessageRole::User,
            template: text.to_owned(),
        });
    }
    let mut written = Vec::new();
    if let Some(text) = p.text {
        written.push((".text".to_owned(), PromptMessageRole::User, text));
    }
    for (i, m) in p.messages.into_iter().enumerate() {
        written.push((format!(".messages[{i}].text"), m.role, m.text));
    }
    for (sub, role, template) in written {
        if let Some(unknown) = placeholders(&template)
            .into_iter()
            .find(|n| !arguments.iter().any(|a| a.name == *n))
        {
            let known: Vec<&str> = arguments.iter().map(|a| a.name.as_str()).collect();
            return Err(invalid(
                format!(
                    "`{{{{{unknown}}}}}` names no argument of the prompt; its arguments are: {}",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
                &sub,
            ));
        }
        messages.push(ServedPromptMessage { role, template });
    }
    if messages.is_empty() {
        return Err(invalid(
            "a prompt needs `text`, `messages` or `agentPrompt: true`".to_owned(),
            "",
        ));
    }
    Ok(ServedPrompt {
        name,
        title: p.title,
        description: p.description,
        icons: p.icons,
        arguments,
        messages,
    })
}

#[cfg(feature = "mcp-server")]
mod serving {
    use super::{PromptMessageRole, ServedPrompt, ServedResources};
    use crate::ServeOptions;
    use crate::mcp::server::prompts::{
        DefinedPrompt, PromptError, PromptHandler, PromptMessage, PromptRole,
    };
    use crate::spec::{AgentSpec, SpecError, SpecErrorKind};
    use serde_json::Value;
    use std::collections::BTreeMap;
    use std::sync::Arc;

    impl ServedPrompt {
        /// The prompt as `serve_mcp` serves it: its arguments listed, the
        /// required ones checked, the templates filled in, and its
        /// arguments' `values` offered as completions.
        pub fn to_defined_prompt(&self) -> DefinedPrompt {
            let this = Arc::new(self.clone());
            let handler: PromptHandler = {
                let this = this.clone();
                Arc::new(move |args, _ctx| {
                    let this = this.clone();
                    Box::pin(async move { this.messages_for(args) })
                })
            };
            let description = self
                .description
                .clone()
                .unwrap_or_else(|| format!("The prompt `{}`", self.name));
            let mut prompt = DefinedPrompt::from_parts(
                self.name.clone(),
                description,
                self.arguments
                    .iter()
                    .map(|a| (a.name.clone(), a.description.clone(), a.required)),
                handler,
            );
            if let Some(title) = &self.title {
                prompt = prompt.title(title.clone());
            }
            for icon in &self.icons {
                prompt = prompt.icon(icon.clone());
            }
            if self.arguments.iter().any(|a| !a.values.is_empty()) {
                prompt = prompt.complete(move |r| {
                    let values = this
                        .arguments
                        .iter()
                        .find(|a| a.name == r.argument)
                        .map(|a| a.values.clone())
                        .unwrap_or_default();
                    async move {
                        values
                            .into_iter()
                            .filter(|v| v.starts_with(&r.value))
                            .collect()
                    }
                });
            }
            prompt
        }

        /// The messages for the arguments a client sent (strings by name):
        /// a missing required one, an unknown one or a value that is not a
        /// string is the client's error.
        fn messages_for(
            &self,
            args: serde_json::Map<String, Value>,
        ) -> Result<Vec<PromptMessage>, PromptError> {
            let invalid = |message: String| PromptError::InvalidArguments {
                prompt: self.name.clone(),
                message,
            };
            let mut given = BTreeMap::new();
            for (name, value) in args {
                if !self.arguments.iter().any(|a| a.name == name) {
                    return Err(invalid(format!("it has no argument `{name}`")));
                }
                let Value::String(text) = value else {
                    return Err(invalid(format!("`{name}` must be a string")));
                };
                given.insert(name, text);
            }
            if let Some(missing) = self
                .arguments
                .iter()
                .find(|a| a.required && !given.contains_key(&a.name))
            {
                return Err(invalid(format!("`{}` is required", missing.name)));
            }
            Ok(self
                .render(&given)
                .into_iter()
                .map(|(role, text)| match role {
                    PromptMessageRole::Assistant => PromptMessage::assistant(text),
                    _ => PromptMessage::new(PromptRole::User, crate::tool::Content::text(text)),
                })
                .collect())
        }
    }

    impl AgentSpec {
        /// `options` with what the `serve:` section offers besides tools:
        /// the workspace's files (`serve.resources`: `workspace` or globs),
        /// the prompts (`serve.prompts`), the title and icons. The session
        /// transcripts (`sessions`) need a store: the caller adds them with
        /// [`ServeOptions::session_transcripts`].
        pub fn serve_offers(&self, mut options: ServeOptions) -> Result<ServeOptions, SpecError> {
            let serve = &self.serve;
            if let Some(title) = &serve.title {
                options = options.title(title.clone());
            }
            for icon in &serve.icons {
                options = options.icon(icon.clone());
            }
            for prompt in &serve.prompts {
                options = options.prompt(prompt.to_defined_prompt());
            }
            let globs: Vec<&str> = serve
                .resources
                .iter()
                .filter_map(|r| match r {
                    ServedResources::Glob(g) => Some(g.as_str()),
                    _ => None,
                })
                .collect();
            let all = serve.resources.contains(&ServedResources::Workspace);
            if all || !globs.is_empty() {
                options = self.with_files(options, all, &globs)?;
            }
            Ok(options)
        }

        #[cfg(feature = "builtin")]
        fn with_files(
            &self,
            options: ServeOptions,
            all: bool,
            globs: &[&str],
        ) -> Result<ServeOptions, SpecError> {
            use crate::builtin::Workspace;
            use crate::mcp::WorkspaceFiles;
            let invalid = |e: crate::builtin::FsToolError, key: &str| {
                SpecError::new(&self.path, SpecErrorKind::Invalid(e.to_string()))
                    .key(key.to_owned())
            };
            let ws = Workspace::new(&self.workspace).map_err(|e| {
                SpecError::new(&self.path, SpecErrorKind::Invalid(e.to_string()))
                    .key("workspace")
                    .source(e)
            })?;
            let files = if all {
                WorkspaceFiles::all(&ws)
            } else {
                WorkspaceFiles::matching(&ws, globs).map_err(|e| invalid(e, "serve.resources"))?
            };
            Ok(options.files(files))
        }

        #[cfg(not(feature = "builtin"))]
        fn with_files(
            &self,
            _options: ServeOptions,
            _all: bool,
            _globs: &[&str],
        ) -> Result<ServeOptions, SpecError> {
            Err(SpecError::new(
                &self.path,
                SpecErrorKind::Invalid(
                    "serve.resources: serving workspace files needs lousho's `builtin` feature"
                        .to_owned(),
                ),
            )
            .key("serve.resources"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_and_found() {
        let args = BTreeMap::from([("path".to_owned(), "src/main.rs".to_owned())]);
        assert_eq!(
            fill("Review {{path}} for {{ focus }}.", &args),
            "Review src/main.rs for ."
        );
        assert_eq!(placeholders("a {{x}} b {{ y }} {{z"), ["x", "y"]);
        assert_eq!(fill("no {{ placeholders", &args), "no {{ placeholders");
    }
}
