use super::ToolAnnotations;
use std::fmt;
use std::sync::Arc;

/// A custom approval function: `(bare tool name, annotations) -> ask?`.
pub type CustomApproval = Arc<dyn Fn(&str, &ToolAnnotations) -> bool + Send + Sync>;

/// A tool's approval policy: when a call must be approved by a human first.
///
/// | policy | asks |
/// | --- | --- |
/// | [`Approval::Annotations`] | unless `readOnlyHint: true` or `destructiveHint: false` (MCP's default is destructive, so a tool with no annotations asks) |
/// | [`Approval::Always`] | every call |
/// | [`Approval::Never`] | never |
/// | [`Approval::Custom`] | when the function returns `true` |
///
/// Tools made with [`define_tool`](crate::define_tool) default to `Never`
/// (they are your own code); MCP tools default to `Annotations`.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum Approval {
    /// Decide from the tool's MCP annotations (the default for MCP tools).
    #[default]
    Annotations,
    /// Ask before every call.
    Always,
    /// Never ask.
    Never,
    /// Ask when the function returns `true`; it gets the bare tool name and
    /// its annotations (empty when none were given).
    Custom(CustomApproval),
}

impl Approval {
    /// A custom policy from a function `(name, annotations) -> ask?`.
    pub fn custom(f: impl Fn(&str, &ToolAnnotations) -> bool + Send + Sync + 'static) -> Self {
        Approval::Custom(Arc::new(f))
    }

    /// Whether a call of the tool `name` with `annotations` must be approved.
    pub fn needs_approval(&self, name: &str, annotations: &ToolAnnotations) -> bool {
        match self {
            Approval::Annotations => {
                !(annotations.read_only == Some(true) || annotations.destructive == Some(false))
            }
            Approval::Always => true,
            Approval::Never => false,
            Approval::Custom(f) => f(name, annotations),
        }
    }
}

impl fmt::Debug for Approval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Approval::Annotations => f.write_str("Annotations"),
            Approval::Always => f.write_str("Always"),
            Approval::Never => f.write_str("Never"),
            Approval::Custom(_) => f.write_str("Custom(..)"),
        }
    }
}

/// A string that is not an approval policy.
#[derive(Debug, Clone, thiserror::Error)]
#[error("`{0}` is not an approval policy; use \"annotations\", \"always\" or \"never\"")]
pub struct ParseApprovalError(String);

/// Reads the policies a spec file can name: `annotations`, `always`, `never`
/// (a custom function exists only in code).
impl std::str::FromStr for Approval {
    type Err = ParseApprovalError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "annotations" => Ok(Approval::Annotations),
            "always" => Ok(Approval::Always),
            "never" => Ok(Approval::Never),
            other => Err(ParseApprovalError(other.to_owned())),
        }
    }
}

/// `annotations`, `always`, `never` or `custom`.
impl fmt::Display for Approval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Approval::Annotations => "annotations",
            Approval::Always => "always",
            Approval::Never => "never",
            Approval::Custom(_) => "custom",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_file_strings_parse_and_print() {
        for s in ["annotations", "always", "never"] {
            assert_eq!(s.parse::<Approval>().unwrap().to_string(), s);
        }
        assert!(
            "sometimes"
                .parse::<Approval>()
                .unwrap_err()
                .to_string()
                .contains("sometimes")
        );
    }
}
