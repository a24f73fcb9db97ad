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
    oversize: Arc<Oversize>,
}

/// A message longer than the transport's limit went by (the transport drops
/// it, so the call it answers would never return).
#[derive(Debug, Default)]
struct Oversize {
    seen: std::sync::atomic::AtomicU64,
    notify: tokio::sync::Notify,
}

impl StdoutNoise {
    /// The start of the first non-JSON line, if there was one.
    pub(crate) fn first_line(&self) -> Option<String> {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Resolves when a message over the limit arrives after `since`
    /// (a value of [`oversize_count`](Self::oversize_count)).
    pub(crate) async fn oversize_after(&self, since: u64) {
        loop {
            let notified = self.oversize.notify.notified();
            if self.oversize_count() > since {
                return;
            }
            notified.await;
        }
    }

    /// How many over-limit messages went by.
    pub(crate) fn oversize_count(&self) -> u64 {
        self.oversize.seen.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn record_oversize(&self) {
        self.oversize
            .seen
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.oversize.notify.notify_waiters();
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
    /// Bytes of the current line so far.
    line_len: usize,
    limit: usize,
    /// The current line already counted as over the limit.
    line_flagged: bool,
}

impl<R> WatchedStdout<R> {
    pub(crate) fn new(inner: R, noise: StdoutNoise, limit: usize) -> Self {
        Self {
            inner,
            noise,
            at_line_start: true,
            collecting: None,
            done: false,
            line_len: 0,
            limit,
            line_flagged: false,
        }
    }

    /// Tracks line lengths to spot messages over the transport's limit.
    fn measure(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some(pos) = rest.iter().position(|b| *b == b'\n') {
            self.line_len += pos;
            self.check_len();
            self.line_len = 0;
            self.line_flagged = false;
            rest = &rest[pos + 1..];
        }
        self.line_len += rest.len();
        self.check_len();
    }

    fn check_len(&mut self) {
        if self.line_len > self.limit && !self.line_flagged {
            self.line_flagged = true;
            self.noise.record_oversize();
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
        if let Poll::Ready(Ok(())) = &poll
            && buf.filled().len() > before
        {
            let new = &buf.filled()[before..];
            this.measure(new);
            if !this.done {
                this.scan(new);
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
        let mut w = WatchedStdout::new(tokio::io::empty(), noise.clone(), 1024);
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

#[cfg(test)]
mod limit_tests {
    use super::*;

    #[test]
    fn lines_over_the_limit_are_counted_once_each() {
        let noise = StdoutNoise::default();
        let mut w = WatchedStdout::new(tokio::io::empty(), noise.clone(), 10);
        w.measure(b"{short}\n{0123");
        assert_eq!(noise.oversize_count(), 0);
        w.measure(b"456789abc");
        w.measure(b"def}\n{ok}\n");
        assert_eq!(noise.oversize_count(), 1);
        w.measure(&[b'x'; 25]);
        w.measure(b"\n");
        assert_eq!(noise.oversize_count(), 2);
    }
}
