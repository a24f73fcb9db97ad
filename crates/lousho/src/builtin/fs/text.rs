//! Turning file bytes into text a model can read.

use std::borrow::Cow;

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
/// saying how much was left out.
pub(crate) fn push_cut(out: &mut String, line: &str, max_chars: usize) {
    if line.len() <= max_chars {
        out.push_str(line);
        return;
    }
    match line.char_indices().nth(max_chars) {
        None => out.push_str(line),
        Some((cut, _)) => {
            let rest = line[cut..].chars().count();
            out.push_str(&line[..cut]);
            out.push_str(&format!(" … [line cut: {rest} more characters]"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_long_lines_on_char_boundaries() {
        let mut out = String::new();
        push_cut(&mut out, "héllo wörld", 4);
        assert_eq!(out, "héll … [line cut: 7 more characters]");
        let mut out = String::new();
        push_cut(&mut out, "short", 10);
        assert_eq!(out, "short");
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
