//! Manifests on disk: one JSON file per server identity
//! (`<cache dir>/manifests/<identity key>.json`), written to a temporary file
//! in the same folder and renamed into place, so a reader (or a second
//! process writing at the same time) only ever sees a whole file. A file that
//! cannot be read or parsed is ignored with a warning.

use super::manifest::{ToolManifest, UnusableManifest};
use super::store::{ManifestStore, ManifestStoreError};
use crate::mcp::client::LOG_TARGET;
use crate::mcp::client::identity::ServerIdentity;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The variable that sets lousho's cache directory (manifests go into its
/// `manifests` folder).
pub(super) const CACHE_DIR_VAR: &str = "LOUSHO_CACHE_DIR";

/// The biggest manifest file read (64 MiB); a bigger one is ignored.
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// A [`ManifestStore`] with one JSON file per server identity in a folder.
#[derive(Debug, Clone)]
pub struct DiskManifestStore {
    dir: PathBuf,
}

impl DiskManifestStore {
    /// A store in `dir` (created on the first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The default location: `$LOUSHO_CACHE_DIR/manifests` when the variable
    /// is set, else the user's cache directory (`$XDG_CACHE_HOME/lousho` or
    /// `~/.cache/lousho` on Linux, `~/Library/Caches/lousho` on macOS,
    /// `%LOCALAPPDATA%\lousho\cache` on Windows) + `/manifests`.
    pub fn from_env() -> Result<Self, ManifestStoreError> {
        let base = match std::env::var_os(CACHE_DIR_VAR).filter(|v| !v.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => directories::ProjectDirs::from("", "", "lousho")
                .ok_or(ManifestStoreError::NoCacheDir)?
                .cache_dir()
                .to_path_buf(),
        };
        Ok(Self::new(base.join("manifests")))
    }

    /// The folder the files are in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `server`'s manifest.
    pub fn path_of(&self, server: &ServerIdentity) -> PathBuf {
        self.dir.join(format!("{}.json", server.digest()))
    }

    fn read(&self, path: &Path) -> Result<Option<ToolManifest>, UnusableManifest> {
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(UnusableManifest::Read(e)),
        };
        let mut text = Vec::new();
        file.take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut text)
            .map_err(UnusableManifest::Read)?;
        if text.len() as u64 > MAX_FILE_BYTES {
            return Err(UnusableManifest::TooLarge(MAX_FILE_BYTES));
        }
        serde_json::from_slice(&text)
            .map(Some)
            .map_err(UnusableManifest::NotAManifest)
    }
}

impl ManifestStore for DiskManifestStore {
    fn load(&self, server: &ServerIdentity) -> Option<ToolManifest> {
        let path = self.path_of(server);
        match self.read(&path) {
            Ok(Some(manifest)) if manifest.identity == *server => Some(manifest),
            Ok(Some(_)) => {
                ignored(&path, "it belongs to another server");
                None
            }
            Ok(None) => None,
            Err(reason) => {
                ignored(&path, &reason.to_string());
                None
            }
        }
    }

    fn save(
        &self,
        server: &ServerIdentity,
        manifest: &ToolManifest,
    ) -> Result<(), ManifestStoreError> {
        let path = self.path_of(server);
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| ManifestStoreError::Io { path, source }
        };
        let text = serde_json::to_vec_pretty(manifest).map_err(ManifestStoreError::Serialize)?;
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        // A name no other writer uses: this process, a random part, and
        // `create_new` in case both collide anyway.
        let temp = self.dir.join(format!(
            ".{}.{}.{:016x}.tmp",
            server.digest(),
            std::process::id(),
            fastrand::u64(..)
        ));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .and_then(|mut f| f.write_all(&text));
        if let Err(e) = written.and_then(|()| std::fs::rename(&temp, &path)) {
            let _ = std::fs::remove_file(&temp);
            return Err(io(&path)(e));
        }
        Ok(())
    }

    fn remove(&self, server: &ServerIdentity) -> Result<(), ManifestStoreError> {
        let path = self.path_of(server);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(ManifestStoreError::Io { path, source: e })
            }
            _ => Ok(()),
        }
    }
}

fn ignored(path: &Path, reason: &str) {
    tracing::warn!(
        target: LOG_TARGET,
        path = %path.display(),
        "ignoring the tool manifest {}: {reason} (the server connects instead; the file is rewritten after its next listing)",
        path.display()
    );
}
