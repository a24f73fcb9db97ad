//! The tool system: typed inputs, names, sets.

use lousho::agent::BuildError;
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::tool::DefinedTool;
use lousho::{Agent, AgentBuilder, JsonSchema, Tool, ToolContext, ToolSet, define_tool};
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct Search {
    /// What to look for.
    query: String,
    /// How many results.
    limit: u32,
}

fn search_tool() -> DefinedTool {
    define_tool(
        "search_docs",
        "Search the docs",
        |input: Search| async move { format!("{} results for {}", input.limit, input.query) },
    )
}

fn echo(name: &str) -> DefinedTool {
    DefinedTool::from_json(
        name,
        format!("echo {name}"),
        json!({"type": "object"}),
        |input, _ctx: ToolContext| async move { input },
    )
}

#[tokio::test]
async fn typed_input_with_a_bad_argument_is_an_error_naming_the_field() {
    let tool = search_tool();
    let err = tool
        .call(
            json!({"query": "x", "limit": "ten"}),
            ToolContext::new("c1"),
        )
        .await
        .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("`limit`"), "{msg}");
    assert!(msg.contains("search_docs"), "{msg}");

    let err = tool
        .call(json!({"limit": 3}), ToolContext::new("c2"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("missing field `query`"), "{err}");

    let ok = tool
        .call(json!({"query": "x", "limit": 3}), ToolContext::new("c3"))
        .await
        .unwrap();
    assert_eq!(ok.to_model_text(), "3 results for x");
}

#[tokio::test]
async fn a_bad_argument_reaches_the_model_as_an_error_result() {
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("search_docs", json!({"query": 5, "limit": 1})),
        ScriptedTurn::text("sorry"),
    ]);
    let agent = Agent::builder()
        .model(model.clone())
        .tool(search_tool())
        .build()
        .unwrap();
    let reply = agent.send("go").await.unwrap();
    let out = &reply.tool_calls[0].output;
    assert!(out.is_error);
    assert!(
        out.to_model_text().contains("`query`"),
        "{}",
        out.to_model_text()
    );
    let sent = model.last_request().unwrap();
    let result = sent
        .messages
        .last()
        .unwrap()
        .tool_results_iter()
        .next()
        .unwrap()
        .clone();
    assert!(result.output.is_error);
}

#[test]
fn input_schema_is_an_object_without_root_title() {
    let tool = search_tool();
    let schema = &tool.spec().input_schema;
    assert_eq!(schema["type"], "object");
    assert!(schema.get("title").is_none());
    assert_eq!(
        schema["properties"]["query"]["description"],
        "What to look for."
    );
    assert_eq!(schema["required"], json!(["query", "limit"]));
}

#[test]
fn duplicate_tool_names_are_rejected_naming_both() {
    let a = DefinedTool::from_json(
        "dup",
        "first one",
        json!({"type": "object"}),
        |_, _| async { "a" },
    );
    let b = DefinedTool::from_json(
        "dup",
        "second one",
        json!({"type": "object"}),
        |_, _| async { "b" },
    );
    let err = Agent::builder()
        .model("test")
        .tool(a)
        .tool(b)
        .build()
        .unwrap_err();
    let BuildError::DuplicateTool(e) = &err else {
        panic!("wrong error: {err}")
    };
    assert_eq!(e.name, "dup");
    let msg = err.to_string();
    assert!(
        msg.contains("first one") && msg.contains("second one"),
        "{msg}"
    );
}

#[test]
fn tools_accepts_one_tool_a_vec_a_toolset_and_tuples() {
    let set = ToolSet::try_from_tools(vec![echo("s1"), echo("s2")]).unwrap();
    let agent = Agent::builder()
        .model("test")
        .tools(echo("single"))
        .tools(vec![echo("v1"), echo("v2")])
        .tools(set)
        .tools((echo("t1"), vec![echo("t2")], Some(echo("t3"))))
        .build()
        .unwrap();
    let names: Vec<&str> = agent.own_tools().names().collect();
    assert_eq!(names, ["s1", "s2", "single", "t1", "t2", "t3", "v1", "v2"]);
}

#[test]
fn tool_names_must_follow_the_provider_rule() {
    let bad = DefinedTool::from_json("has space", "x", json!({"type": "object"}), |_, _| async {
        "x"
    });
    let err = Agent::builder()
        .model("test")
        .tool(bad)
        .build()
        .unwrap_err();
    assert!(
        matches!(err, BuildError::InvalidToolName(ref n) if n == "has space"),
        "{err}"
    );

    let not_object =
        DefinedTool::from_json("arr", "x", json!({"type": "array"}), |_, _| async { "x" });
    let err = Agent::builder()
        .model("test")
        .tool(not_object)
        .build()
        .unwrap_err();
    assert!(matches!(err, BuildError::InvalidInputSchema(_)), "{err}");
}

#[test]
fn building_without_a_model_is_a_typed_error() {
    let err = AgentBuilder::default().build().unwrap_err();
    assert!(matches!(err, BuildError::MissingModel));
    let err = Agent::builder().model("nope/model").build().unwrap_err();
    assert!(
        err.to_string().contains("unknown model `nope/model`"),
        "{err}"
    );
}

#[tokio::test]
async fn closures_may_return_results_and_json() {
    #[derive(Deserialize, JsonSchema)]
    struct N {
        n: i64,
    }
    let tool = define_tool("half", "Halves even numbers", |input: N| async move {
        if input.n % 2 == 0 {
            Ok(json!({"half": input.n / 2}))
        } else {
            Err("odd number")
        }
    });
    let ok = tool
        .call(json!({"n": 4}), ToolContext::new("1"))
        .await
        .unwrap();
    assert_eq!(ok.structured, Some(json!({"half": 2})));
    let err = tool
        .call(json!({"n": 3}), ToolContext::new("2"))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "odd number");
}

#[tokio::test]
async fn a_tool_error_returned_by_a_closure_passes_through_unchanged() {
    #[derive(Deserialize, JsonSchema)]
    struct Empty {}
    let tool = define_tool("stop", "Stops", |_: Empty| async {
        Err::<String, _>(lousho::tool::ToolError::Cancelled)
    });
    let err = tool
        .call(json!({}), ToolContext::new("1"))
        .await
        .unwrap_err();
    assert!(matches!(err, lousho::tool::ToolError::Cancelled), "{err:?}");

    let io = define_tool("io", "Fails with io", |_: Empty| async {
        Err::<String, _>(std::io::Error::other("disk on fire"))
    });
    let err = io.call(json!({}), ToolContext::new("2")).await.unwrap_err();
    assert!(
        matches!(err, lousho::tool::ToolError::Failed(ref m) if m == "disk on fire"),
        "{err:?}"
    );
}
