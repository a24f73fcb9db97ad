//! What `tools/list` advertises: which tools are exposed, their annotations,
//! and how lousho's tool types become rmcp's.

use crate::tool::{Tool, ToolAnnotations, ToolSet, ToolSpec};
use rmcp::model as m;
use serde_json::{Map, Value};
use std::sync::Arc;

/// Whether a call of `tool` would need a human's approval.
///
/// The single place that decides it for serving: when the agent gains
/// permission rules (`Agent::tool_decision`), switch this function over.
pub(crate) fn needs_approval(tool: &dyn Tool) -> bool {
    tool.spec().needs_approval()
}

/// Whether `tool` is exposed directly: tools that need approval only with
/// `allow_approval_tools`.
pub(crate) fn is_exposed(tool: &dyn Tool, allow_approval_tools: bool) -> bool {
    allow_approval_tools || !needs_approval(tool)
}

/// The annotations advertised for a tool: needs approval → `readOnlyHint:
/// false, destructiveHint: true` (other hints kept); otherwise its own hints
/// verbatim; none set → none sent.
pub(crate) fn advertised(tool: &dyn Tool) -> Option<ToolAnnotations> {
    let own = &tool.spec().annotations;
    if needs_approval(tool) {
        return Some(own.clone().read_only(false).destructive(true));
    }
    if own.is_empty() {
        None
    } else {
        Some(own.clone())
    }
}

/// The agent tool's annotations, from what it can reach: read-only when every
/// tool the agent can call is advertised read-only (and so needs no approval);
/// otherwise `readOnlyHint: false`, with `destructiveHint` true when any
/// reachable tool may be destructive. `reachable: None` means some tools are
/// unknown (a tool source did not get ready): assume the worst.
pub(crate) fn agent_tool_annotations(reachable: Option<&ToolSet>) -> ToolAnnotations {
    let Some(tools) = reachable else {
        return ToolAnnotations::new().read_only(false).destructive(true);
    };
    let read_only =
        |t: &Arc<dyn Tool>| advertised(t.as_ref()).is_some_and(|a| a.read_only == Some(true));
    if tools.iter().all(read_only) {
        return ToolAnnotations::read_only_tool();
    }
    let destructive = tools
        .iter()
        .filter(|t| !read_only(t))
        .any(|t| advertised(t.as_ref()).is_none_or(|a| a.is_destructive()));
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
pub(crate) fn to_rmcp_tool(tool: &dyn Tool) -> m::Tool {
    let spec = tool.spec();
    let mut out = m::Tool::new(
        spec.name.clone(),
        spec.description.clone(),
        schema_object(spec),
    );
    if let Some(title) = &spec.display_name {
        out = out.with_title(title.clone());
    }
    if let Some(Value::Object(schema)) = &spec.output_schema {
        out = out.with_raw_output_schema(Arc::new(schema.clone()));
    }
    if let Some(a) = advertised(tool) {
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

    fn tool(name: &str) -> crate::DefinedTool {
        define_tool(name, "d", |_: Value| async { "x" })
    }

    #[test]
    fn needs_approval_is_never_read_only_and_keeps_other_hints() {
        let t = tool("rm")
            .annotations(ToolAnnotations::read_only_tool().title("Remove"))
            .needs_approval(true);
        let a = advertised(&t).unwrap();
        assert_eq!(a.read_only, Some(false));
        assert_eq!(a.destructive, Some(true));
        assert_eq!(a.title.as_deref(), Some("Remove"));
    }

    #[test]
    fn hints_go_out_verbatim_and_none_means_none() {
        let t = tool("look").annotations(ToolAnnotations::new().idempotent(true));
        assert_eq!(
            advertised(&t),
            Some(ToolAnnotations::new().idempotent(true))
        );
        assert_eq!(advertised(&tool("plain")), None);
    }

    #[test]
    fn agent_tool_is_read_only_only_when_every_tool_is() {
        let mut set = ToolSet::new();
        assert_eq!(
            agent_tool_annotations(Some(&set)),
            ToolAnnotations::read_only_tool()
        );
        set.insert(Arc::new(tool("a").read_only())).unwrap();
        assert_eq!(
            agent_tool_annotations(Some(&set)),
            ToolAnnotations::read_only_tool()
        );
        set.insert(Arc::new(
            tool("b").annotations(ToolAnnotations::new().destructive(false)),
        ))
        .unwrap();
        let a = agent_tool_annotations(Some(&set));
        assert_eq!((a.read_only, a.destructive), (Some(false), Some(false)));
        set.insert(Arc::new(tool("c").needs_approval(true)))
            .unwrap();
        let a = agent_tool_annotations(Some(&set));
        assert_eq!((a.read_only, a.destructive), (Some(false), Some(true)));
        assert_eq!(agent_tool_annotations(None).read_only, Some(false));
    }
}
