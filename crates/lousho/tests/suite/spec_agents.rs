//! Several agents in one spec file (`agents:`): inline or from a file, named
//! among each other's `tools`, built each after the agents it calls.

use lousho::Agent;
use lousho::spec::{SpecErrorKind, SpecLoader};
use std::collections::BTreeMap;

fn build_all(spec: &lousho::spec::AgentSpec) -> (Agent, BTreeMap<String, Agent>) {
    let agents = spec
        .build_agents(|_, s, tools| -> Result<Agent, Box<dyn std::error::Error>> {
            Ok(s.agent_builder()?.tools(tools).build()?)
        })
        .unwrap();
    let top = spec
        .agent_builder()
        .unwrap()
        .tools(spec.agent_tools_from(&agents))
        .build()
        .unwrap();
    (top, agents)
}

#[tokio::test]
async fn inline_and_file_agents_call_each_other_by_name() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("researcher.yaml"),
        "model: test\ndescription: Finds facts\n",
    )
    .unwrap();
    let path = dir.path().join("team.yaml");
    std::fs::write(
        &path,
        "name: lead\nmodel: test\ntools: [writer]\nagents:\n  researcher: ./researcher.yaml\n  writer:\n    model: test\n    tools: [researcher, current_date]\n",
    )
    .unwrap();
    let spec = SpecLoader::new().load(&path).unwrap();
    assert_eq!(spec.agent_tools, ["writer"]);
    assert!(spec.tools.is_empty());
    let writer = &spec.agents["writer"];
    assert_eq!(
        writer.name.as_deref(),
        Some("writer"),
        "named after its key"
    );
    assert_eq!(writer.agent_tools, ["researcher"]);
    assert_eq!(writer.tools, ["current_date"]);
    assert_eq!(
        spec.agents["researcher"].description.as_deref(),
        Some("Finds facts")
    );
    assert_eq!(spec.agent_order(), ["researcher", "writer"]);

    let (top, agents) = build_all(&spec);
    assert!(agents["writer"].tool("researcher").is_some());
    assert!(agents["writer"].tool("current_date").is_some());
    let researcher_tool = agents["writer"].tool("researcher").unwrap();
    assert_eq!(researcher_tool.spec().description, "Finds facts");
    let reply = agents["writer"].send("hi").await.unwrap();
    assert!(
        reply.text.contains("- researcher: You said: "),
        "{}",
        reply.text
    );
    let reply = top.send("hi").await.unwrap();
    assert!(
        reply
            .text
            .starts_with("Tool results:\n- writer: Tool results:"),
        "{}",
        reply.text
    );
}

#[test]
fn agents_calling_each_other_in_a_cycle_are_refused() {
    let err = SpecLoader::new()
        .parse(
            "model: test\nagents:\n  a: { model: test, tools: [b] }\n  b: { model: test, tools: [a] }\n",
            "team.yaml",
        )
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(*err.kind, SpecErrorKind::Invalid(_)), "{text}");
    assert!(
        text.contains("`a` → `b` → `a`") && text.contains("cycle"),
        "{text}"
    );

    let err = SpecLoader::new()
        .parse(
            "model: test\nagents:\n  a: { model: test, tools: [a] }\n",
            "team.yaml",
        )
        .unwrap_err();
    assert!(err.to_string().contains("`a` → `a`"), "{err}");
}

#[test]
fn only_the_top_spec_defines_agents() {
    let err = SpecLoader::new()
        .parse(
            "model: test\nagents:\n  a:\n    model: test\n    agents:\n      b: { model: test }\n",
            "team.yaml",
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("only the top of a spec file"),
        "{err}"
    );
}

#[test]
fn an_agent_cannot_take_a_builtin_tools_name_or_an_invalid_one() {
    let err = SpecLoader::new()
        .parse(
            "model: test\nagents:\n  read_file: { model: test }\n",
            "team.yaml",
        )
        .unwrap_err();
    assert!(err.to_string().contains("built-in tool's name"), "{err}");
    let err = SpecLoader::new()
        .parse(
            "model: test\nagents:\n  \"a b\": { model: test }\n",
            "team.yaml",
        )
        .unwrap_err();
    assert!(err.to_string().contains("1-64 characters"), "{err}");
}

#[test]
fn an_unknown_name_in_tools_is_still_an_error_and_inline_keys_are_checked() {
    let err = SpecLoader::new()
        .parse(
            "model: test\ntools: [writer]\nagents:\n  researcher: { model: test }\n",
            "team.yaml",
        )
        .unwrap_err();
    assert!(
        matches!(*err.kind, SpecErrorKind::UnknownTool { .. }),
        "{err}"
    );
    let err = SpecLoader::new()
        .parse(
            "model: test\nagents:\n  researcher: { model: test, promt: hi }\n",
            "team.yaml",
        )
        .unwrap_err();
    assert!(err.to_string().contains("promt"), "{err}");
}
