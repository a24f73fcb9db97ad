//! Newline-delimited JSON-RPC read from a pipe (a served agent's stdin, a
//! stdio server's stdout): one bounded, cancel-safe line reader for both
//! sides of MCP. A line over the limit is never buffered whole: the reader
//! keeps at most `head_bytes` of it (the server reads the request's id from
//! them to answer it) and drops the rest up to its newline.

use std::io;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// A UTF-8 byte order mark, which may start a line (RFC 8259 §8.1).
const BOM: &[u8] = b"\xEF\xBB\xBF";
/// A line buffer grown past this by a big message is given back after it.
const KEEP_CAPACITY: usize = 1024 * 1024;
/// The pipe's read buffer.
const READ_BUFFER: usize = 64 * 1024;

/// What one [`LineReader::read_line`] found.
#[derive(Debug)]
pub(crate) enum ReadLine {
    /// A complete line, in [`LineReader::line`].
    Line,
    /// A line over the limit, dropped; its first bytes (up to the reader's
    /// `head_bytes`).
    Oversized {
        /// The line's first bytes.
        #[cfg_attr(not(feature = "mcp-server"), allow(dead_code))]
        // only the server answers by id
        head: Vec<u8>,
    },
    /// The pipe is closed.
    Eof,
    /// Reading failed.
    Failed(io::Error),
}

/// The bounded line reader.
#[derive(Debug)]
pub(crate) struct LineReader<R> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Dropping the rest of an oversized line, up to its newline.
    discarding: bool,
    max_line_bytes: usize,
    head_bytes: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// Reads lines of at most `max_line_bytes` from `read`; of a longer one,
    /// the first `head_bytes` are kept.
    pub(crate) fn new(read: R, max_line_bytes: usize, head_bytes: usize) -> Self {
        Self {
            read: BufReader::with_capacity(READ_BUFFER, read),
            line: Vec::new(),
            discarding: false,
            max_line_bytes,
            head_bytes,
        }
    }

    /// The size limit of a line.
    pub(crate) fn max_line_bytes(&self) -> usize {
        self.max_line_bytes
    }

    /// Reads one line, never past the limit. Cancel-safe: bytes leave the
    /// pipe's buffer only together with their copy into the line (no await
    /// in between), and a partial line stays for the next call. Call
    /// [`clear`](Self::clear) after using a [`ReadLine::Line`].
    pub(crate) async fn read_line(&mut self) -> ReadLine {
        loop {
            let available = match self.read.fill_buf().await {
                Ok(a) => a,
                Err(e) => return ReadLine::Failed(e),
            };
            if available.is_empty() {
                return ReadLine::Eof;
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            if self.discarding {
                self.read.consume(take);
                if newline.is_some() {
                    self.discarding = false;
                }
                continue;
            }
            if self.line.len() + take > self.max_line_bytes {
                let mut head = std::mem::take(&mut self.line);
                if head.len() < self.head_bytes {
                    head.extend_from_slice(&available[..take.min(self.head_bytes)]);
                }
                head.truncate(self.head_bytes);
                self.read.consume(take);
                self.discarding = newline.is_none();
                return ReadLine::Oversized { head };
            }
            self.line.extend_from_slice(&available[..take]);
            self.read.consume(take);
            if newline.is_some() {
                return ReadLine::Line;
            }
        }
    }

    /// The line just read, without its line ending and byte order mark;
    /// `None` when it is blank.
    pub(crate) fn line(&self) -> Option<&[u8]> {
        let mut line = self.line.as_slice();
        line = line.strip_suffix(b"\n").unwrap_or(line);
        line = line.strip_suffix(b"\r").unwrap_or(line);
        line = line.strip_prefix(BOM).unwrap_or(line);
        (!line.iter().all(u8::is_ascii_whitespace)).then_some(line)
    }

    /// Forgets the line just read (giving back the memory of a big one).
    pub(crate) fn clear(&mut self) {
        self.line.clear();
        if self.line.capacity() > KEEP_CAPACITY {
            self.line = Vec::new();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_oversized_line_keeps_its_head_and_the_next_line_reads() {
        let input: &[u8] = b"\xEF\xBB\xBF{\"a\":1}\r\n0123456789abcdef\n  \n{\"b\":2}";
        let mut r = LineReader::new(input, 16, 4);
        assert!(matches!(r.read_line().await, ReadLine::Line));
        assert_eq!(r.line(), Some(&b"{\"a\":1}"[..]));
        r.clear();
        match r.read_line().await {
            ReadLine::Oversized { head } => assert_eq!(head, b"0123"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(r.read_line().await, ReadLine::Line));
        assert_eq!(r.line(), None);
        r.clear();
        // A last line without a newline is not a message.
        assert!(matches!(r.read_line().await, ReadLine::Eof));
    }

    #[tokio::test]
    async fn without_head_bytes_an_oversized_line_keeps_nothing() {
        let input: &[u8] = b"0123456789abcdef\nok\n";
        let mut r = LineReader::new(input, 10, 0);
        match r.read_line().await {
            ReadLine::Oversized { head } => assert!(head.is_empty()),
            other => panic!("{other:?}"),
        }
        assert!(matches!(r.read_line().await, ReadLine::Line));
        assert_eq!(r.line(), Some(&b"ok"[..]));
    }
}
