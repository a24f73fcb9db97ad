//! Skills in a local folder: the folder is one skill (it holds a
//! `SKILL.md`) or holds skills (each sub-folder with a `SKILL.md`). Names
//! and descriptions are read once, when the folder is opened; `SKILL.md`
//! and the other files are read when the model asks, through the built-in
//! file tools' sandbox ([`Workspace`]) rooted at the skill's own folder.

use super::frontmatter::parse_front_matter;
use super::{SKILL_FILE_MAX_BYTES, SkillDocument, SkillError, SkillInfo, SkillSource};
use crate::builtin::fs::Workspace;
use async_trait::async_trait;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// The file of a skill's instructions.
pub(crate) const SKILL_MD: &str = "SKILL.md";

/// The most files of one skill that are listed (and served).
pub(crate) const SKILL_MAX_FILES: usize = 512;

/// How deep below a skill's folder its files are listed.
const MAX_DEPTH: usize = 8;

/// A skills folder could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillLoadError {
    /// The folder does not exist or cannot be read.
    #[error(
        "cannot read the skills folder `{path}`: {source}; pass a folder holding SKILL.md, or folders that do"
    )]
    Open {
        /// The folder as given.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Neither the folder nor a sub-folder holds a `SKILL.md`.
    #[error(
        "the skills folder `{path}` holds no skill: put each skill in a sub-folder holding a SKILL.md"
    )]
    Empty {
        /// The folder as given.
        path: PathBuf,
    },
    /// A `SKILL.md` cannot be read or its front matter breaks the format.
    #[error("{path}: {reason}")]
    Invalid {
        /// The `SKILL.md`.
        path: PathBuf,
        /// What is wrong and what would fix it.
        reason: String,
    },
    /// Two skills have the same name.
    #[error("two skills are named `{name}` (`{first}` and `{second}`); rename one")]
    Duplicate {
        /// The name.
        name: String,
        /// The first skill's folder.
        first: PathBuf,
        /// The second's.
        second: PathBuf,
    },
}

/// One skill of a folder.
#[derive(Debug, Clone)]
pub(crate) struct LocalSkill {
    pub(crate) info: SkillInfo,
    /// Its folder, as found.
    pub(crate) dir: PathBuf,
    /// The sandbox its files are read through.
    workspace: Workspace,
    /// Its files but `SKILL.md`, relative, `/`-separated, sorted.
    pub(crate) files: Vec<String>,
}

/// The skills of a local folder: a [`SkillSource`].
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let skills = lousho::skills::LocalSkills::open("./skills")?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct LocalSkills {
    skills: Arc<[LocalSkill]>,
}

impl LocalSkills {
    /// Reads the names and descriptions of the skills in `folder`: the
    /// folder itself when it holds a `SKILL.md`, else each sub-folder that
    /// does (hidden ones, and symbolic links, left out). A front matter that
    /// breaks the format, a name other than its folder's, or a name two
    /// skills share is an error.
    pub fn open(folder: impl AsRef<Path>) -> Result<Self, SkillLoadError> {
        let folder = folder.as_ref();
        let open_err = |source| SkillLoadError::Open {
            path: folder.to_path_buf(),
            source,
        };
        let dirs = if is_file(&folder.join(SKILL_MD)) {
            vec![folder.to_path_buf()]
        } else {
            let mut dirs = Vec::new();
            for entry in std::fs::read_dir(folder).map_err(open_err)? {
                let entry = entry.map_err(open_err)?;
                let hidden = entry.file_name().to_string_lossy().starts_with('.');
                let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
                if !hidden && is_dir && is_file(&entry.path().join(SKILL_MD)) {
                    dirs.push(entry.path());
                }
            }
            dirs.sort();
            dirs
        };
        if dirs.is_empty() {
            return Err(SkillLoadError::Empty {
                path: folder.to_path_buf(),
            });
        }
        let mut skills: Vec<LocalSkill> = Vec::with_capacity(dirs.len());
        for dir in dirs {
            let skill = LocalSkill::open(dir)?;
            if let Some(first) = skills.iter().find(|s| s.info.name == skill.info.name) {
                return Err(SkillLoadError::Duplicate {
                    name: skill.info.name,
                    first: first.dir.clone(),
                    second: skill.dir,
                });
            }
            skills.push(skill);
        }
        Ok(Self {
            skills: skills.into(),
        })
    }

    /// The skills, in folder order.
    #[cfg(feature = "mcp-server")]
    pub(crate) fn entries(&self) -> &[LocalSkill] {
        &self.skills
    }

    fn skill(&self, name: &str) -> Result<&LocalSkill, SkillError> {
        self.skills
            .iter()
            .find(|s| s.info.name == name)
            .ok_or_else(|| SkillError::Unknown {
                name: name.to_owned(),
            })
    }
}

impl LocalSkill {
    fn open(dir: PathBuf) -> Result<Self, SkillLoadError> {
        let skill_md = dir.join(SKILL_MD);
        let invalid = |reason: String| SkillLoadError::Invalid {
            path: skill_md.clone(),
            reason,
        };
        let workspace = Workspace::new(&dir).map_err(|e| invalid(e.to_string()))?;
        let bytes = read_bytes(&workspace, "?", SKILL_MD, SKILL_FILE_MAX_BYTES)
            .map_err(|e| invalid(e.to_string()))?;
        let text = text_of("?", SKILL_MD, bytes).map_err(|e| invalid(e.to_string()))?;
        let (name, description) = parse_front_matter(&text).map_err(|e| invalid(e.to_string()))?;
        let folder_name = workspace
            .root()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if folder_name != name {
            return Err(invalid(format!(
                "the skill is named `{name}` but its folder `{folder_name}`; a skill's folder is named like the skill"
            )));
        }
        let mut files = Vec::new();
        list_files(workspace.root(), "", 0, &mut files);
        files.retain(|f| f != SKILL_MD);
        files.sort();
        Ok(Self {
            info: SkillInfo::new(name, description),
            dir,
            workspace,
            files,
        })
    }

    /// The bytes of the skill's file `path`, at most `limit`.
    pub(crate) fn read_bytes(&self, path: &str, limit: usize) -> Result<Vec<u8>, SkillError> {
        read_bytes(&self.workspace, &self.info.name, path, limit)
    }
}

fn is_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

/// Adds the regular files below `dir` (no hidden entries, no symbolic
/// links) to `out`, relative to the skill's folder.
fn list_files(dir: &Path, prefix: &str, depth: usize, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        if out.len() >= SKILL_MAX_FILES {
            return;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let rel = format!("{prefix}{name}");
        match entry.file_type() {
            Ok(t) if t.is_file() => out.push(rel),
            Ok(t) if t.is_dir() && depth < MAX_DEPTH => {
                list_files(&entry.path(), &format!("{rel}/"), depth + 1, out);
            }
            _ => {}
        }
    }
}

/// The bytes of `path` in the skill whose folder `ws` is: a relative path
/// without `..` or hidden parts, reached without a symbolic link, a regular
/// file of at most `limit` bytes.
fn read_bytes(
    ws: &Workspace,
    skill: &str,
    path: &str,
    limit: usize,
) -> Result<Vec<u8>, SkillError> {
    let refused = |reason: String| SkillError::Refused {
        skill: skill.to_owned(),
        path: path.to_owned(),
        reason,
    };
    check_path(path).map_err(|r| refused(r.to_owned()))?;
    let resolved = ws.resolve_path(path).map_err(|e| refused(e.to_string()))?;
    let file = ws
        .open_file(&resolved.real)
        .map_err(|e| refused(e.into_tool_error(path, path).to_string()))?;
    let mut bytes = Vec::new();
    file.take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| SkillError::Failed {
            skill: skill.to_owned(),
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
    if bytes.len() > limit {
        return Err(SkillError::TooLarge {
            skill: skill.to_owned(),
            path: path.to_owned(),
            limit,
        });
    }
    Ok(bytes)
}

/// Why `path` cannot name a file of a skill, if it cannot.
pub(crate) fn check_path(path: &str) -> Result<(), &'static str> {
    if path.is_empty() || path.contains('\0') || path.contains('\\') {
        return Err("give a file's path relative to the skill's folder, e.g. `reference.md`");
    }
    let p = Path::new(path);
    for c in p.components() {
        match c {
            Component::Normal(part) if part.to_string_lossy().starts_with('.') => {
                return Err("hidden files and folders of a skill are not read");
            }
            Component::Normal(_) => {}
            Component::ParentDir => return Err("`..` may not be used in a skill file's path"),
            _ => {
                return Err(
                    "give the path relative to the skill's folder (no leading `/` or `./`)",
                );
            }
        }
    }
    Ok(())
}

/// `bytes` as text: UTF-8 without NUL bytes.
pub(crate) fn text_of(skill: &str, path: &str, bytes: Vec<u8>) -> Result<String, SkillError> {
    let binary = |reason: String| SkillError::Binary {
        skill: skill.to_owned(),
        path: path.to_owned(),
        reason,
    };
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Err(binary(format!("a NUL byte at offset {at}")));
    }
    String::from_utf8(bytes).map_err(|e| binary(format!("not UTF-8: {e}")))
}

#[async_trait]
impl SkillSource for LocalSkills {
    fn skills(&self) -> Vec<SkillInfo> {
        self.skills.iter().map(|s| s.info.clone()).collect()
    }

    async fn load(&self, name: &str) -> Result<SkillDocument, SkillError> {
        let skill = self.skill(name)?.clone();
        blocking(move || {
            let bytes = skill.read_bytes(SKILL_MD, SKILL_FILE_MAX_BYTES)?;
            let text = text_of(&skill.info.name, SKILL_MD, bytes)?;
            Ok(SkillDocument::new(text, skill.files.clone()))
        })
        .await
    }

    async fn read_file(&self, name: &str, path: &str) -> Result<String, SkillError> {
        let skill = self.skill(name)?.clone();
        let path = path.to_owned();
        blocking(move || {
            let bytes = skill.read_bytes(&path, SKILL_FILE_MAX_BYTES)?;
            text_of(&skill.info.name, &path, bytes)
        })
        .await
    }
}

/// Runs file work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, SkillError> + Send + 'static,
) -> Result<T, SkillError> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        Err(SkillError::Failed {
            skill: String::new(),
            path: String::new(),
            reason: format!("the read stopped unexpectedly: {e}"),
        })
    })
}
