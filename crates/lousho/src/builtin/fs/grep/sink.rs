//! Collecting one file's matches (and context) from the searcher.

use super::super::text::{decode, push_cut, trim_line_end};
use grep_searcher::{Searcher, Sink, SinkContext, SinkMatch};
use std::io;

/// One line of output.
#[derive(Debug)]
pub(crate) enum Hit {
    /// A matching line.
    Match(u64, String),
    /// A context line.
    Context(u64, String),
    /// A gap between context groups.
    Break,
}

/// One file's matches.
#[derive(Debug)]
pub(crate) struct FileHits {
    /// The path relative to the workspace root.
    pub path: String,
    /// Matches and context, in line order.
    pub hits: Vec<Hit>,
    /// Matching lines in the file.
    pub matches: usize,
    /// Matching lines kept in `hits`.
    pub kept_matches: usize,
}

/// How searching one file ended.
pub(crate) enum Outcome {
    /// Nothing matched.
    NoMatch,
    /// The file is binary; it was skipped.
    Binary,
    /// Something matched.
    Hits(FileHits),
}

/// A [`Sink`] reused for every file one thread searches.
pub(crate) struct Collect {
    hits: Vec<Hit>,
    matches: usize,
    cap: usize,
    line_chars: usize,
    binary: bool,
}

impl Collect {
    /// Keeps at most `cap` matching lines per file, each cut at `line_chars`.
    pub(crate) fn new(cap: usize, line_chars: usize) -> Self {
        Self {
            hits: Vec::new(),
            matches: 0,
            cap,
            line_chars,
            binary: false,
        }
    }

    /// Forgets the current file.
    pub(crate) fn reset(&mut self) {
        self.hits.clear();
        self.matches = 0;
        self.binary = false;
    }

    /// Ends the current file and gets ready for the next.
    pub(crate) fn finish(&mut self, path: impl FnOnce() -> String) -> Outcome {
        let outcome = if self.binary {
            Outcome::Binary
        } else if self.matches == 0 {
            Outcome::NoMatch
        } else {
            Outcome::Hits(FileHits {
                path: path(),
                hits: std::mem::take(&mut self.hits),
                matches: self.matches,
                kept_matches: self.matches.min(self.cap),
            })
        };
        self.reset();
        outcome
    }

    fn text(&self, bytes: &[u8]) -> String {
        let (text, _) = decode(trim_line_end(bytes));
        let mut out = String::with_capacity(text.len().min(self.line_chars + 40));
        push_cut(&mut out, &text, self.line_chars);
        out
    }

    fn keeping(&self) -> bool {
        self.matches < self.cap
    }
}

impl Sink for Collect {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let first = found.line_number().unwrap_or(0);
        for (i, line) in found.lines().enumerate() {
            if self.keeping() {
                let text = self.text(line);
                self.hits.push(Hit::Match(first + i as u64, text));
            }
            self.matches += 1;
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, io::Error> {
        // After the cap, only the last kept match's trailing context is kept.
        let trailing_of_last_kept = self.matches == self.cap
            && matches!(context.kind(), grep_searcher::SinkContextKind::After);
        if self.keeping() || trailing_of_last_kept {
            let text = self.text(context.bytes());
            self.hits
                .push(Hit::Context(context.line_number().unwrap_or(0), text));
        }
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, io::Error> {
        if self.keeping() && !self.hits.is_empty() {
            self.hits.push(Hit::Break);
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}
