//! `read_file {path, offset?, limit?}`: a text file with line numbers.

use super::text::{decode, push_cut, read_line_capped, trim_line_end};
use super::{FsToolError, Workspace, run_blocking};
use crate::tool::{DefinedTool, ToolContext, ToolOrigin, ToolOutput, define_tool_with_context};
use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};

const DESCRIPTION: &str = "Read a text file in the workspace. Returns its lines numbered from 1 \
(`cat -n` style: number, tab, text). Long files come in pages: pass `offset` (the first line to \
show) and `limit` (how many lines) to read further; a note at the end says when lines were left \
out and which offset to use next. Binary files are refused.";

/// `read_file`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadFileInput {
    /// The file to read, relative to the workspace root.
    #[schemars(example = "README.md")]
    path: String,
    /// The first line to show, counting from 1 (default 1).
    #[schemars(range(min = 1))]
    offset: Option<u64>,
    /// How many lines to show (default and maximum: 2000).
    #[schemars(range(min = 1), example = 200)]
    limit: Option<u64>,
}

/// The `read_file` tool bound to `workspace`.
pub fn read_file_tool(workspace: &Workspace) -> DefinedTool {
    let ws = workspace.clone();
    define_tool_with_context(
        "read_file",
        DESCRIPTION,
        move |input: ReadFileInput, ctx: ToolContext| {
            let ws = ws.clone();
            async move { run_blocking(&ctx.cancel, move |_| read_file(&ws, &input)).await }
        },
    )
    .read_only()
    .origin(ToolOrigin::Builtin)
}

/// How many bytes are checked for NUL before reading (as git does).
const SNIFF_BYTES: usize = 8 * 1024;

fn read_file(ws: &Workspace, input: &ReadFileInput) -> Result<ToolOutput, FsToolError> {
    let resolved = ws.resolve_path(&input.path)?;
    let path = resolved.display;
    let owned = path.clone();
    let io_err = move |source| FsToolError::Io {
        path: owned.clone(),
        source,
    };
    if resolved.real.is_dir() {
        return Err(FsToolError::IsADirectory { path });
    }
    // Beneath the root, no symlink on the way, a FIFO never blocks.
    let file = ws
        .open_file(&resolved.real)
        .map_err(|e| e.into_tool_error(&input.path, &path))?;
    let limits = ws.limits();
    let mut reader = BufReader::with_capacity(64 * 1024, file);

    let (binary, bom) = {
        let head = reader.fill_buf().map_err(&io_err)?;
        (
            binary_reason(&head[..head.len().min(SNIFF_BYTES)]),
            head.starts_with(b"\xEF\xBB\xBF"),
        )
    };
    if let Some(reason) = binary {
        return Err(FsToolError::Binary { path, reason });
    }
    if bom {
        reader.consume(3);
    }

    let offset = input.offset.unwrap_or(1).max(1);
    let max_lines = input.limit.map_or(limits.read_lines, |l| {
        usize::try_from(l)
            .unwrap_or(usize::MAX)
            .clamp(1, limits.read_lines)
    });
    let mut out = String::new();
    let mut line = Vec::new();
    let mut number: u64 = 0;
    let mut shown = 0usize;
    let mut invalid_utf8 = false;
    let mut cut_by_bytes = false;
    loop {
        line.clear();
        let keep = limits.read_line_chars.saturating_mul(4).saturating_add(4);
        let (n, dropped) = read_line_capped(&mut reader, &mut line, keep).map_err(&io_err)?;
        if n == 0 {
            break;
        }
        number += 1;
        if number < offset {
            continue;
        }
        if shown == max_lines {
            // This line was read but is not shown; the rest are counted.
            // Count what is left without keeping it.
            number += count_lines(&mut reader).map_err(&io_err)?;
            break;
        }
        if let Some(at) = line.iter().position(|&b| b == 0) {
            return Err(FsToolError::Binary {
                path,
                reason: format!("a NUL byte on line {number}, column {}", at + 1),
            });
        }
        let (text, bad) = decode(trim_line_end(&line));
        invalid_utf8 |= bad;
        let start = out.len();
        let _ = write!(out, "{number:>6}\t");
        push_cut(&mut out, &text, limits.read_line_chars, dropped);
        out.push('\n');
        if out.len() > limits.read_bytes && shown > 0 {
            out.truncate(start);
            cut_by_bytes = true;
            number += count_lines(&mut reader).map_err(&io_err)?;
            break;
        }
        shown += 1;
    }
    let total = number;

    if total == 0 {
        return Ok(ToolOutput::text(format!("(`{path}` is empty)")));
    }
    if offset > total {
        return Err(FsToolError::OffsetPastEnd {
            path,
            offset,
            lines: total,
        });
    }
    let last = offset + shown as u64 - 1;
    if last < total {
        let why = if cut_by_bytes {
            format!("output capped at {} KiB", limits.read_bytes / 1024)
        } else if input.limit.is_some_and(|l| l < limits.read_lines as u64) {
            format!("`limit` {max_lines}")
        } else {
            format!("at most {max_lines} lines per call")
        };
        let _ = writeln!(
            out,
            "[showing lines {offset}-{last} of {total} ({why}); call read_file with offset {} to read on]",
            last + 1
        );
    }
    if invalid_utf8 {
        out.push_str("[the file is not valid UTF-8; invalid bytes are shown as \u{FFFD}]\n");
    }
    Ok(ToolOutput::text(out))
}

/// Why the start of a file looks binary, if it does.
pub(crate) fn binary_reason(head: &[u8]) -> Option<String> {
    if head.starts_with(b"\xFF\xFE") || head.starts_with(b"\xFE\xFF") {
        return Some("it starts with a UTF-16 byte order mark; only UTF-8 text is read".to_owned());
    }
    head.iter()
        .position(|&b| b == 0)
        .map(|at| format!("a NUL byte at offset {at}"))
}

/// Counts the lines left in `reader` (a last line without a newline counts).
fn count_lines(reader: &mut impl BufRead) -> std::io::Result<u64> {
    let mut lines = 0u64;
    let mut last = None;
    loop {
        let buf = reader.fill_buf()?;
        let Some(&end) = buf.last() else { break };
        lines += buf.iter().filter(|&&b| b == b'\n').count() as u64;
        last = Some(end);
        let len = buf.len();
        reader.consume(len);
    }
    Ok(lines + u64::from(last.is_some_and(|b| b != b'\n')))
}
