//! Reading a spec file (or the `.mcp.json` it names) with bounds: a size
//! limit, and only files and pipes that are being written (`<(…)` in a
//! shell) — never a device such as `/dev/zero`, and never a named pipe
//! (`mkfifo`), whose open would wait for a writer that may never come.

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
/// checked by size before reading; an anonymous pipe (`<(…)` in a shell) is
/// read up to the limit; anything else — a named pipe included — is refused
/// before it is opened.
pub(crate) fn read_bounded(path: &Path, limit: u64) -> Result<String, ReadError> {
    if is_named_pipe(path) {
        return Err(ReadError::NotAFile("a named pipe (FIFO)"));
    }
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

/// Whether `path` is a named pipe: a FIFO that lives in the file system.
/// Opening one blocks until some process opens it for writing, so it is
/// refused without opening it. The pipe of a shell's `<(…)` (`/dev/fd/63`)
/// is a FIFO too, but it has no place in the file system (its link
/// resolves to `pipe:[…]`, which does not canonicalize) and is already
/// being written: it is read.
#[cfg(unix)]
fn is_named_pipe(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let is_fifo = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.file_type().is_fifo());
    is_fifo(path) && std::fs::canonicalize(path).is_ok_and(|real| is_fifo(&real))
}

#[cfg(not(unix))]
fn is_named_pipe(_path: &Path) -> bool {
    false
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
