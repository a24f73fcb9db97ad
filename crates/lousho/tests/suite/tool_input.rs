//! `#[lousho::tool_input]`: the schema of a tool input derived through
//! lousho's own schemars is the one `#[derive(JsonSchema)]` gives, serde and
//! schemars attributes included.

use lousho::{JsonSchema, define_tool};
use serde::Deserialize;
use serde_json::json;

/// Find documents.
#[lousho::tool_input]
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ViaAttribute {
    /// What to look for.
    search_query: String,
    /// How many results.
    #[schemars(range(min = 1, max = 50))]
    max_results: Option<u32>,
}

/// Find documents.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)] // only its schema is used
#[serde(rename_all = "camelCase")]
struct ViaDerive {
    /// What to look for.
    search_query: String,
    /// How many results.
    #[schemars(range(min = 1, max = 50))]
    max_results: Option<u32>,
}

#[test]
fn tool_input_derives_the_schema_derive_json_schema_gives() {
    let mut via_attribute = lousho::schemars::schema_for!(ViaAttribute).to_value();
    let mut via_derive = lousho::schemars::schema_for!(ViaDerive).to_value();
    via_attribute["title"] = json!(null);
    via_derive["title"] = json!(null);
    assert_eq!(via_attribute, via_derive);
    assert_eq!(via_attribute["required"], json!(["searchQuery"]));
    assert_eq!(
        via_attribute["properties"]["maxResults"]["maximum"],
        json!(50)
    );
    assert_eq!(via_attribute["description"], json!("Find documents."));
}

#[tokio::test]
async fn a_tool_input_type_defines_a_tool() {
    let tool = define_tool("find", "Find documents", |input: ViaAttribute| async move {
        format!("{} ({:?})", input.search_query, input.max_results)
    });
    let schema = lousho::Tool::spec(&tool).input_schema.clone();
    assert_eq!(schema["properties"]["searchQuery"]["type"], json!("string"));
}
