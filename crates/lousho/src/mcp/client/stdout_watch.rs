//! What a stdio server's stdout showed besides MCP: the first line that is
//! not JSON (so a server that prints banners or logs to stdout gets a clear
//! error instead of a silent hang). The stdio transport reports it as it
//! reads lines.

use crate::sync::MutexExt;
use std::sync::{Arc, Mutex};

/// How much of an offending line is kept.
const KEEP: usize = 200;

/// What the watcher saw; shared with the connection for error messages.
#[derive(Debug, Clone, Default)]
pub(crate) struct StdoutNoise {
    inner: Arc<Mutex<Option<String>>>,
}

impl StdoutNoise {
    /// The start of the first non-JSON line, if there was one.
    pub(crate) fn first_line(&self) -> Option<String> {
        self.inner.lock_unpoisoned().clone()
    }

    /// A line that is not an MCP message went by: the first one that does
    /// not start like a JSON value is kept (its first `KEEP` bytes).
    pub(crate) fn record_line(&self, line: &[u8]) {
        let start = line
            .iter()
            .position(|b| !matches!(b, b' ' | b'\t' | b'\r'))
            .unwrap_or(line.len());
        let line = &line[start..];
        if line.is_empty() || matches!(line[0], b'{' | b'[') {
            return;
        }
        let mut first = self.inner.lock_unpoisoned();
        if first.is_none() {
            let kept = &line[..line.len().min(KEEP)];
            *first = Some(String::from_utf8_lossy(kept).trim_end().to_owned());
        }
    }

    /// A sentence for error messages, when noise was seen.
    pub(crate) fn note(&self) -> Option<String> {
        self.first_line().map(|l| {
            format!("the server wrote non-MCP text to stdout (stdout is reserved for the protocol; log to stderr): {l:?}")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_the_first_non_json_line_only() {
        let noise = StdoutNoise::default();
        noise.record_line(b"  {\"jsonrpc\":\"2.0\"}");
        noise.record_line(b"[1]");
        assert_eq!(noise.first_line(), None);
        noise.record_line(b"Server listening on port 3000\r");
        noise.record_line(b"oops");
        assert_eq!(
            noise.first_line().as_deref(),
            Some("Server listening on port 3000")
        );
    }

    #[test]
    fn a_long_line_is_kept_in_part() {
        let noise = StdoutNoise::default();
        noise.record_line(&[b'x'; 1000]);
        assert_eq!(noise.first_line().map(|l| l.len()), Some(KEEP));
    }
}
