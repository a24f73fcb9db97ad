//! Reading a spec file (or the `.mcp.json` it names) with bounds: a size
//! limit, and only files and pipes — never a device such as `/dev/zero`.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// The largest spec file read by default: 1 MiB. Real specs are a few KB; a
/// file this size already takes the YAML parser a noticeable moment.
pub const DEFAULT_MAX_SPEC_BYTES: u64 = 1024 * 1024;

/// Why a bounded read failed.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// Opening or reading failed.
    Io(io::Error),
    /// More than the limit.
    TooLarge,
    /// A directory, device or socket.
    NotAFile(&'static str),
    /// Not UTF-8.
    NotUtf8,
}

/// Reads `path` as UTF-8 text of at most `limit` bytes. Regular files are
/// checked by size before reading; pipes and FIFOs (`<(…)` in a shell) are
/// read up to the limit; anything else is refused unread.
pub(crate) fn read_bounded(path: &Path, limit: u64) -> Result<String, ReadError> {
    let file = File::open(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    let kind = kind_of(&meta.file_type());
    if let Some(kind) = kind {
        return Err(ReadError::NotAFile(kind));
    }
    if meta.is_file() && meta.len() > limit {
        return Err(ReadError::TooLarge);
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge);
    }
    String::from_utf8(bytes).map_err(|_| ReadError::NotUtf8)
}

/// What a file that may not be read is, or `None` for a file or a pipe.
#[cfg(unix)]
fn kind_of(file_type: &std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_file() || file_type.is_fifo() {
        None
    } else if file_type.is_dir() {
        Some("a directory")
    } else if file_type.is_char_device() || file_type.is_block_device() {
        Some("a device")
    } else if file_type.is_socket() {
        Some("a socket")
    } else {
        Some("not a regular file")
    }
}

#[cfg(not(unix))]
fn kind_of(file_type: &std::fs::FileType) -> Option<&'static str> {
    if file_type.is_file() {
        None
    } else if file_type.is_dir() {
        Some("a directory")
    } else {
        Some("not a regular file")
    }
}
