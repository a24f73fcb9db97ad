//! Watches a stdio server's stdout as it streams by (no copy, no extra task)
//! and remembers the first line that is not JSON-RPC, so a server that prints
//! banners or logs to stdout gets a clear error instead of a silent hang.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};

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
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// A sentence for error messages, when noise was seen.
    pub(crate) fn note(&self) -> Option<String> {
        self.first_line().map(|l| {
            format!("the server wrote non-MCP text to stdout (stdout is reserved for the protocol; log to stderr): {l:?}")
        })
    }
}

/// An `AsyncRead` that passes bytes through and records the first line that
/// does not start like a JSON value.
pub(crate) struct WatchedStdout<R> {
    inner: R,
    noise: StdoutNoise,
    at_line_start: bool,
    /// Collecting the offending line (until newline or `KEEP` bytes).
    collecting: Option<Vec<u8>>,
    done: bool,
}

impl<R> WatchedStdout<R> {
    pub(crate) fn new(inner: R, noise: StdoutNoise) -> Self {
        Self {
            inner,
            noise,
            at_line_start: true,
            collecting: None,
            done: false,
        }
    }

    fn scan(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if let Some(line) = &mut self.collecting {
                if b == b'\n' || line.len() >= KEEP {
                    let text = String::from_utf8_lossy(line).trim_end().to_owned();
                    *self
                        .noise
                        .inner
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner) = Some(text);
                    self.collecting = None;
                    self.done = true;
                    return;
                }
                line.push(b);
                continue;
            }
            if b == b'\n' {
                self.at_line_start = true;
            } else if self.at_line_start {
                if b == b' ' || b == b'\t' || b == b'\r' {
                    continue;
                }
                self.at_line_start = false;
                if b != b'{' && b != b'[' {
                    self.collecting = Some(vec![b]);
                }
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for WatchedStdout<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        let poll = Pin::new(&mut this.inner).poll_read(cx, buf);
        if !this.done {
            if let Poll::Ready(Ok(())) = &poll {
                let filled = buf.filled();
                if filled.len() > before {
                    this.scan(&filled[before..]);
                }
            }
        }
        poll
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_the_first_non_json_line_only() {
        let noise = StdoutNoise::default();
        let mut w = WatchedStdout::new(tokio::io::empty(), noise.clone());
        w.scan(b"{\"jsonrpc\":\"2.0\"}\n  [1]\n");
        assert_eq!(noise.first_line(), None);
        w.scan(b"Server listening");
        w.scan(b" on port 3000\n{\"x\":1}\noops\n");
        assert_eq!(
            noise.first_line().as_deref(),
            Some("Server listening on port 3000")
        );
    }
}
