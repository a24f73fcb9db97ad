//! What can be wrong with a spec file, said so the user can fix it.

use std::fmt;
use std::path::PathBuf;

/// A spec file could not be read, parsed or turned into an agent.
///
/// Its message starts with `file:line:column:` (when known) and names the
/// key, e.g. `agent.yaml:4:1: unknown key `mcpservers`; did you mean `mcpServers`?`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub struct SpecError {
    /// The file the error is in.
    pub file: PathBuf,
    /// The line (from 1), when known.
    pub line: Option<usize>,
    /// The column (from 1), when known.
    pub column: Option<usize>,
    /// The key's path (`mcpServers.files.command`), when the error is about one.
    pub key: Option<String>,
    /// What is wrong.
    pub kind: Box<SpecErrorKind>,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

/// What is wrong with a spec file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpecErrorKind {
    /// The file could not be read.
    Read,
    /// The file is larger than the loader's limit
    /// ([`SpecLoader::max_file_bytes`](crate::spec::SpecLoader::max_file_bytes)).
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// The path names a directory, a device or a socket, not a file.
    NotAFile(String),
    /// `[…]` / `{…}` collections nest deeper than the limit.
    TooDeep {
        /// How deeply they may nest.
        limit: usize,
    },
    /// The text is not valid YAML.
    Yaml(String),
    /// A key the format does not have.
    UnknownKey {
        /// The closest known key, if one is close.
        suggestion: Option<String>,
    },
    /// A value of the wrong type or shape.
    Invalid(String),
    /// `${NAME}` names an unset variable.
    UnsetVariable(String),
    /// The model string names no known provider.
    BadModel(String),
    /// A name in `tools` is not a built-in tool.
    UnknownTool {
        /// The name.
        name: String,
        /// The closest built-in, if one is close.
        suggestion: Option<String>,
    },
    /// The file uses something this build of lousho leaves out (a cargo
    /// feature turned off).
    MissingFeature {
        /// The cargo feature (`mcp-client`, `builtin`).
        feature: &'static str,
        /// What needs it (`MCP servers`).
        needed_for: &'static str,
    },
}

impl SpecError {
    pub(crate) fn new(file: impl Into<PathBuf>, kind: SpecErrorKind) -> Self {
        Self {
            file: file.into(),
            line: None,
            column: None,
            key: None,
            kind: Box::new(kind),
            source: None,
        }
    }

    /// An error about `file` with no position (for tools built on spec files).
    pub fn from_parts(file: impl Into<PathBuf>, kind: SpecErrorKind) -> Self {
        Self::new(file, kind)
    }

    pub(crate) fn at(mut self, line: Option<usize>, column: Option<usize>) -> Self {
        self.line = line;
        self.column = column;
        self
    }

    pub(crate) fn key(mut self, key: impl Into<String>) -> Self {
        let key = key.into();
        self.key = (!key.is_empty() && key != ".").then_some(key);
        self
    }

    pub(crate) fn source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    /// Whether the file itself is at fault (as opposed to the file system).
    pub fn is_invalid_spec(&self) -> bool {
        !matches!(*self.kind, SpecErrorKind::Read | SpecErrorKind::NotAFile(_))
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        f.write_str(": ")?;
        let key = self.key.as_deref().unwrap_or("");
        match self.kind.as_ref() {
            SpecErrorKind::Read => f.write_str("cannot read the spec file"),
            SpecErrorKind::TooLarge { limit } => write!(
                f,
                "the file is larger than {limit} bytes, the limit for spec files; check that this \
                 is the spec you meant (the limit is set by LOUSHO_SPEC_MAX_BYTES or \
                 SpecLoader::max_file_bytes)"
            ),
            SpecErrorKind::NotAFile(kind) => write!(
                f,
                "cannot read the spec file: it is {kind}; pass the path of a YAML file"
            ),
            SpecErrorKind::TooDeep { limit } => write!(
                f,
                "`[…]`/`{{…}}` collections nest more than {limit} levels deep; a spec needs a \
                 few levels (check for unbalanced brackets)"
            ),
            SpecErrorKind::Yaml(message) => write!(f, "not valid YAML: {message}"),
            SpecErrorKind::UnknownKey { suggestion } => {
                write!(f, "unknown key `{key}`")?;
                match suggestion {
                    Some(s) => write!(f, "; did you mean `{s}`?"),
                    None => f.write_str("; see schemas/agent-spec.schema.json for the keys"),
                }
            }
            SpecErrorKind::Invalid(message) if key.is_empty() => f.write_str(message),
            SpecErrorKind::Invalid(message) => write!(f, "`{key}`: {message}"),
            SpecErrorKind::UnsetVariable(message) => write!(f, "`{key}`: {message}"),
            SpecErrorKind::BadModel(message) => write!(
                f,
                "`{key}`: {message} (e.g. `openai/gpt-4o-mini`, `anthropic/claude-sonnet-4-5`, `openrouter/<vendor>/<model>`, `ollama/<model>`, `test`)"
            ),
            SpecErrorKind::UnknownTool { name, suggestion } => {
                write!(f, "`{key}`: `{name}` is not a built-in tool")?;
                match suggestion {
                    Some(s) => write!(f, "; did you mean `{s}`?"),
                    None => write!(f, "; the built-ins are {}", super::BUILTIN_NAMES.join(", ")),
                }
            }
            SpecErrorKind::MissingFeature {
                feature,
                needed_for,
            } => write!(
                f,
                "`{key}`: {needed_for} need lousho's `{feature}` cargo feature, which this build leaves out; enable it in Cargo.toml (`lousho = {{ features = [\"{feature}\"] }}`; it is on by default)"
            ),
        }
    }
}
