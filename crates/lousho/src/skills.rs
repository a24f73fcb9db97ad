//! Agent Skills, loaded progressively: a skill is a folder holding a
//! `SKILL.md` (YAML front matter with a `name` and a `description`, then
//! instructions in Markdown) and any files those instructions use.
//!
//! Only each skill's name and description go into the system prompt; the
//! model reads a skill's `SKILL.md` (and the list of its other files) with
//! the `load_skill` tool when a task fits the description, and a file of the
//! skill with `read_skill_file`. Both tools are read-only, so the default
//! approval policy runs them without asking, and they are offered only while
//! some skill exists.
//!
//! Skills come from [`SkillSource`]s: a local folder ([`LocalSkills`],
//! `AgentBuilder::skills`, a spec file's `skills:`) and MCP servers that
//! offer the Skills extension (SEP-2640, `io.modelcontextprotocol/skills`;
//! an agent's MCP servers are a source of their own). A local skill's files
//! are read under the built-in file tools' sandbox rules: no `..`, no
//! symbolic link out of the skill's folder, no hidden paths, and a size
//! bound per file.

mod frontmatter;
mod local;
mod prompt;
mod tools;

pub use frontmatter::{SkillFrontMatterError, parse_front_matter};
#[cfg(feature = "mcp-server")]
pub(crate) use local::SKILL_MD;
#[cfg(feature = "mcp-client")]
pub(crate) use local::check_path as check_skill_path;
pub use local::{LocalSkills, SkillLoadError};
pub use tools::{LOAD_SKILL, READ_SKILL_FILE};

use crate::tool::{Tool, ToolSource, ToolSourceError};
use async_trait::async_trait;
use std::sync::Arc;

/// The most bytes a skill's `SKILL.md` or one of its files may have when
/// the model reads it (the built-in `read_file`'s bound per call).
pub const SKILL_FILE_MAX_BYTES: usize = 256 * 1024;

/// The most characters of a description that go into the system prompt
/// (the Agent Skills format's own limit).
pub const SKILL_DESCRIPTION_MAX_CHARS: usize = 1024;

/// One skill as the system prompt names it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillInfo {
    /// The name the model loads it by (an MCP server's skills are
    /// `<server>:<name>`).
    pub name: String,
    /// When to use it (the front matter's `description`).
    pub description: String,
}

impl SkillInfo {
    /// A skill named `name`, described by `description`.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
        }
    }
}

/// A skill's `SKILL.md` and the paths of its other files.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillDocument {
    /// The whole `SKILL.md`, front matter included.
    pub text: String,
    /// The skill's other files, relative to its folder, `/`-separated
    /// (what `read_skill_file` takes); empty when the source cannot list
    /// them.
    pub files: Vec<String>,
}

impl SkillDocument {
    /// A document of `text` with these files.
    pub fn new(text: impl Into<String>, files: Vec<String>) -> Self {
        Self {
            text: text.into(),
            files,
        }
    }
}

/// Why a skill or one of its files could not be read. The message is what
/// the model sees.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// No skill has this name.
    #[error("there is no skill named `{name}`; use a name from the skills the system prompt lists")]
    Unknown {
        /// The name asked for.
        name: String,
    },
    /// The path does not name a file of the skill.
    #[error("`{path}` is not a file of skill `{skill}`: {reason}")]
    Refused {
        /// The skill.
        skill: String,
        /// The path asked for.
        path: String,
        /// Why, and what would work.
        reason: String,
    },
    /// The file is larger than a skill file may be.
    #[error(
        "`{path}` of skill `{skill}` is larger than the {limit} bytes a skill file may have; \
         it cannot be read through the skill tools"
    )]
    TooLarge {
        /// The skill.
        skill: String,
        /// The file.
        path: String,
        /// The bound ([`SKILL_FILE_MAX_BYTES`]).
        limit: usize,
    },
    /// The file is not UTF-8 text.
    #[error("`{path}` of skill `{skill}` is not text ({reason}); only text files can be read")]
    Binary {
        /// The skill.
        skill: String,
        /// The file.
        path: String,
        /// What made it binary.
        reason: String,
    },
    /// Reading failed.
    #[error("cannot read `{path}` of skill `{skill}`: {reason}")]
    Failed {
        /// The skill.
        skill: String,
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },
}

/// Where skills come from: a local folder ([`LocalSkills`]), an agent's MCP
/// servers, or your own.
#[async_trait]
pub trait SkillSource: Send + Sync + 'static {
    /// The skills now: cheap, no I/O (a source lists ahead of time).
    fn skills(&self) -> Vec<SkillInfo>;

    /// The `SKILL.md` of skill `name` and the list of its other files.
    async fn load(&self, name: &str) -> Result<SkillDocument, SkillError>;

    /// The text of the file at `path` (relative to the skill's folder) of
    /// skill `name`.
    async fn read_file(&self, name: &str, path: &str) -> Result<String, SkillError>;
}

/// An agent's skills: every source, and the two tools the model reads them
/// with. A [`ToolSource`] that offers the tools only while some source has
/// a skill.
pub struct Skills {
    sources: Arc<[Arc<dyn SkillSource>]>,
    tools: Vec<Arc<dyn Tool>>,
}

impl std::fmt::Debug for Skills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Skills")
            .field("sources", &self.sources.len())
            .finish_non_exhaustive()
    }
}

impl Skills {
    /// The skills of these sources (a name two sources have is the first's).
    pub fn new(sources: Vec<Arc<dyn SkillSource>>) -> Self {
        let sources: Arc<[Arc<dyn SkillSource>]> = sources.into();
        let tools = tools::skill_tools(&sources);
        Self { sources, tools }
    }

    /// Every skill now, the first source's first; a name seen before is
    /// left out.
    pub fn list(&self) -> Vec<SkillInfo> {
        list(&self.sources)
    }

    /// The system prompt's section naming the skills, or `None` without
    /// skills.
    pub fn prompt_section(&self) -> Option<String> {
        prompt::section(&self.list())
    }

    /// `prompt` with the skills' section after it.
    pub fn system_prompt(&self, prompt: Option<&str>) -> Option<String> {
        match (prompt, self.prompt_section()) {
            (p, None) => p.map(str::to_owned),
            (None, Some(s)) => Some(s),
            (Some(p), Some(s)) => Some(format!("{p}\n\n{s}")),
        }
    }
}

/// Every skill of `sources`, a repeated name left out.
fn list(sources: &[Arc<dyn SkillSource>]) -> Vec<SkillInfo> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for source in sources {
        for skill in source.skills() {
            if seen.insert(skill.name.clone()) {
                out.push(skill);
            } else {
                tracing::debug!(skill = %skill.name, "a skill of this name came first; this one is left out");
            }
        }
    }
    out
}

/// The source that has skill `name`.
fn find<'a>(
    sources: &'a [Arc<dyn SkillSource>],
    name: &str,
) -> Result<&'a Arc<dyn SkillSource>, SkillError> {
    sources
        .iter()
        .find(|s| s.skills().iter().any(|k| k.name == name))
        .ok_or_else(|| SkillError::Unknown {
            name: name.to_owned(),
        })
}

#[async_trait]
impl ToolSource for Skills {
    fn name(&self) -> &str {
        "skills"
    }

    async fn ready(&self) -> Result<(), ToolSourceError> {
        Ok(())
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        if self.sources.iter().any(|s| !s.skills().is_empty()) {
            self.tools.clone()
        } else {
            Vec::new()
        }
    }

    async fn close(&self) {}
}
