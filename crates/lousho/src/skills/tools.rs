//! The model's tools for skills: `load_skill {name}` (the `SKILL.md` and
//! the list of the skill's files) and `read_skill_file {skill, path}`.
//! Read-only, so the default approval policy runs them.

use super::{SkillSource, find};
use crate::tool::{Tool, ToolError, ToolOrigin, define_tool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt::Write as _;
use std::sync::Arc;

/// The name of the tool that loads a skill.
pub const LOAD_SKILL: &str = "load_skill";
/// The name of the tool that reads a file of a skill.
pub const READ_SKILL_FILE: &str = "read_skill_file";

/// `load_skill`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct LoadSkill {
    /// The skill's name, as the system prompt lists it.
    name: String,
}

/// `read_skill_file`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadSkillFile {
    /// The skill's name, as the system prompt lists it.
    skill: String,
    /// The file, relative to the skill's folder (as `load_skill` lists it).
    path: String,
}

/// The two tools, reading from `sources`.
pub(super) fn skill_tools(sources: &Arc<[Arc<dyn SkillSource>]>) -> Vec<Arc<dyn Tool>> {
    let s = sources.clone();
    let load = crate::tool::define_tool(
        LOAD_SKILL,
        "Load a skill by name: its instructions (SKILL.md) and the list of its other files. \
         Call it when a task fits a skill's description, before starting the task.",
        move |input: LoadSkill| {
            let s = s.clone();
            async move {
                let source = find(&s, &input.name).map_err(fail)?;
                let doc = source.load(&input.name).await.map_err(fail)?;
                let mut out = doc.text;
                if !doc.files.is_empty() {
                    if !out.ends_with('\n') {
                        out.push('\n');
                    }
                    let _ = write!(
                        out,
                        "\n[files of skill `{}` (read them with {READ_SKILL_FILE}): {}]",
                        input.name,
                        doc.files.join(", ")
                    );
                }
                Ok::<_, ToolError>(out)
            }
        },
    )
    .read_only()
    .origin(ToolOrigin::Builtin);
    let s = sources.clone();
    let read = define_tool(
        READ_SKILL_FILE,
        "Read a text file of a skill (a path load_skill listed, relative to the skill's folder).",
        move |input: ReadSkillFile| {
            let s = s.clone();
            async move {
                let source = find(&s, &input.skill).map_err(fail)?;
                source
                    .read_file(&input.skill, &input.path)
                    .await
                    .map_err(fail)
            }
        },
    )
    .read_only()
    .origin(ToolOrigin::Builtin);
    vec![Arc::new(load), Arc::new(read)]
}

fn fail(e: super::SkillError) -> ToolError {
    ToolError::failed(e.to_string())
}
