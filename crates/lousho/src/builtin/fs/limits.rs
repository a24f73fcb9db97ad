/// The caps the file tools apply, so one call cannot flood the model's
/// context. Every cap that cuts a result adds a note saying what was left
/// out and how to get it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FsLimits {
    /// Lines `read_file` returns when no `limit` is given; also the largest
    /// `limit` honoured.
    pub read_lines: usize,
    /// Bytes of text `read_file` returns at most in one call.
    pub read_bytes: usize,
    /// Characters of one line `read_file` shows; the rest is cut with a note.
    pub read_line_chars: usize,
    /// Entries `list_dir` returns at most.
    pub list_entries: usize,
    /// Paths `glob` returns at most.
    pub glob_results: usize,
    /// Matching lines `grep` returns when no `max_results` is given.
    pub grep_default_results: usize,
    /// The largest `max_results` honoured by `grep`.
    pub grep_max_results: usize,
    /// Characters of one line `grep` shows; the rest is cut with a note.
    pub grep_line_chars: usize,
    /// The most context lines (`context`) `grep` shows around a match.
    pub grep_max_context: usize,
    /// Bytes a file may have to be read whole (served as an MCP resource);
    /// a longer one is refused.
    pub resource_bytes: usize,
    /// Threads for walking and searching; 0 picks the machine's parallelism.
    pub threads: usize,
}

impl Default for FsLimits {
    fn default() -> Self {
        Self {
            read_lines: 2000,
            read_bytes: 256 * 1024,
            read_line_chars: 2000,
            list_entries: 1000,
            glob_results: 1000,
            grep_default_results: 100,
            grep_max_results: 1000,
            grep_line_chars: 500,
            grep_max_context: 10,
            resource_bytes: 4 * 1024 * 1024,
            threads: 0,
        }
    }
}

impl FsLimits {
    /// The number of threads to use.
    pub(crate) fn thread_count(&self) -> usize {
        if self.threads > 0 {
            self.threads
        } else {
            std::thread::available_parallelism()
                .map(usize::from)
                .unwrap_or(2)
                .min(12)
        }
    }
}
