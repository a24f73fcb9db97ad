//! Turning file bytes into text a model can read.

use std::borrow::Cow;
use std::io::{self, BufRead};

/// Removes a trailing `\n` or `\r\n`.
pub(crate) fn trim_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The bytes as text; invalid UTF-8 becomes U+FFFD. The flag says whether
/// anything was replaced.
pub(crate) fn decode(bytes: &[u8]) -> (Cow<'_, str>, bool) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (Cow::Borrowed(s), false),
        Err(_) => (String::from_utf8_lossy(bytes), true),
    }
}

/// Appends `line` to `out`, cut after `max_chars` characters with a note
/// saying how much was left out (`dropped` more characters were never read).
pub(crate) fn push_cut(out: &mut String, line: &str, max_chars: usize, dropped: usize) {
    let cut = if line.len() <= max_chars {
        None
    } else {
        line.char_indices().nth(max_chars).map(|(at, _)| at)
    };
    let (shown, rest) = match cut {
        Some(at) => (&line[..at], line[at..].chars().count() + dropped),
        None => (line, dropped),
    };
    out.push_str(shown);
    if rest > 0 {
        out.push_str(&format!(" … [line cut: {rest} more characters]"));
    }
}

/// Reads one line (through its `\n`) into `buf`, keeping at most `keep`
/// bytes so a huge line cannot fill memory. Returns the bytes consumed (0 at
/// the end) and how many characters were dropped.
pub(crate) fn read_line_capped(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    keep: usize,
) -> io::Result<(usize, usize)> {
    let mut consumed = 0;
    let mut dropped = 0;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        let (part, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..=i], true),
            None => (chunk, false),
        };
        let take = keep.saturating_sub(buf.len()).min(part.len());
        buf.extend_from_slice(&part[..take]);
        // Characters start at every byte that is not a UTF-8 continuation.
        dropped += part[take..]
            .iter()
            .filter(|&&b| b & 0xC0 != 0x80 && b != b'\n' && b != b'\r')
            .count();
        let len = part.len();
        consumed += len;
        reader.consume(len);
        if done {
            break;
        }
    }
    if dropped > 0 {
        // Do not leave half a character at the cut.
        if let Err(e) = std::str::from_utf8(buf)
            && e.error_len().is_none()
        {
            buf.truncate(e.valid_up_to());
            dropped += 1;
        }
    }
    Ok((consumed, dropped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_long_lines_on_char_boundaries() {
        let mut out = String::new();
        push_cut(&mut out, "héllo wörld", 4, 0);
        assert_eq!(out, "héll … [line cut: 7 more characters]");
        let mut out = String::new();
        push_cut(&mut out, "short", 10, 0);
        assert_eq!(out, "short");
        let mut out = String::new();
        push_cut(&mut out, "héllo", 10, 3);
        assert_eq!(out, "héllo … [line cut: 3 more characters]");
    }

    #[test]
    fn reads_long_lines_keeping_only_the_start() {
        let data = "ab\u{e9}cd\r\nnext\n".as_bytes();
        let mut reader = std::io::BufReader::with_capacity(2, data);
        let mut buf = Vec::new();
        // Keeping 3 bytes would split `é`: it is dropped whole.
        assert_eq!(read_line_capped(&mut reader, &mut buf, 3).unwrap(), (8, 3));
        assert_eq!(buf, b"ab");
        buf.clear();
        assert_eq!(
            read_line_capped(&mut reader, &mut buf, 100).unwrap(),
            (5, 0)
        );
        assert_eq!(buf, b"next\n");
        buf.clear();
        assert_eq!(
            read_line_capped(&mut reader, &mut buf, 100).unwrap(),
            (0, 0)
        );
    }

    #[test]
    fn decodes_invalid_utf8_with_a_flag() {
        assert_eq!(decode(b"ok"), (Cow::Borrowed("ok"), false));
        let (text, bad) = decode(b"a\xffb");
        assert!(bad);
        assert_eq!(text, "a\u{fffd}b");
        assert_eq!(trim_line_end(b"x\r\n"), b"x");
    }
}
