//! Skills of MCP servers that offer the Skills extension (SEP-2640,
//! `io.modelcontextprotocol/skills`): an [`McpClient`] is a
//! [`SkillSource`]. Each server's skills are listed with its other offers
//! (at connect, again on `notifications/resources/list_changed`, and in its
//! manifest, so a cataloged server names them without starting) and are
//! named `<server>:<name>`. `SKILL.md` and the skill's files are read with
//! `resources/read`, bounded like a local skill's, only under the skill's
//! own URI (no `..`, no hidden parts), only files its manifest lists (when
//! it lists them), and checked against the manifest's size and digest.

use super::connect::McpClient;
use super::offered::ResourceContents;
use crate::skills::{
    SKILL_FILE_MAX_BYTES, SkillDocument, SkillError, SkillInfo, SkillSource, check_skill_path,
};
use async_trait::async_trait;
use rmcp::model::{SKILL_MD, Skill, SkillResources};

impl McpClient {
    /// The skill the model calls `name` (`<server>:<skill>`), with its server.
    fn mcp_skill(&self, name: &str) -> Result<(String, Skill), SkillError> {
        let unknown = || SkillError::Unknown {
            name: name.to_owned(),
        };
        let (server, skill) = name.split_once(':').ok_or_else(unknown)?;
        let offers = self.connection(server).map_err(|_| unknown())?.offers();
        let found = offers
            .as_ref()
            .and_then(|o| o.skills.as_ref())
            .and_then(|list| {
                list.iter()
                    .find(|s| s.name() == skill && s.validate().is_ok())
            })
            .cloned()
            .ok_or_else(unknown)?;
        Ok((server.to_owned(), found))
    }

    /// The text at `uri` of `server`, as file `path` of skill `name`:
    /// bounded, checked against the manifest entry when there is one, UTF-8.
    async fn skill_text(
        &self,
        name: &str,
        server: &str,
        skill: &Skill,
        path: &str,
    ) -> Result<String, SkillError> {
        let failed = |reason: String| SkillError::Failed {
            skill: name.to_owned(),
            path: path.to_owned(),
            reason,
        };
        let uri = format!("{}{path}", root_of(&skill.uri));
        let entry = match &skill.resources {
            SkillResources::Files(files) => Some(files.iter().find(|f| f.uri == uri).ok_or_else(
                || SkillError::Refused {
                    skill: name.to_owned(),
                    path: path.to_owned(),
                    reason:
                        "the skill does not list this file; use a path load_skill listed".into(),
                },
            )?),
            _ => None,
        };
        if entry.is_some_and(|e| e.size > SKILL_FILE_MAX_BYTES as u64) {
            return Err(too_large(name, path));
        }
        let contents = self
            .connection(server)
            .map_err(|e| failed(e.to_string()))?
            .read_resource(&uri)
            .await
            .map_err(|e| failed(e.to_string()))?;
        let text = match contents.into_iter().next() {
            Some(ResourceContents::Text { text, .. }) => text,
            Some(ResourceContents::Blob { mime_type, .. }) => {
                return Err(SkillError::Binary {
                    skill: name.to_owned(),
                    path: path.to_owned(),
                    reason: format!(
                        "the server sent binary data ({})",
                        mime_type.as_deref().unwrap_or("no MIME type")
                    ),
                });
            }
            None => return Err(failed("the server sent no contents".into())),
        };
        if text.len() > SKILL_FILE_MAX_BYTES {
            return Err(too_large(name, path));
        }
        if let Some(entry) = entry {
            entry
                .verify(text.as_bytes())
                .map_err(|e| failed(e.to_string()))?;
        }
        Ok(text)
    }
}

fn too_large(skill: &str, path: &str) -> SkillError {
    SkillError::TooLarge {
        skill: skill.to_owned(),
        path: path.to_owned(),
        limit: SKILL_FILE_MAX_BYTES,
    }
}

/// The skill's folder URI: its `SKILL.md` URI without `SKILL.md`.
fn root_of(uri: &str) -> &str {
    uri.strip_suffix(SKILL_MD).unwrap_or(uri)
}

#[async_trait]
impl SkillSource for McpClient {
    fn skills(&self) -> Vec<SkillInfo> {
        let mut out = Vec::new();
        for server in self.server_names() {
            let Some(offers) = self.connection(server).ok().and_then(|c| c.offers()) else {
                continue;
            };
            for skill in offers.skills.iter().flatten() {
                if let Err(e) = skill.validate() {
                    tracing::debug!(server, uri = %skill.uri, error = %e, "a listed skill breaks the format; left out");
                    continue;
                }
                let description = skill.frontmatter.description.trim();
                if description.is_empty() {
                    continue;
                }
                out.push(SkillInfo::new(
                    format!("{server}:{}", skill.name()),
                    description,
                ));
            }
        }
        out
    }

    async fn load(&self, name: &str) -> Result<SkillDocument, SkillError> {
        let (server, skill) = self.mcp_skill(name)?;
        let text = self.skill_text(name, &server, &skill, SKILL_MD).await?;
        let root = root_of(&skill.uri);
        let files = match &skill.resources {
            SkillResources::Files(files) => files
                .iter()
                .filter_map(|f| f.uri.strip_prefix(root))
                .filter(|p| *p != SKILL_MD)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        Ok(SkillDocument::new(text, files))
    }

    async fn read_file(&self, name: &str, path: &str) -> Result<String, SkillError> {
        let (server, skill) = self.mcp_skill(name)?;
        check_skill_path(path).map_err(|reason| SkillError::Refused {
            skill: name.to_owned(),
            path: path.to_owned(),
            reason: reason.to_owned(),
        })?;
        self.skill_text(name, &server, &skill, path).await
    }
}
