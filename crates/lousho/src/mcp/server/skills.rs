//! Serving a skills folder through the Skills extension (SEP-2640,
//! `io.modelcontextprotocol/skills`): `skills/list`, `skills/get`, each
//! skill's `SKILL.md` in `resources/list`, and every file of a skill through
//! `resources/read` at `skill://<name>/<path>`.
//!
//! The folder is read once, when serving starts, by the same loader an
//! agent's local skills use ([`LocalSkills`]: the same front matter checks
//! and sandbox rules), and its bytes are kept, so a file read is exactly
//! what the manifest's digest and size describe.

use super::resources::{DefinedResource, ResourceContent, define_resource};
use crate::skills::{LocalSkills, SkillLoadError};
use base64::Engine;
use rmcp::model::{
    ErrorData, GetSkillResult, ListSkillsResult, ReadResourceResult, ResourceContents, Skill,
    SkillFrontmatter, SkillResource, SkillResources,
};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// The most bytes one served skill may hold, all files together.
const SKILL_MAX_BYTES: usize = 16 * 1024 * 1024;

/// One served file: its bytes and MIME type.
struct ServedFile {
    bytes: Arc<[u8]>,
    mime_type: &'static str,
}

/// The skills of a folder, as served.
pub(crate) struct ServedSkills {
    skills: Vec<Skill>,
    files: HashMap<String, ServedFile>,
}

impl std::fmt::Debug for ServedSkills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServedSkills")
            .field("skills", &self.skills.len())
            .finish_non_exhaustive()
    }
}

impl ServedSkills {
    /// Reads every skill of `folder` and its files (blocking I/O). A skill
    /// over 16 MiB, or a file it cannot read, leaves that skill out (warn).
    pub(crate) fn load(folder: &Path) -> Result<Self, SkillLoadError> {
        let local = LocalSkills::open(folder)?;
        let mut skills = Vec::new();
        let mut files = HashMap::new();
        'skills: for skill in local.entries() {
            let name = &skill.info.name;
            let root = format!("skill://{name}/");
            let mut entries = Vec::new();
            let mut read = Vec::new();
            let mut total = 0usize;
            let paths = std::iter::once(crate::skills::SKILL_MD)
                .chain(skill.files.iter().map(String::as_str));
            for path in paths {
                if path.contains(['?', '#', ' ', '%']) {
                    tracing::warn!(skill = %name, path, "a skill file whose name cannot be a URI path is not served");
                    continue;
                }
                let bytes = match skill.read_bytes(path, SKILL_MAX_BYTES - total) {
                    Ok(bytes) => bytes,
                    Err(e) => {
                        tracing::warn!(skill = %name, error = %e, "the skill is not served");
                        continue 'skills;
                    }
                };
                total += bytes.len();
                let uri = format!("{root}{path}");
                entries.push(SkillResource::from_bytes(uri.clone(), &bytes));
                read.push((uri, bytes, mime_type(path)));
            }
            let served = Skill::new(
                format!("{root}{}", crate::skills::SKILL_MD),
                SkillFrontmatter::new(name.clone(), skill.info.description.clone()),
                SkillResources::Files(entries),
            );
            if let Err(e) = served.validate() {
                tracing::warn!(skill = %name, error = %e, "the skill is not served");
                continue;
            }
            for (uri, bytes, mime_type) in read {
                files.insert(
                    uri,
                    ServedFile {
                        bytes: bytes.into(),
                        mime_type,
                    },
                );
            }
            skills.push(served);
        }
        Ok(Self { skills, files })
    }

    /// `skills/list`: every skill on one page.
    pub(crate) fn list(&self) -> ListSkillsResult {
        ListSkillsResult::with_all_items(self.skills.clone())
    }

    /// `skills/get`; `-32602` for a URI no skill has.
    pub(crate) fn get(&self, uri: &str) -> Result<GetSkillResult, ErrorData> {
        self.skills
            .iter()
            .find(|s| s.uri == uri)
            .map(|s| GetSkillResult::new(s.clone()))
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    format!("no skill at `{uri}`; skills/list names the skills served"),
                    None,
                )
            })
    }

    /// `resources/read` of a skill file, or `None` when `uri` is not one.
    pub(crate) fn read(&self, uri: &str) -> Option<ReadResourceResult> {
        let file = self.files.get(uri)?;
        let text = std::str::from_utf8(&file.bytes)
            .ok()
            .filter(|t| !t.contains('\0'));
        let contents = match text {
            Some(text) => ResourceContents::text(text, uri),
            None => ResourceContents::blob(
                base64::engine::general_purpose::STANDARD.encode(&file.bytes),
                uri,
            ),
        }
        .with_mime_type(file.mime_type);
        Some(ReadResourceResult::new(vec![contents]))
    }

    /// Each skill's `SKILL.md` as a listed resource (`resources/list`).
    pub(crate) fn resources(self: &Arc<Self>) -> Vec<DefinedResource> {
        self.skills
            .iter()
            .map(|skill| {
                let uri = skill.uri.clone();
                let text = self
                    .files
                    .get(&uri)
                    .map(|f| String::from_utf8_lossy(&f.bytes).into_owned())
                    .unwrap_or_default();
                define_resource(uri, skill.name().to_owned(), move |_| {
                    let text = text.clone();
                    async move { ResourceContent::text(text) }
                })
                .description(skill.frontmatter.description.clone())
                .mime_type("text/markdown")
            })
            .collect()
    }
}

/// The MIME type of a skill file, by its extension.
fn mime_type(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    match ext.to_ascii_lowercase().as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "js" | "mjs" => "text/javascript",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "html" | "htm" => "text/html",
        "csv" => "text/csv",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}
