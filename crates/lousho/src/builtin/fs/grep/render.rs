//! What the model sees from a search: `path:line:text` lines and notes.

use super::sink::Hit;
use super::{Found, HARD_LIMIT};
use std::fmt::Write as _;

/// Renders the first `max_results` matching lines (files in path order) and
/// the closing notes.
pub(crate) fn render(found: &Found, pattern: &str, base: &str, max_results: usize) -> String {
    let mut out = String::new();
    let total: usize = found.files.iter().map(|f| f.matches).sum();
    let skipped_binary = match found.binary {
        0 => String::new(),
        1 => "; 1 binary file skipped".to_owned(),
        n => format!("; {n} binary files skipped"),
    };
    if total == 0 {
        let files = plural(found.searched, "file");
        let _ = writeln!(
            out,
            "no matches for `{pattern}` in `{base}` ({files} searched{skipped_binary}; hidden and \
             .gitignore/.ignore'd files are skipped)"
        );
        return out;
    }

    let mut shown = 0usize;
    let mut separate = false;
    'files: for file in &found.files {
        let path = &file.path;
        let has_context = file.hits.iter().any(|h| matches!(h, Hit::Context(..)));
        if separate && has_context {
            out.push_str("--\n");
        }
        separate = has_context;
        for hit in &file.hits {
            match hit {
                Hit::Match(n, text) => {
                    if shown == max_results {
                        break 'files;
                    }
                    shown += 1;
                    let _ = writeln!(out, "{path}:{n}:{text}");
                }
                Hit::Context(n, text) => {
                    let _ = writeln!(out, "{path}-{n}-{text}");
                }
                Hit::Break => out.push_str("--\n"),
            }
        }
    }
    // A context run cut at the cap can leave a dangling separator.
    if out.ends_with("--\n") {
        out.truncate(out.len() - 3);
    }

    let files = plural(found.files.len(), "file");
    if found.stopped_early {
        let _ = writeln!(
            out,
            "[showing {shown} matching lines; the search stopped after {HARD_LIMIT} matches in \
             {files}{skipped_binary}, so these are not necessarily the first in path order; \
             narrow the pattern, or set `path` or `glob`]"
        );
    } else if shown < total {
        let _ = writeln!(
            out,
            "[showing {shown} of {total} matching lines in {files}{skipped_binary}; narrow the \
             pattern, set `path` or `glob`, or raise `max_results`]"
        );
    } else {
        let lines = plural(total, "matching line");
        let _ = writeln!(out, "[{lines} in {files}{skipped_binary}]");
    }
    out
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}
