//! What can go wrong with a cassette: reading or writing its file, and a
//! replayed run that does not do what the recorded one did.

use std::path::PathBuf;
use std::sync::Arc;

/// Why a cassette could not be read, written or replayed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum CassetteError {
    /// The file could not be read or written.
    #[error("cassette {}: {source}", path.display())]
    Io {
        /// The cassette file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// A line of the file is not a cassette entry.
    #[error(
        "cassette {} line {line}: {source} — the file was edited by hand or is not a cassette; record it again",
        path.display()
    )]
    Parse {
        /// The cassette file.
        path: PathBuf,
        /// The line (1-based).
        line: usize,
        /// What was wrong.
        #[source]
        source: Arc<serde_json::Error>,
    },
    /// The file was written by another cassette format.
    #[error(
        "cassette {}: format {found} is not supported (this lousho reads format {supported}); record it again",
        path.display()
    )]
    Format {
        /// The cassette file.
        path: PathBuf,
        /// The format the file says (0 when it has no header).
        found: u32,
        /// The format this lousho reads.
        supported: u32,
    },
    /// A request of the run differs from the recorded one.
    #[error(
        "{what} differs from the recording:\n{diff}\n(record the cassette again if the change is intended)"
    )]
    Mismatch {
        /// Which request: `model request 2`, `MCP server \`files\`: tools/call`.
        what: String,
        /// The differences, one per line.
        diff: String,
    },
    /// The run made a request the recording has no more answers for.
    #[error(
        "{what}: the recording has no more of these ({recorded} recorded) — the agent now does more than it did; record the cassette again if the change is intended"
    )]
    Exhausted {
        /// Which request.
        what: String,
        /// How many the recording has.
        recorded: usize,
    },
    /// The run ended without making requests the recording has.
    #[error(
        "the run made {made} model request(s), the recording has {recorded} — the agent now stops earlier; record the cassette again if the change is intended"
    )]
    Unused {
        /// How many the run made.
        made: usize,
        /// How many the recording has.
        recorded: usize,
    },
    /// The run's reply differs from the recorded one.
    #[error(
        "the reply differs from the recording:\n{diff}\n(record the cassette again if the change is intended)"
    )]
    Outcome {
        /// The differences, one per line.
        diff: String,
    },
    /// The recording holds no run input to replay (a cassette recorded
    /// through the model and MCP wrappers only).
    #[error("cassette {}: it holds no input message to replay; record it with `AgentBuilder::record` or `lousho run --record`", path.display())]
    NoInput {
        /// The cassette file.
        path: PathBuf,
    },
    /// The recording saw a failure (a model or transport error, a stream
    /// cut short), so it is not written over the file.
    #[error("the run did not finish cleanly ({reason}); the cassette {} was not written", path.display())]
    NotClean {
        /// The cassette file.
        path: PathBuf,
        /// The first failure seen.
        reason: String,
    },
    /// `save` on a cassette that replays, or the reverse.
    #[error("the cassette {} is {mode}, not {wanted}", path.display())]
    WrongMode {
        /// The cassette file.
        path: PathBuf,
        /// What it is (`replaying` or `recording`).
        mode: &'static str,
        /// What the call needs.
        wanted: &'static str,
    },
    /// A redaction pattern is not a valid glob.
    #[error("redaction pattern `{pattern}` is not a valid glob: {reason}")]
    Pattern {
        /// The pattern given.
        pattern: String,
        /// What globset says is wrong.
        reason: String,
    },
}

impl CassetteError {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        CassetteError::Io {
            path: path.to_owned(),
            source: Arc::new(source),
        }
    }
}
