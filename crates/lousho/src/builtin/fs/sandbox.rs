//! The sandbox: one folder the file tools may read, and the path checks that
//! keep every request inside it.
//!
//! A requested path is first normalised lexically (so `../x` is refused with
//! a clear message), then resolved for real with `canonicalize` (which
//! follows every symbolic link) and the *real* path is checked to be inside
//! the workspace's canonical root. Tools then open that real path, never the
//! requested one, and open it by descriptor beneath the root with no symbolic
//! link allowed on the way (`beneath`): swapping a component for a symlink
//! between the check and the open makes the open fail instead of leading
//! outside. Walks list folders by path, but every file they read and every
//! name they return is opened or checked the same way.

use super::FsLimits;
use super::FsToolError;
use super::beneath::{OpenError, RootFd};
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// A folder the built-in file tools are bound to: its canonical root and the
/// caps the tools apply.
///
/// Cheap to clone. Every path a tool receives is resolved inside this folder.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: Arc<Path>,
    fd: Arc<RootFd>,
    limits: FsLimits,
}

/// The workspace folder could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkspaceError {
    /// The folder does not exist or cannot be resolved.
    #[error("cannot open the workspace `{path}`: {source}; pass an existing folder")]
    Open {
        /// The path as given.
        path: PathBuf,
        /// Why it could not be resolved.
        source: io::Error,
    },
    /// The path is not a folder.
    #[error("the workspace `{path}` is not a folder; pass the folder the tools may read")]
    NotADirectory {
        /// The path as given.
        path: PathBuf,
    },
}

/// Why a requested path was refused. The message is what the model sees.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// `..` climbs above the workspace root.
    #[error(
        "`{requested}` is outside the workspace: `..` may not climb above the workspace root; \
         use a path relative to the workspace root"
    )]
    ParentEscape {
        /// The path as the model sent it.
        requested: String,
    },
    /// An absolute path that is not inside the workspace.
    #[error(
        "`{requested}` is outside the workspace; only paths inside the workspace can be used \
         (give them relative to the workspace root)"
    )]
    OutsideAbsolute {
        /// The path as the model sent it.
        requested: String,
    },
    /// The path is inside lexically, but a symbolic link takes it outside.
    #[error(
        "`{requested}` goes through a symbolic link that points outside the workspace; \
         only files inside the workspace can be used"
    )]
    SymlinkOutside {
        /// The path as the model sent it.
        requested: String,
    },
    /// Nothing exists at the path.
    #[error("`{requested}` does not exist in the workspace; use list_dir or glob to find paths")]
    NotFound {
        /// The path as the model sent it.
        requested: String,
    },
    /// The path contains a NUL byte.
    #[error("`{requested}` is not a valid path (it contains a NUL byte)")]
    Invalid {
        /// The path as the model sent it (NULs escaped).
        requested: String,
    },
    /// The path could not be resolved.
    #[error("cannot resolve `{requested}`: {source}")]
    Io {
        /// The path as the model sent it.
        requested: String,
        /// The underlying error.
        source: io::Error,
    },
}

/// A path resolved inside the workspace.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    /// The canonical (real) path; always inside the workspace root.
    pub real: PathBuf,
    /// The path relative to the root, `/`-separated; `.` for the root.
    pub display: String,
}

impl Workspace {
    /// Opens `root` (resolved once, symlinks included) with the default caps.
    pub fn new(root: impl AsRef<Path>) -> Result<Self, WorkspaceError> {
        let given = root.as_ref();
        let real = std::fs::canonicalize(given).map_err(|source| WorkspaceError::Open {
            path: given.to_path_buf(),
            source,
        })?;
        if !real.is_dir() {
            return Err(WorkspaceError::NotADirectory {
                path: given.to_path_buf(),
            });
        }
        let fd = RootFd::open(&real).map_err(|source| WorkspaceError::Open {
            path: given.to_path_buf(),
            source,
        })?;
        Ok(Self {
            root: Arc::from(real),
            fd: Arc::new(fd),
            limits: FsLimits::default(),
        })
    }

    /// Uses these caps instead of the defaults.
    #[must_use]
    pub fn with_limits(mut self, limits: FsLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The canonical root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The caps the tools apply.
    pub fn limits(&self) -> &FsLimits {
        &self.limits
    }

    /// Resolves a path the model sent to its real path inside the workspace.
    ///
    /// Relative paths are taken from the root; absolute paths must lie inside
    /// it. Symbolic links are followed and the real path must stay inside.
    pub fn resolve(&self, requested: &str) -> Result<PathBuf, SandboxError> {
        self.resolve_path(requested).map(|r| r.real)
    }

    pub(crate) fn resolve_path(&self, requested: &str) -> Result<Resolved, SandboxError> {
        if requested.contains('\0') {
            return Err(SandboxError::Invalid {
                requested: requested.replace('\0', "\\0"),
            });
        }
        let path = Path::new(requested);
        let lexical = if path.is_absolute() {
            let normal = normalise(path).ok_or_else(|| SandboxError::OutsideAbsolute {
                requested: requested.to_owned(),
            })?;
            if !normal.starts_with(&self.root) {
                // The workspace may have been reached through a symlinked
                // path (e.g. /tmp on macOS); accept the path only if its real
                // location is inside.
                return match std::fs::canonicalize(&normal) {
                    Ok(real) if real.starts_with(&self.root) => Ok(self.resolved(real)),
                    _ => Err(SandboxError::OutsideAbsolute {
                        requested: requested.to_owned(),
                    }),
                };
            }
            normal
        } else {
            let relative = normalise(path).ok_or_else(|| SandboxError::ParentEscape {
                requested: requested.to_owned(),
            })?;
            self.root.join(relative)
        };
        let real = match std::fs::canonicalize(&lexical) {
            Ok(real) => real,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(SandboxError::NotFound {
                    requested: requested.to_owned(),
                });
            }
            Err(source) => {
                return Err(SandboxError::Io {
                    requested: requested.to_owned(),
                    source,
                });
            }
        };
        if !real.starts_with(&self.root) {
            return Err(SandboxError::SymlinkOutside {
                requested: requested.to_owned(),
            });
        }
        Ok(self.resolved(real))
    }

    fn resolved(&self, real: PathBuf) -> Resolved {
        let display = self.display(&real);
        Resolved { real, display }
    }

    /// `path` (inside the root) relative to the root, `/`-separated.
    pub(crate) fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => slash_path(rel),
            Err(_) => slash_path(path),
        }
    }

    /// `path` (a real path inside the root) relative to the root.
    fn relative<'a>(&self, path: &'a Path) -> Result<&'a Path, OpenError> {
        path.strip_prefix(&self.root)
            .map_err(|_| OpenError::Escaped)
    }

    /// Opens the regular file at `real` (a path inside the root) for reading,
    /// beneath the root's descriptor: no symbolic link is followed on the
    /// way, and a FIFO, device or socket is refused without blocking.
    pub(crate) fn open_file(&self, real: &Path) -> Result<File, OpenError> {
        self.fd.open_file(self.relative(real)?)
    }

    /// Opens the folder at `real` (a path inside the root) the same way.
    pub(crate) fn open_dir(&self, real: &Path) -> Result<OwnedFd, OpenError> {
        self.fd.open_dir(self.relative(real)?)
    }

    /// Whether `real` is a regular file inside the root right now, reached
    /// without a symbolic link.
    pub(crate) fn is_file(&self, real: &Path) -> bool {
        self.relative(real).is_ok_and(|rel| self.fd.is_file(rel))
    }
}

impl OpenError {
    /// The tool error for a failed open of `requested` (shown as `path`).
    pub(crate) fn into_tool_error(self, requested: &str, path: &str) -> FsToolError {
        match self {
            OpenError::Escaped => SandboxError::SymlinkOutside {
                requested: requested.to_owned(),
            }
            .into(),
            OpenError::NotAFile(kind) => FsToolError::NotAFile {
                path: path.to_owned(),
                kind,
            },
            OpenError::NotADirectory => FsToolError::NotADirectory {
                path: path.to_owned(),
            },
            OpenError::Io(source) => FsToolError::Io {
                path: path.to_owned(),
                source,
            },
        }
    }
}

/// Lexical normalisation: drops `.`, applies `..`; `None` when `..` climbs
/// above the start (for absolute paths: above `/`).
fn normalise(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    let mut depth = 0usize;
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if depth == 0 {
                    return None;
                }
                out.pop();
                depth -= 1;
            }
            Component::Normal(part) => {
                out.push(part);
                depth += 1;
            }
        }
    }
    Some(out)
}

/// A relative path with `/` separators on every platform.
pub(crate) fn slash_path(path: &Path) -> String {
    let mut out = String::new();
    for (i, part) in path.components().enumerate() {
        if i > 0 {
            out.push('/');
        }
        out.push_str(&part.as_os_str().to_string_lossy());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{OpenError, Workspace, normalise};
    use std::path::Path;

    #[test]
    fn files_are_opened_beneath_the_root_only() {
        let dir = std::env::temp_dir().join(format!("lousho-beneath-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("ws/sub")).unwrap();
        std::fs::write(dir.join("outside.txt"), "x").unwrap();
        std::fs::write(dir.join("ws/sub/inside.txt"), "x").unwrap();
        std::os::unix::fs::symlink(dir.join("outside.txt"), dir.join("ws/link.txt")).unwrap();
        std::os::unix::fs::symlink(dir.join("ws/sub"), dir.join("ws/sublink")).unwrap();
        let ws = Workspace::new(dir.join("ws")).unwrap();
        let root = ws.root().to_path_buf();
        assert!(ws.open_file(&root.join("sub/inside.txt")).is_ok());
        assert!(ws.is_file(&root.join("sub/inside.txt")));
        for path in ["link.txt", "sublink/inside.txt"] {
            assert!(matches!(
                ws.open_file(&root.join(path)),
                Err(OpenError::Escaped)
            ));
            assert!(!ws.is_file(&root.join(path)));
        }
        assert!(matches!(
            ws.open_file(&dir.join("outside.txt")),
            Err(OpenError::Escaped)
        ));
        assert!(matches!(
            ws.open_dir(&root.join("sub/inside.txt")),
            Err(OpenError::NotADirectory)
        ));
        assert!(matches!(
            ws.open_file(&root.join("sub")),
            Err(OpenError::NotAFile("a folder"))
        ));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn normalise_refuses_climbing_above_the_start() {
        assert_eq!(
            normalise(Path::new("a/./b/../c")).unwrap(),
            Path::new("a/c")
        );
        assert!(normalise(Path::new("a/../../b")).is_none());
        assert!(normalise(Path::new("../x")).is_none());
        assert_eq!(normalise(Path::new("")).unwrap(), Path::new(""));
    }
}
