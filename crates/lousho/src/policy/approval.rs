use crate::tool::ToolAnnotations;
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
