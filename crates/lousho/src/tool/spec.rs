use super::pin::ToolPin;
use super::trust::Trust;
use super::{Approval, ToolAnnotations, ToolOrigin};
use serde_json::{Map, Value};

/// Everything about a tool except its code: what the model and MCP clients see,
/// and how calls are gated.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolSpec {
    /// The name the model calls it by (`^[a-zA-Z0-9_-]{1,64}$`).
    pub name: String,
    /// A human-friendly name (an MCP tool's `title`).
    pub display_name: Option<String>,
    /// What the tool does, for the model.
    pub description: String,
    /// Icons clients may show next to it (an MCP tool's `icons`).
    pub icons: Vec<super::Icon>,
    /// JSON Schema (2020-12) of the input; the root is an object.
    pub input_schema: Value,
    /// JSON Schema of the structured output, if the tool declares one.
    pub output_schema: Option<Value>,
    /// MCP-shaped hints.
    pub annotations: ToolAnnotations,
    /// When a call must be approved.
    pub approval: Approval,
    /// Where the tool comes from (your code, a built-in, an MCP server).
    pub origin: ToolOrigin,
    /// Whether its annotations count for decisions (an MCP server's
    /// `trust`; [`Trust::Annotations`] by default).
    pub trust: Trust,
    /// An MCP tool's definition fingerprint (SHA-256 of its canonical JSON,
    /// [`ToolFingerprint`](crate::mcp::ToolFingerprint)); remembered
    /// approvals are keyed by it, so a changed definition asks again.
    pub fingerprint: Option<String>,
    /// An MCP tool's server, as the digest of its
    /// [`ServerIdentity`](crate::mcp::ServerIdentity) (no secret in it).
    pub server_identity: Option<String>,
    /// An MCP tool's definition compared with its pin, when its server
    /// compares (`pin: warn | enforce`). Under `enforce` a new or changed
    /// tool is not offered to the model and its calls are denied.
    pub pin: Option<ToolPin>,
    /// Free metadata (MCP tools keep their raw annotations under
    /// `mcp.annotations`).
    pub metadata: Map<String, Value>,
    /// Whether the tool is held back from requests while tool search is
    /// active (`None`: MCP tools are, others not; see
    /// [`ToolSearch`](crate::tool::search::ToolSearch)).
    pub defer: Option<bool>,
    /// Whether `serve_mcp` runs its calls as tasks for clients with the
    /// tasks extension (SEP-2663; default false): for long tools, which
    /// would otherwise outlive the clients' request timeouts.
    pub serve_as_task: bool,
}

impl ToolSpec {
    /// A spec with a name, a description and an input schema; no annotations,
    /// [`Approval::Never`], [`ToolOrigin::Local`], no metadata.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        Self {
            name: name.into(),
            display_name: None,
            description: description.into(),
            icons: Vec::new(),
            input_schema,
            output_schema: None,
            annotations: ToolAnnotations::default(),
            approval: Approval::Never,
            origin: ToolOrigin::Local,
            trust: Trust::Annotations,
            fingerprint: None,
            server_identity: None,
            pin: None,
            metadata: Map::new(),
            defer: None,
            serve_as_task: false,
        }
    }

    /// Sets the display name.
    #[must_use]
    pub fn display_name(mut self, display_name: impl Into<String>) -> Self {
        self.display_name = Some(display_name.into());
        self
    }

    /// Adds an icon clients may show next to the tool.
    #[must_use]
    pub fn icon(mut self, icon: super::Icon) -> Self {
        self.icons.push(icon);
        self
    }

    /// Sets the output schema.
    #[must_use]
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Sets the annotations; a `title` also becomes the display name when none is set.
    #[must_use]
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        if self.display_name.is_none() {
            self.display_name.clone_from(&annotations.title);
        }
        self.annotations = annotations;
        self
    }

    /// Sets the approval policy.
    #[must_use]
    pub fn approval(mut self, approval: Approval) -> Self {
        self.approval = approval;
        self
    }

    /// Sets where the tool comes from.
    #[must_use]
    pub fn origin(mut self, origin: ToolOrigin) -> Self {
        self.origin = origin;
        self
    }

    /// Sets whether its annotations count for decisions.
    #[must_use]
    pub fn trust(mut self, trust: Trust) -> Self {
        self.trust = trust;
        self
    }

    /// Whether the tool is held back by its pin (`enforce`, new or
    /// changed): not offered to the model, its calls denied.
    pub fn is_held_back(&self) -> bool {
        self.pin.as_ref().is_some_and(ToolPin::blocks)
    }

    /// Whether the tool is held back while tool search is active (see
    /// [`ToolSearch`](crate::tool::search::ToolSearch)).
    #[must_use]
    pub fn defer(mut self, defer: bool) -> Self {
        self.defer = Some(defer);
        self
    }

    /// Runs its calls as tasks when served to clients with the tasks
    /// extension (see [`ToolSpec::serve_as_task`]).
    #[must_use]
    pub fn serve_as_task(mut self, as_task: bool) -> Self {
        self.serve_as_task = as_task;
        self
    }

    /// Adds one metadata entry.
    #[must_use]
    pub fn metadata(mut self, key: impl Into<String>, value: Value) -> Self {
        self.metadata.insert(key.into(), value);
        self
    }

    /// Whether a call of this tool needs approval under its own policy
    /// (with [`Trust::None`] the policy sees no annotations).
    pub fn needs_approval(&self) -> bool {
        self.approval
            .needs_approval(&self.name, self.decision_annotations())
    }

    /// The annotations the approval policy decides with: the tool's own, or
    /// none when its [`trust`](Self::trust) is [`Trust::None`].
    pub fn decision_annotations(&self) -> &ToolAnnotations {
        static NONE: ToolAnnotations = ToolAnnotations {
            title: None,
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
        };
        if self.trust.trusts_annotations() {
            &self.annotations
        } else {
            &NONE
        }
    }

    /// The display name, or the name.
    pub fn title(&self) -> &str {
        self.display_name.as_deref().unwrap_or(&self.name)
    }
}
