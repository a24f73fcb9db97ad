use super::SandboxError;
use std::io;

/// Why a file tool call failed. The message is what the model sees, and says
/// what to do instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FsToolError {
    /// The path was refused by the sandbox or does not exist.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// A file tool was pointed at a directory.
    #[error("`{path}` is a directory; use list_dir to see what it holds")]
    IsADirectory {
        /// The path, relative to the workspace root.
        path: String,
    },
    /// A directory tool was pointed at something else.
    #[error("`{path}` is not a directory; use read_file to read a file")]
    NotADirectory {
        /// The path, relative to the workspace root.
        path: String,
    },
    /// A FIFO, a device or a socket: never read (it could block or never end).
    #[error("`{path}` is {kind}, not a regular file; the file tools read regular files only")]
    NotAFile {
        /// The path, relative to the workspace root.
        path: String,
        /// What it is.
        kind: &'static str,
    },
    /// `read_file` was asked for a binary file.
    #[error("`{path}` looks like a binary file ({reason}); read_file shows text files only")]
    Binary {
        /// The path, relative to the workspace root.
        path: String,
        /// What gave it away.
        reason: String,
    },
    /// `offset` points past the last line.
    #[error("`offset` {offset} is past the end of `{path}`, which has {lines} lines")]
    OffsetPastEnd {
        /// The path, relative to the workspace root.
        path: String,
        /// The requested first line.
        offset: u64,
        /// How many lines the file has.
        lines: u64,
    },
    /// `grep`'s pattern is not a valid regular expression.
    #[error("invalid regular expression `{pattern}`: {message}")]
    InvalidRegex {
        /// The pattern as sent.
        pattern: String,
        /// What is wrong with it.
        message: String,
    },
    /// A glob pattern is not valid.
    #[error("invalid glob pattern `{pattern}`: {message}")]
    InvalidGlob {
        /// The pattern as sent.
        pattern: String,
        /// What is wrong with it.
        message: String,
    },
    /// A file longer than the workspace's `resource_bytes`, asked for whole.
    #[error(
        "`{path}` is {size} bytes, more than the {max} bytes a file may have to be read whole; read it in pages with read_file"
    )]
    TooLarge {
        /// The path, relative to the workspace root.
        path: String,
        /// Its size.
        size: u64,
        /// The cap.
        max: usize,
    },
    /// Reading failed.
    #[error("cannot read `{path}`: {source}")]
    Io {
        /// The path, relative to the workspace root.
        path: String,
        /// The underlying error.
        source: io::Error,
    },
}

impl From<FsToolError> for crate::tool::ToolError {
    fn from(e: FsToolError) -> Self {
        crate::tool::ToolError::Other(Box::new(e))
    }
}
