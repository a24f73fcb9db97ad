//! When a tool call may run: permission rules, the `can_use_tool` callback,
//! approval policies and asking a human.
//!
//! # The decision order
//!
//! Every tool call the model makes goes through these steps, in order; the
//! first step that decides, decides. This is the one place the order is
//! written down (`docs/approvals.md` shows it with examples), and
//! [`decide_call`] is the one place it is coded: the run loop, `lousho tools`
//! and `serve_mcp` all decide through it.
//!
//! 0. **Pins** ([`Pins`], a lock file next to a spec). A tool of a server
//!    with `pin: enforce` whose definition is new or changed since pinned
//!    is denied (reason `pin`, the message says what changed and to run
//!    `lousho pin`), whatever the rules say; it is not offered to the model
//!    either. `warn` and `off` decide nothing here.
//! 1. **Permission rules** ([`Permissions`], set with
//!    [`AgentBuilder::permissions`](crate::AgentBuilder::permissions)).
//!    Each rule matches the tool's full name as the model sees it (MCP tools:
//!    `<server>__<tool>`, or `mcp__<server>__<tool>`), exactly or by glob
//!    (`docs__*`). When several rules match, the strongest wins:
//!    **deny > ask > allow**, whatever order they were added in.
//!    `deny` → the call is denied; `ask` → step 4; `allow` → the call runs.
//!    A tool a deny rule matches is not even offered to the model: it is
//!    left out of every request's tool list ([`offered_to_model`]), and a
//!    call by name still gets the rule's denial.
//! 2. **The `can_use_tool` callback** ([`Permissions::can_use_tool`]), only
//!    for calls no rule matched. It sees the tool name and the input and
//!    answers [`PermissionResult`]: `Allow` → runs, `Deny { message }` →
//!    denied with that message, `Ask` → step 4, `UsePolicy` → step 3. A
//!    callback that panics denies.
//! 3. **The tool's approval policy** ([`Approval`] on its
//!    [`ToolSpec`](crate::tool::ToolSpec)): `Annotations` (the default for MCP
//!    tools) runs a tool with `readOnlyHint: true` or `destructiveHint: false`
//!    and asks for everything else — a tool with no annotations asks, because
//!    MCP's default is destructive; `Always` asks; `Never` runs (the default
//!    for [`define_tool`](crate::define_tool) tools); `Custom(f)` asks when
//!    `f(name, annotations)` is true. A tool whose server is not trusted
//!    ([`Trust::None`]) is decided as if it had no annotations: under
//!    `Annotations` it asks (reason `untrusted`).
//! 4. **Ask.** The agent's approval handler
//!    ([`AgentBuilder::approval_handler`](crate::AgentBuilder::approval_handler))
//!    gets an [`ApprovalRequest`] and answers [`ApprovalDecision`]: approve →
//!    runs, deny → denied with the reason. With **no handler the run
//!    pauses**: the reply's status is
//!    [`RunStatus::Interrupted`](crate::agent::RunStatus::Interrupted), it lists
//!    the pending calls, and its [`RunState`](crate::RunState) (JSON) is
//!    resumed with [`Agent::resume`](crate::Agent::resume) and
//!    [`Decisions`]. A pending call without an answer, or with a malformed
//!    one, is denied (fail closed). Streams emit
//!    [`AgentEvent::ApprovalRequested`](crate::AgentEvent::ApprovalRequested)
//!    for every question, handler or not.
//!
//! A denied call (by rule, callback or human) does not run: the model gets
//! an error result (`is_error: true`) with the reason and the run goes on.
//!
//! Within one turn, the calls that may run run first (concurrently), then
//! the run pauses for the rest; resuming runs only the calls that were
//! pending, so nothing runs twice.
//!
//! [`Agent::tool_decision`](crate::Agent::tool_decision) gives steps 1 and 3
//! for a tool without a call (no input, so no callback): what an MCP server
//! advertises and what `lousho tools` prints.

mod ask;
mod decision;
mod permission;
mod pins;
mod remember;

pub use crate::tool::trust::Trust;
/// The approval policy lives with the tool types; it is used here.
#[doc(inline)]
pub use crate::tool::{Approval, CustomApproval, ParseApprovalError};
pub use ask::{ApprovalDecision, ApprovalHandler, ApprovalRequest, Decisions, approval_handler};
pub(crate) use decision::rule_denial;
pub use decision::{
    CallDecision, Decision, DecisionReason, ParseDecisionReasonError, ToolDecision, decide_call,
    offered_to_model, policy_decision, tool_decision,
};
pub use permission::{
    CanUseTool, CompiledPermissions, PermissionError, PermissionResult, PermissionRule,
    Permissions, RuleDecision,
};
pub use pins::{
    LOCK_FILE_VERSION, PinMode, PinState, PinnedTool, Pins, PinsError, ServerPins, ToolDrift,
    ToolPin, lock_path,
};
pub use remember::{ApprovalKey, RememberedApprovals};
