//! The deterministic models: TestModel and ScriptedModel.

use futures::StreamExt;
use lousho::model::ModelEvent;
use lousho::model::testing::arguments_for_schema;
use lousho::model::testing::{ScriptedModel, ScriptedTurn, TestModel};
use lousho::model::{ModelRequest, ToolDefinition};
use lousho::tool::DefinedTool;
use lousho::{Agent, Model};
use serde_json::{Value, json};
use std::sync::Arc;

fn assert_valid(schema: &Value, instance: &Value) {
    let validator = jsonschema::draft202012::new(schema).expect("valid schema");
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "{instance} does not satisfy {schema}: {errors:?}"
    );
}

#[test]
fn generated_arguments_satisfy_nested_objects_enums_arrays_and_bounds() {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 10, "maxLength": 12},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "count": {"type": "integer", "minimum": 5, "maximum": 9},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "step": {"type": "integer", "exclusiveMinimum": 10, "multipleOf": 4},
            "negative": {"type": "number", "maximum": -3},
            "when": {"type": "string", "format": "date-time"},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 3, "uniqueItems": true},
            "nested": {
                "type": "object",
                "properties": {
                    "inner": {"type": "object", "properties": {"flag": {"type": "boolean"}},
                              "required": ["flag"], "additionalProperties": false},
                    "maybe": {"type": ["integer", "null"], "minimum": 2}
                },
                "required": ["inner", "maybe"]
            },
            "choice": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/Point"}]},
            "fixed": {"const": 42}
        },
        "required": ["name", "mode", "count", "ratio", "step", "negative", "when", "tags",
                     "nested", "choice", "fixed"],
        "additionalProperties": false,
        "$defs": {
            "Point": {"type": "object", "properties": {"x": {"type": "number", "minimum": 100}},
                      "required": ["x"]}
        }
    });
    let args = arguments_for_schema(&schema);
    assert_valid(&schema, &args);
    assert_eq!(args["mode"], "fast");
    assert_eq!(args["tags"].as_array().unwrap().len(), 3);
    assert_eq!(args["choice"]["x"], json!(100.0));
}

#[test]
fn generated_arguments_satisfy_schemas_derived_from_types() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    enum Color {
        Red,
        Green,
    }
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Item {
        #[schemars(range(min = 1, max = 5))]
        qty: u8,
        color: Color,
    }
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Order {
        items: Vec<Item>,
        note: Option<String>,
    }
    let schema = lousho::tool::schema_for::<Order>();
    let args = arguments_for_schema(&schema);
    assert_valid(&schema, &args);
    let _: Order = serde_json::from_value(args).unwrap();
}

#[test]
fn test_model_arguments_prefer_schema_examples_then_defaults() {
    let schema = json!({"type": "object", "properties": {
        "zone": {"type": "string", "examples": ["UTC", "Europe/Paris"], "default": "local"},
        "path": {"type": "string", "default": "."},
        "name": {"type": "string"},
        "level": {"enum": ["low", "high"], "examples": ["high"]}
    }});
    let args = arguments_for_schema(&schema);
    assert_eq!(
        args,
        json!({"zone": "UTC", "path": ".", "name": "test", "level": "low"})
    );
}

#[tokio::test]
async fn test_model_calls_every_tool_then_reports_their_results() {
    let a = DefinedTool::from_json(
        "alpha",
        "a",
        json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 7}}}),
        |input: Value, _| async move { format!("alpha got {}", input["n"]) },
    );
    let b = DefinedTool::from_json("beta", "b", json!({"type": "object"}), |_, _| async {
        "beta ok"
    });
    let agent = Agent::builder()
        .model("test")
        .tool(a)
        .tool(b)
        .build()
        .unwrap();
    let reply = agent.send("go").await.unwrap();
    assert_eq!(reply.tool_calls.len(), 2);
    assert_eq!(reply.turns, 2);
    assert!(reply.text.contains("alpha: alpha got 7"), "{}", reply.text);
    assert!(reply.text.contains("beta: beta ok"), "{}", reply.text);
    assert!(reply.usage.total() > 0);
}

#[tokio::test]
async fn test_model_can_call_a_chosen_subset() {
    let model = TestModel::new().call_tools(["beta"]);
    let request = ModelRequest::new(vec!["hi".into()]).tools(vec![
        ToolDefinition::new("alpha", "", json!({"type": "object"})),
        ToolDefinition::new("beta", "", json!({"type": "object"})),
    ]);
    let events: Vec<ModelEvent> = model.stream(&request).map(|e| e.unwrap()).collect().await;
    let called: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::ToolCall(c) => Some(c.name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(called, ["beta"]);
}

#[test]
fn model_strings_resolve_to_the_test_model() {
    assert_eq!(lousho::model::resolve_model("test").unwrap().name(), "test");
    assert_eq!(
        lousho::model::resolve_model("test/anything")
            .unwrap()
            .name(),
        "test/anything"
    );
    assert!(lousho::model::resolve_model("nosuchvendor/x").is_err());
}

#[tokio::test]
async fn scripted_model_plays_turns_and_fails_past_the_end() {
    let model = ScriptedModel::new([ScriptedTurn::text("one")]);
    let shared: Arc<dyn Model> = Arc::new(model.clone());
    let agent = Agent::builder().model(shared).build().unwrap();
    assert_eq!(agent.send("a").await.unwrap().text, "one");
    let err = agent.send("b").await.unwrap_err();
    assert!(err.to_string().contains("no scripted turn left"), "{err}");
    assert_eq!(model.requests().len(), 2);
}
