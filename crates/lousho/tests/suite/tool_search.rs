//! Tool search (client-side): deferred tools are not sent; the model finds
//! them with `tool_search`, and what it found joins the later requests.
//! The 200-tool fixture catalog of 10 servers and its queries are in
//! lousho-testkit's `fixtures/tool_search/`.

use lousho::Agent;
use lousho::model::ModelRequest;
use lousho::model::testing::{ScriptedModel, ScriptedTurn};
use lousho::tool::search::{SEARCH_TOOL_NAME, ToolSearch, ToolSearchMode};
use lousho_testkit::tools::{catalog_agent_tools, catalog_queries, catalog_tools};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

fn names(request: &ModelRequest) -> Vec<&str> {
    request.tools.iter().map(|d| d.name.as_str()).collect()
}

fn catalog_agent(model: &ScriptedModel, search: ToolSearch) -> (Agent, Arc<Mutex<Vec<String>>>) {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder()
        .model(model.clone())
        .tools(catalog_agent_tools(calls.clone()))
        .tool_search(search)
        .build()
        .unwrap();
    (agent, calls)
}

#[test]
fn the_fixture_has_200_tools_of_10_servers_and_enough_queries() {
    let tools = catalog_tools();
    assert_eq!(tools.len(), 200);
    let mut servers: Vec<&str> = tools.iter().map(|t| t.server.as_str()).collect();
    servers.dedup();
    assert_eq!(servers.len(), 10);
    let queries = catalog_queries();
    assert!(queries.len() >= 20);
    let known: Vec<String> = tools.iter().map(|t| t.qualified_name()).collect();
    for (_, expect) in &queries {
        assert!(known.contains(expect), "{expect} is not in the catalog");
    }
}

#[tokio::test]
async fn the_right_tool_is_in_the_top_3_for_at_least_90_percent_of_the_queries() {
    let queries = catalog_queries();
    let mut turn = ScriptedTurn::default();
    for (query, _) in &queries {
        turn = turn.and_tool_call(SEARCH_TOOL_NAME, json!({"query": query, "limit": 3}));
    }
    let model = ScriptedModel::new([turn, ScriptedTurn::text("done")]);
    let (agent, _) = catalog_agent(&model, ToolSearch::default());
    let reply = agent.send("find tools").await.unwrap();
    assert_eq!(reply.tool_calls.len(), queries.len());
    let mut misses = Vec::new();
    for (record, (query, expect)) in reply.tool_calls.iter().zip(&queries) {
        assert!(!record.output.is_error, "{query}: {:?}", record.output);
        let found: Vec<&str> = record.output.structured.as_ref().unwrap()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert!(found.len() <= 3);
        if !found.contains(&expect.as_str()) {
            misses.push(format!("{query:?} → {found:?} (want {expect})"));
        }
    }
    let hits = queries.len() - misses.len();
    assert!(
        hits * 10 >= queries.len() * 9,
        "{hits}/{} in the top 3; misses: {misses:#?}",
        queries.len()
    );
}

#[tokio::test]
async fn a_run_searches_loads_and_calls_a_deferred_tool() {
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call(
            SEARCH_TOOL_NAME,
            json!({"query": "refund a customer's payment"}),
        ),
        ScriptedTurn::tool_call("stripe__refund_payment", json!({"payment_intent": "pi_1"})),
        ScriptedTurn::text("Refunded."),
    ]);
    let (agent, calls) = catalog_agent(&model, ToolSearch::default());
    let reply = agent.send("Refund pi_1").await.unwrap();
    assert_eq!(reply.text, "Refunded.");
    assert_eq!(*calls.lock().unwrap(), ["stripe__refund_payment"]);

    let requests = model.requests();
    let first = names(&requests[0]);
    assert_eq!(
        first,
        [SEARCH_TOOL_NAME],
        "only the search tool is sent at first"
    );
    let second = names(&requests[1]);
    assert!(second.contains(&"stripe__refund_payment"), "{second:?}");
    assert!(second.contains(&SEARCH_TOOL_NAME));
    assert!(second.len() <= 6, "only what was found joins: {second:?}");
    // The found tool's full definition, schema included.
    let def = requests[1]
        .tools
        .iter()
        .find(|d| d.name == "stripe__refund_payment")
        .unwrap();
    assert!(def.input_schema["properties"]["payment_intent"].is_object());

    // The first request's definitions are ≥ 10× smaller than with search off.
    let off_model = ScriptedModel::new([ScriptedTurn::text("ok")]);
    let (off, _) = catalog_agent(&off_model, ToolSearch::new(ToolSearchMode::Off));
    let off_reply = off.send("Refund pi_1").await.unwrap();
    assert_eq!(off_model.requests()[0].tools.len(), 200);
    let with = reply.requests[0].tool_definition_tokens;
    let without = off_reply.requests[0].tool_definition_tokens;
    assert!(
        with > 0 && without >= 10 * with,
        "search on {with}, off {without} tokens"
    );
}

#[tokio::test]
async fn a_deferred_tool_called_by_name_without_searching_still_runs() {
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call("github__list_branches", json!({"owner": "o", "repo": "r"})),
        ScriptedTurn::text("ok"),
    ]);
    let (agent, calls) = catalog_agent(&model, ToolSearch::default());
    let reply = agent.send("branches?").await.unwrap();
    assert!(
        !reply.tool_calls[0].output.is_error,
        "{:?}",
        reply.tool_calls[0].output
    );
    assert_eq!(*calls.lock().unwrap(), ["github__list_branches"]);
    // Called once, its definition is sent from then on.
    assert!(names(&model.requests()[1]).contains(&"github__list_branches"));
}

#[tokio::test]
async fn what_a_session_found_stays_loaded_in_its_next_runs() {
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call(
            SEARCH_TOOL_NAME,
            json!({"query": "slack channel message", "server": "slack"}),
        ),
        ScriptedTurn::text("found"),
        ScriptedTurn::text("second run"),
    ]);
    let (agent, _) = catalog_agent(&model, ToolSearch::default());
    let session = agent.session();
    let reply = session.send("find it").await.unwrap();
    let found: Vec<String> = reply.tool_calls[0].output.structured.as_ref().unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert_eq!(t["server"], "slack", "the server filter holds");
            t["name"].as_str().unwrap().to_owned()
        })
        .collect();
    assert!(
        found.contains(&"slack__post_message".to_owned()),
        "{found:?}"
    );
    session.send("again").await.unwrap();
    let third = model.requests()[2].clone();
    for name in &found {
        assert!(
            names(&third).contains(&name.as_str()),
            "{name} in the next run"
        );
    }
}

#[tokio::test]
async fn auto_holds_back_nothing_for_a_few_tools_and_on_and_always_loaded_decide() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let few: Vec<_> = catalog_agent_tools(calls.clone())
        .into_iter()
        .take(20)
        .collect();
    let model = ScriptedModel::new([ScriptedTurn::text("ok"), ScriptedTurn::text("ok")]);
    let auto = Agent::builder()
        .model(model.clone())
        .tools(few.clone())
        .build()
        .unwrap();
    auto.send("hi").await.unwrap();
    let sent = names(&model.last_request().unwrap()).len();
    assert_eq!(sent, 20, "20 small tools: auto sends them all");

    let kept = few[0].spec().name.clone();
    let on = Agent::builder()
        .model(model.clone())
        .tools(few)
        .tool_search(ToolSearch::new(ToolSearchMode::On).always_loaded([kept.clone()]))
        .build()
        .unwrap();
    on.send("hi").await.unwrap();
    let request = model.last_request().unwrap();
    let mut sent = names(&request);
    sent.sort();
    let mut want = vec![kept.as_str(), SEARCH_TOOL_NAME];
    want.sort();
    assert_eq!(sent, want);
}

#[tokio::test]
async fn own_tools_stay_loaded_and_a_search_that_finds_nothing_says_so() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let own = lousho::tool::DefinedTool::from_json(
        "my_tool",
        "mine",
        json!({"type": "object"}),
        |_: Value, _| async { "x" },
    );
    let model = ScriptedModel::new([
        ScriptedTurn::tool_call(SEARCH_TOOL_NAME, json!({"query": "zzzz qqqq"})),
        ScriptedTurn::text("ok"),
    ]);
    let agent = Agent::builder()
        .model(model.clone())
        .tool(own)
        .tools(catalog_agent_tools(calls))
        .build()
        .unwrap();
    let reply = agent.send("hi").await.unwrap();
    let requests = model.requests();
    let mut first = names(&requests[0]);
    first.sort();
    assert_eq!(first, ["my_tool", SEARCH_TOOL_NAME]);
    let out = &reply.tool_calls[0].output;
    assert!(out.to_model_text().contains("No deferred tool"), "{out:?}");
}
