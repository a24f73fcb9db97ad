//! A `SKILL.md`'s front matter: the YAML between the first two `---` lines,
//! with the `name` and `description` the Agent Skills format requires.

use super::SKILL_DESCRIPTION_MAX_CHARS;
use serde::Deserialize;

/// The front matter of a `SKILL.md` is missing or breaks the format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillFrontMatterError {
    /// The file does not start with a `---` line closed by another.
    #[error(
        "SKILL.md must start with YAML front matter between two `---` lines, holding `name` and `description`"
    )]
    Missing,
    /// The YAML does not parse or lacks a field.
    #[error("the front matter is not valid: {0}")]
    Yaml(String),
    /// The name breaks the format's rule.
    #[error(
        "the name `{0}` is not valid: use 1-64 characters of a-z, 0-9 and single inner hyphens"
    )]
    Name(String),
    /// The description is empty or too long.
    #[error("the description must be 1 to {SKILL_DESCRIPTION_MAX_CHARS} characters")]
    Description,
}

#[derive(Deserialize)]
struct FrontMatter {
    name: String,
    description: String,
}

/// The `name` and `description` of a `SKILL.md`'s front matter, checked:
/// the name 1-64 characters of `a-z`, `0-9` and single inner hyphens, the
/// description 1-1024 characters. Other fields are allowed and ignored.
pub fn parse_front_matter(text: &str) -> Result<(String, String), SkillFrontMatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().ok_or(SkillFrontMatterError::Missing)?;
    if first.trim_end() != "---" {
        return Err(SkillFrontMatterError::Missing);
    }
    let mut yaml = String::new();
    let mut closed = false;
    for line in lines {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        yaml.push_str(line);
    }
    if !closed {
        return Err(SkillFrontMatterError::Missing);
    }
    let fm: FrontMatter =
        yaml_serde::from_str(&yaml).map_err(|e| SkillFrontMatterError::Yaml(e.to_string()))?;
    if !is_valid_name(&fm.name) {
        return Err(SkillFrontMatterError::Name(fm.name));
    }
    let description = fm.description.trim();
    if description.is_empty() || description.chars().count() > SKILL_DESCRIPTION_MAX_CHARS {
        return Err(SkillFrontMatterError::Description);
    }
    Ok((fm.name, description.to_owned()))
}

/// 1-64 characters of `a-z`, `0-9` and hyphens, no hyphen first, last or
/// twice in a row.
pub(crate) fn is_valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_name_and_description() {
        let text = "---\nname: pdf-forms\ndescription: >\n  Fill in PDF\n  forms.\nlicense: MIT\n---\n# Body\n";
        assert_eq!(
            parse_front_matter(text).unwrap(),
            ("pdf-forms".into(), "Fill in PDF forms.".into())
        );
    }

    #[test]
    fn refuses_what_breaks_the_format() {
        for (text, want) in [
            ("# no front matter", SkillFrontMatterError::Missing),
            ("---\nname: a\n", SkillFrontMatterError::Missing),
            (
                "---\nname: Bad_Name\ndescription: x\n---\n",
                SkillFrontMatterError::Name("Bad_Name".into()),
            ),
            (
                "---\nname: ok\ndescription: \"\"\n---\n",
                SkillFrontMatterError::Description,
            ),
        ] {
            assert_eq!(parse_front_matter(text).unwrap_err(), want, "{text}");
        }
        assert!(matches!(
            parse_front_matter("---\nname: ok\n---\n"),
            Err(SkillFrontMatterError::Yaml(_))
        ));
    }
}
