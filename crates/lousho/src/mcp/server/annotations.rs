//! What `tools/list` advertises: which tools are exposed, their annotations,
//! and how lousho's tool types become rmcp's.
//!
//! The agent decides ([`Agent::decision_for`], the one decision order:
//! permission rules, then each tool's approval policy), exactly as for a
//! model's call.

use crate::Agent;
use crate::policy::Decision;
use crate::tool::{Tool, ToolAnnotations, ToolSet, ToolSpec};
use rmcp::model as m;
use serde_json::{Map, Value};
use std::sync::Arc;

/// What a call of `tool` gets before any input is seen: the agent's
/// permission rules, then the tool's approval policy.
pub(crate) fn decision(agent: &Agent, tool: &dyn Tool) -> Decision {
    agent.decision_for(tool.spec()).decision
}

/// Whether `tool` is exposed directly: `Run` tools; `Ask` tools only with
/// `ServeApprovals::Elicit` or `Allow` (`expose_ask`); `Deny` tools never.
pub(crate) fn is_exposed(agent: &Agent, tool: &dyn Tool, expose_ask: bool) -> bool {
    match decision(agent, tool) {
        Decision::Run => true,
        Decision::Ask => expose_ask,
        Decision::Deny => false,
    }
}

/// The annotations advertised for a tool: one that does not simply run
/// (needs approval) → `readOnlyHint: false, destructiveHint: true` (other
/// hints kept); otherwise its own hints verbatim; none set → none sent.
pub(crate) fn advertised(agent: &Agent, tool: &dyn Tool) -> Option<ToolAnnotations> {
    let own = &tool.spec().annotations;
    if decision(agent, tool) != Decision::Run {
        return Some(own.clone().read_only(false).destructive(true));
    }
    if own.is_empty() {
        None
    } else {
        Some(own.clone())
    }
}

/// The agent tool's annotations, from what it can reach (tools its rules
/// deny are out of reach): read-only when every reachable tool is advertised
/// read-only (and so runs without approval); otherwise `readOnlyHint: false`,
/// with `destructiveHint` true when any reachable tool may be destructive.
/// `reachable: None` means some tools are unknown (a tool source did not get
/// ready): assume the worst.
pub(crate) fn agent_tool_annotations(
    agent: &Agent,
    reachable: Option<&ToolSet>,
) -> ToolAnnotations {
    let Some(tools) = reachable else {
        return ToolAnnotations::new().read_only(false).destructive(true);
    };
    let advertised: Vec<Option<ToolAnnotations>> = tools
        .iter()
        .filter(|t| decision(agent, t.as_ref()) != Decision::Deny)
        .map(|t| advertised(agent, t.as_ref()))
        .collect();
    let read_only =
        |a: &Option<ToolAnnotations>| a.as_ref().is_some_and(|a| a.read_only == Some(true));
    if advertised.iter().all(read_only) {
        return ToolAnnotations::read_only_tool();
    }
    let destructive = advertised
        .iter()
        .filter(|a| !read_only(a))
        .any(|a| a.as_ref().is_none_or(ToolAnnotations::is_destructive));
    ToolAnnotations::new()
        .read_only(false)
        .destructive(destructive)
}

/// Converts our annotations to rmcp's.
pub(crate) fn to_rmcp_annotations(a: &ToolAnnotations) -> m::ToolAnnotations {
    m::ToolAnnotations::from_raw(
        a.title.clone(),
        a.read_only,
        a.destructive,
        a.idempotent,
        a.open_world,
    )
}

/// The `tools/list` entry for a lousho tool.
pub(crate) fn to_rmcp_tool(agent: &Agent, tool: &dyn Tool) -> m::Tool {
    let spec = tool.spec();
    let mut out = m::Tool::new(
        spec.name.clone(),
        spec.description.clone(),
        schema_object(spec),
    );
    if let Some(title) = &spec.display_name {
        out = out.with_title(title.clone());
    }
    out.icons = super::catalog::wire::icons(&spec.icons);
    if let Some(Value::Object(schema)) = &spec.output_schema {
        out = out.with_raw_output_schema(Arc::new(schema.clone()));
    }
    if let Some(a) = advertised(agent, tool) {
        out = out.with_annotations(to_rmcp_annotations(&a));
    }
    out
}

fn schema_object(spec: &ToolSpec) -> Arc<Map<String, Value>> {
    match &spec.input_schema {
        Value::Object(o) => Arc::new(o.clone()),
        _ => {
            let mut o = Map::new();
            o.insert("type".into(), Value::String("object".into()));
            Arc::new(o)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::define_tool;
    use crate::policy::Permissions;

    fn tool(name: &str) -> crate::tool::DefinedTool {
        define_tool(name, "d", |_: Value| async { "x" })
    }

    fn none() -> Agent {
        with(Permissions::new())
    }

    fn with(permissions: Permissions) -> Agent {
        Agent::builder()
            .model("test")
            .permissions(permissions)
            .build()
            .unwrap()
    }

    #[test]
    fn needs_approval_is_never_read_only_and_keeps_other_hints() {
        let t = tool("rm")
            .annotations(ToolAnnotations::read_only_tool().title("Remove"))
            .needs_approval(true);
        let a = advertised(&none(), &t).unwrap();
        assert_eq!(a.read_only, Some(false));
        assert_eq!(a.destructive, Some(true));
        assert_eq!(a.title.as_deref(), Some("Remove"));
    }

    #[test]
    fn hints_go_out_verbatim_and_none_means_none() {
        let t = tool("look").annotations(ToolAnnotations::new().idempotent(true));
        assert_eq!(
            advertised(&none(), &t),
            Some(ToolAnnotations::new().idempotent(true))
        );
        assert_eq!(
            advertised(&none(), &tool("plain").read_only()).map(|a| a.read_only),
            Some(Some(true))
        );
    }

    #[test]
    fn permission_rules_decide_exposure_and_annotations() {
        let rules = with(Permissions::new().allow("plain").ask("look").deny("gone"));
        // Needs approval by itself; an allow rule exposes it as it is.
        let plain = tool("plain").needs_approval(true);
        assert!(!is_exposed(&none(), &plain, false));
        assert!(is_exposed(&rules, &plain, false));
        assert_eq!(advertised(&rules, &plain), None);
        // Read-only, but a rule says ask: hidden, and never advertised read-only.
        let look = tool("look").read_only();
        assert!(is_exposed(&none(), &look, false));
        assert!(!is_exposed(&rules, &look, false));
        assert!(is_exposed(&rules, &look, true));
        assert_eq!(advertised(&rules, &look).unwrap().read_only, Some(false));
        // Denied: never exposed, not even with `approvals: allow`.
        let gone = tool("gone").read_only();
        assert!(!is_exposed(&rules, &gone, true));
    }

    #[test]
    fn agent_tool_is_read_only_only_when_every_tool_is() {
        let mut set = ToolSet::new();
        assert_eq!(
            agent_tool_annotations(&none(), Some(&set)),
            ToolAnnotations::read_only_tool()
        );
        set.insert(Arc::new(tool("a").read_only())).unwrap();
        assert_eq!(
            agent_tool_annotations(&none(), Some(&set)),
            ToolAnnotations::read_only_tool()
        );
        set.insert(Arc::new(
            tool("b").annotations(ToolAnnotations::new().destructive(false)),
        ))
        .unwrap();
        let a = agent_tool_annotations(&none(), Some(&set));
        assert_eq!((a.read_only, a.destructive), (Some(false), Some(false)));
        set.insert(Arc::new(tool("c").needs_approval(true)))
            .unwrap();
        let a = agent_tool_annotations(&none(), Some(&set));
        assert_eq!((a.read_only, a.destructive), (Some(false), Some(true)));
        assert_eq!(agent_tool_annotations(&none(), None).read_only, Some(false));
        // Tools the rules deny are out of the agent's reach.
        let deny_bc = with(Permissions::new().deny("b").deny("c"));
        assert_eq!(
            agent_tool_annotations(&deny_bc, Some(&set)),
            ToolAnnotations::read_only_tool()
        );
        // A rule that makes a read-only tool ask makes the agent not read-only.
        let ask_a = with(Permissions::new().ask("a").deny("b").deny("c"));
        let a = agent_tool_annotations(&ask_a, Some(&set));
        assert_eq!((a.read_only, a.destructive), (Some(false), Some(true)));
    }
}
