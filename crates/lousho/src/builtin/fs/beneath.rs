//! Opening paths beneath the workspace root by file descriptor, so that a
//! folder swapped for a symbolic link between a path check and its use
//! cannot lead outside.
//!
//! On Linux one `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` from the
//! root's descriptor does it (the kernel refuses every symbolic link and
//! every `..` on the way). Where `openat2` is missing (Linux before 5.6, some
//! container sandboxes) and on other Unixes, the path is walked one
//! `openat(O_NOFOLLOW)` per component from the root's descriptor.

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path};

/// Why a path beneath the root could not be opened.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// A component is (now) a symbolic link, or the path leaves the root.
    Escaped,
    /// A FIFO, a device, a socket or a folder where a file was asked for.
    NotAFile(&'static str),
    /// Not a folder where a folder was asked for.
    NotADirectory,
    /// Anything else (missing, permissions, …).
    Io(io::Error),
}

impl From<Errno> for OpenError {
    fn from(e: Errno) -> Self {
        match e {
            Errno::LOOP | Errno::XDEV => OpenError::Escaped,
            Errno::NXIO => OpenError::NotAFile("a socket or a device"),
            other => OpenError::Io(other.into()),
        }
    }
}

/// The workspace root, held open for the workspace's lifetime.
#[derive(Debug)]
pub(crate) struct RootFd(OwnedFd);

impl RootFd {
    pub(crate) fn open(root: &Path) -> io::Result<Self> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        Ok(Self(rustix::fs::open(root, flags, Mode::empty())?))
    }

    /// Opens the regular file at `rel` (relative to the root) for reading.
    /// A FIFO is opened without blocking and then refused.
    pub(crate) fn open_file(&self, rel: &Path) -> Result<File, OpenError> {
        let fd = self.open_beneath(rel, OFlags::RDONLY | OFlags::NONBLOCK)?;
        match kind(rustix::fs::fstat(&fd)?.st_mode) {
            None => Ok(File::from(fd)),
            Some(kind) => Err(OpenError::NotAFile(kind)),
        }
    }

    /// Opens the folder at `rel` (relative to the root; empty for the root).
    pub(crate) fn open_dir(&self, rel: &Path) -> Result<OwnedFd, OpenError> {
        self.open_beneath(rel, OFlags::RDONLY | OFlags::DIRECTORY)
            .map_err(|e| match e {
                OpenError::Io(e) if e.raw_os_error() == Some(Errno::NOTDIR.raw_os_error()) => {
                    OpenError::NotADirectory
                }
                other => other,
            })
    }

    /// Whether `rel` is a regular file reached without a symbolic link.
    pub(crate) fn is_file(&self, rel: &Path) -> bool {
        let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
            return false;
        };
        let Ok(dir) = self.open_dir(parent) else {
            return false;
        };
        rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|st| kind(st.st_mode).is_none())
    }

    fn open_beneath(&self, rel: &Path, flags: OFlags) -> Result<OwnedFd, OpenError> {
        let flags = flags | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NOCTTY;
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if openat2_works(self.0.as_fd()) {
            use rustix::fs::ResolveFlags;
            let path = if rel.as_os_str().is_empty() {
                Path::new(".")
            } else {
                rel
            };
            let resolve =
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            return Ok(rustix::fs::openat2(
                &self.0,
                path,
                flags,
                Mode::empty(),
                resolve,
            )?);
        }
        self.walk(rel, flags)
    }

    /// One `openat(O_NOFOLLOW)` per component.
    fn walk(&self, rel: &Path, flags: OFlags) -> Result<OwnedFd, OpenError> {
        let mut parts = Vec::new();
        for component in rel.components() {
            match component {
                Component::Normal(part) => parts.push(part),
                Component::CurDir => {}
                _ => return Err(OpenError::Escaped),
            }
        }
        let Some((last, folders)) = parts.split_last() else {
            return Ok(rustix::fs::openat(&self.0, ".", flags, Mode::empty())?);
        };
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let through = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let through = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut here: Option<OwnedFd> = None;
        for folder in folders {
            let at: BorrowedFd<'_> = here.as_ref().map_or(self.0.as_fd(), AsFd::as_fd);
            match rustix::fs::openat(at, *folder, through, Mode::empty()) {
                Ok(fd) => here = Some(fd),
                // A symlink on the way fails as "not a folder" on some
                // systems: say what it is.
                Err(Errno::NOTDIR) if is_symlink(at, folder) => return Err(OpenError::Escaped),
                Err(e) => return Err(e.into()),
            }
        }
        let at: BorrowedFd<'_> = here.as_ref().map_or(self.0.as_fd(), AsFd::as_fd);
        Ok(rustix::fs::openat(at, *last, flags, Mode::empty())?)
    }
}

fn is_symlink(at: BorrowedFd<'_>, name: &std::ffi::OsStr) -> bool {
    rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink)
}

/// What a file that is not a regular file is; `None` for a regular file.
fn kind(mode: rustix::fs::RawMode) -> Option<&'static str> {
    match FileType::from_raw_mode(mode) {
        FileType::RegularFile => None,
        FileType::Directory => Some("a folder"),
        FileType::Fifo => Some("a FIFO (named pipe)"),
        FileType::CharacterDevice | FileType::BlockDevice => Some("a device"),
        FileType::Socket => Some("a socket"),
        FileType::Symlink => Some("a symbolic link"),
        _ => Some("not a regular file"),
    }
}

/// Whether `openat2` with the resolve flags works here (probed once).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn openat2_works(root: BorrowedFd<'_>) -> bool {
    use rustix::fs::ResolveFlags;
    use std::sync::OnceLock;
    static WORKS: OnceLock<bool> = OnceLock::new();
    *WORKS.get_or_init(|| {
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        match rustix::fs::openat2(root, ".", flags, Mode::empty(), resolve) {
            Ok(_) => true,
            // Missing, filtered by a seccomp profile, or flags unknown.
            Err(e) => !matches!(e, Errno::NOSYS | Errno::PERM | Errno::INVAL | Errno::TOOBIG),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::{OpenError, RootFd};
    use rustix::fs::OFlags;
    use std::path::Path;

    /// The per-component walk (used where `openat2` is missing) refuses a
    /// symlink anywhere on the way, like `openat2` does.
    #[test]
    fn the_component_walk_follows_no_symlink() {
        let dir = std::env::temp_dir().join(format!("lousho-walk-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("ws/a/b")).unwrap();
        std::fs::write(dir.join("ws/a/b/f.txt"), "in").unwrap();
        std::fs::write(dir.join("out.txt"), "out").unwrap();
        std::os::unix::fs::symlink(dir.join("ws/a"), dir.join("ws/alink")).unwrap();
        std::os::unix::fs::symlink(dir.join("out.txt"), dir.join("ws/a/out.txt")).unwrap();
        let root = RootFd::open(&dir.join("ws")).unwrap();
        let read = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
        assert!(root.walk(Path::new("a/b/f.txt"), read).is_ok());
        assert!(root.walk(Path::new(""), read | OFlags::DIRECTORY).is_ok());
        for escape in ["alink/b/f.txt", "a/out.txt", "../out.txt", "/etc/passwd"] {
            assert!(
                matches!(root.walk(Path::new(escape), read), Err(OpenError::Escaped)),
                "{escape}"
            );
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}
