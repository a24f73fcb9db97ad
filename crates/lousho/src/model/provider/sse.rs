//! An incremental Server-Sent Events parser (the WHATWG event-stream format).

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field; `None` means the default `message`.
    pub event: Option<String>,
    /// The `data:` lines joined by `\n`.
    pub data: String,
}

/// The stream was not valid UTF-8 or a line grew past the limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseError(pub String);

/// The longest line accepted (a runaway stream is an error, not a memory leak).
const MAX_LINE: usize = 16 * 1024 * 1024;

/// Feeds bytes in, gets complete events out. Handles `\n`, `\r\n` and `\r`
/// line ends, comments, multi-line `data:` and chunks split anywhere (even
/// inside a UTF-8 character).
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    buf: Vec<u8>,
    /// A `\r` ended the last chunk: a `\n` starting the next one belongs to it.
    pending_cr: bool,
    /// Past the start of the stream (where a UTF-8 BOM is skipped).
    started: bool,
    event: Option<String>,
    data: Option<String>,
}

impl SseParser {
    /// Parses `chunk`, appending finished events to `out`.
    pub(crate) fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut chunk = chunk;
        if !self.started && !chunk.is_empty() {
            // A BOM may be split across chunks; wait for three bytes.
            if self.buf.len() + chunk.len() < 3
                && b"\xEF\xBB\xBF".starts_with(&[&self.buf[..], chunk].concat())
            {
                self.buf.extend_from_slice(chunk);
                return Ok(());
            }
            self.started = true;
            let mut joined = std::mem::take(&mut self.buf);
            joined.extend_from_slice(chunk);
            let rest = joined
                .strip_prefix(b"\xEF\xBB\xBF")
                .unwrap_or(&joined)
                .to_vec();
            return self.feed(&rest, out);
        }
        if self.pending_cr {
            self.pending_cr = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        let mut start = 0;
        let mut i = 0;
        while i < chunk.len() {
            let b = chunk[i];
            if b == b'\n' || b == b'\r' {
                self.buf.extend_from_slice(&chunk[start..i]);
                let line = std::mem::take(&mut self.buf);
                self.line(&line, out)?;
                if b == b'\r' {
                    if i + 1 < chunk.len() {
                        if chunk[i + 1] == b'\n' {
                            i += 1;
                        }
                    } else {
                        self.pending_cr = true;
                    }
                }
                start = i + 1;
            }
            i += 1;
        }
        self.buf.extend_from_slice(&chunk[start..]);
        if self.buf.len() > MAX_LINE {
            return Err(SseError(format!(
                "a line of the event stream exceeds {MAX_LINE} bytes"
            )));
        }
        Ok(())
    }

    /// The stream ended: an unterminated last event is dispatched (servers
    /// that close right after the last `data:` line lose nothing).
    pub(crate) fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if !self.buf.is_empty() {
            let line = std::mem::take(&mut self.buf);
            self.line(&line, out)?;
        }
        self.dispatch(out);
        Ok(())
    }

    fn line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        let line = std::str::from_utf8(line)
            .map_err(|e| SseError(format!("the event stream is not valid UTF-8: {e}")))?;
        if line.starts_with(':') {
            return Ok(()); // a comment (keep-alive)
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => match &mut self.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            _ => {} // id, retry and unknown fields do not matter here
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if let Some(data) = self.data.take() {
            out.push(SseEvent {
                event: event.filter(|e| !e.is_empty()),
                data,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in_pieces(input: &[u8], piece: usize) -> Vec<SseEvent> {
        let mut p = SseParser::default();
        let mut out = Vec::new();
        for chunk in input.chunks(piece) {
            assert!(p.feed(chunk, &mut out).is_ok());
        }
        assert!(p.finish(&mut out).is_ok());
        out
    }

    #[test]
    fn events_survive_any_chunking_and_line_ending() {
        let input = "\u{feff}event: a\r\ndata: {\"x\":\"é\"}\r\n\r\n: ping\n\ndata: one\ndata: two\n\rdata:three\r\r".as_bytes();
        let expected = vec![
            SseEvent {
                event: Some("a".into()),
                data: "{\"x\":\"é\"}".into(),
            },
            SseEvent {
                event: None,
                data: "one\ntwo".into(),
            },
            SseEvent {
                event: None,
                data: "three".into(),
            },
        ];
        for piece in 1..input.len() {
            assert_eq!(
                parse_in_pieces(input, piece),
                expected,
                "piece size {piece}"
            );
        }
    }

    #[test]
    fn an_unterminated_last_event_is_dispatched_and_bad_utf8_is_an_error() {
        assert_eq!(
            parse_in_pieces(b"data: [DONE]", 4),
            vec![SseEvent {
                event: None,
                data: "[DONE]".into()
            }]
        );
        let mut p = SseParser::default();
        assert!(p.feed(b"data: \xff\xfe\n\n", &mut Vec::new()).is_err());
    }
}
