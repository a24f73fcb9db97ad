//! The system prompt's section that names the skills: one line each, name
//! and description, and how to load them.

use super::{SKILL_DESCRIPTION_MAX_CHARS, SkillInfo};
use std::fmt::Write as _;

/// The section for `skills`, or `None` without any.
pub(super) fn section(skills: &[SkillInfo]) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let mut out = String::from(
        "## Skills\n\n\
         Skills are instructions and files for particular tasks. When a task fits a skill's \
         description, call `load_skill` with its name before you start, follow its instructions, \
         and read the files they mention with `read_skill_file`.\n\n",
    );
    for skill in skills {
        let _ = writeln!(out, "- {}: {}", skill.name, one_line(&skill.description));
    }
    Some(out)
}

/// `text` on one line (runs of whitespace made one space), at most the
/// description limit.
fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, word) in text.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(word);
    }
    match out.char_indices().nth(SKILL_DESCRIPTION_MAX_CHARS) {
        Some((at, _)) => out[..at].to_owned(),
        None => out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_each_skill_on_one_line() {
        let s = section(&[SkillInfo::new("a", "does\n  a things")]).unwrap();
        assert!(s.contains("- a: does a things\n"), "{s}");
        assert!(section(&[]).is_none());
    }
}
