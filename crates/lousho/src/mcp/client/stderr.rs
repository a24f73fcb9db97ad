//! A bounded ring buffer for a stdio server's stderr (when capture is on):
//! the child can always write, and the tail shows in errors and status.

use crate::sync::MutexExt;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tokio::io::AsyncReadExt;

/// The last `capacity` bytes a child wrote to stderr.
#[derive(Debug, Clone)]
pub(crate) struct StderrBuffer {
    inner: Arc<Mutex<VecDeque<u8>>>,
    capacity: usize,
}

/// How many bytes of the tail go into an error message.
const TAIL_IN_ERRORS: usize = 2048;

impl StderrBuffer {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            inner: Arc::new(Mutex::new(VecDeque::with_capacity(capacity.min(64 * 1024)))),
            capacity,
        }
    }

    fn push(&self, bytes: &[u8]) {
        let mut buf = self.inner.lock_unpoisoned();
        let bytes = if bytes.len() > self.capacity {
            &bytes[bytes.len() - self.capacity..]
        } else {
            bytes
        };
        let overflow = (buf.len() + bytes.len()).saturating_sub(self.capacity);
        buf.drain(..overflow);
        buf.extend(bytes);
    }

    /// The whole buffer as (lossy) text.
    pub(crate) fn contents(&self) -> String {
        let buf = self.inner.lock_unpoisoned();
        let (a, b) = buf.as_slices();
        let mut v = Vec::with_capacity(a.len() + b.len());
        v.extend_from_slice(a);
        v.extend_from_slice(b);
        String::from_utf8_lossy(&v).into_owned()
    }

    /// The end of the buffer, trimmed, for an error message (`None` when empty).
    pub(crate) fn tail(&self) -> Option<String> {
        let all = self.contents();
        let trimmed = all.trim();
        if trimmed.is_empty() {
            return None;
        }
        let mut start = trimmed.len().saturating_sub(TAIL_IN_ERRORS);
        while !trimmed.is_char_boundary(start) {
            start += 1;
        }
        Some(trimmed[start..].to_owned())
    }

    /// Copies `stderr` into the buffer until it closes.
    pub(crate) fn spawn_reader(
        &self,
        mut stderr: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    ) -> tokio::task::JoinHandle<()> {
        let this = self.clone();
        tokio::spawn(async move {
            let mut chunk = [0u8; 4096];
            loop {
                match stderr.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => this.push(&chunk[..n]),
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_last_bytes() {
        let b = StderrBuffer::new(8);
        b.push(b"hello ");
        b.push(b"world!");
        assert_eq!(b.contents(), "o world!");
        b.push(b"0123456789abc");
        assert_eq!(b.contents(), "56789abc");
        assert_eq!(StderrBuffer::new(4).tail(), None);
    }
}
