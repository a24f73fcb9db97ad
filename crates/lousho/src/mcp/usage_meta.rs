//! A served lousho agent's token usage, carried back to a calling lousho
//! agent in the agent tool's result (`_meta["lousho/usage"]`), so the
//! caller's [`Reply`](crate::Reply) counts the served agent's model requests
//! as it counts an in-process [`Agent::as_tool`](crate::Agent::as_tool)
//! child's. Other clients ignore the key. The figures are as the server
//! reports them.

use crate::model::run_record::RequestUsage;
use rmcp::model::CallToolResult;
use serde::{Deserialize, Serialize};

/// The `_meta` key.
pub(crate) const USAGE_META_KEY: &str = "lousho/usage";
/// The most requests read from one result (a served run is bounded by its
/// own max turns; this only bounds what a hostile server can make us keep).
#[cfg(feature = "mcp-client")]
const MAX_REQUESTS: usize = 10_000;

#[derive(Serialize, Deserialize)]
struct UsageMeta {
    requests: Vec<RequestUsage>,
}

/// `result` with `requests` in its `_meta` (unchanged when there are none).
#[cfg(feature = "mcp-server")]
pub(crate) fn with_usage(mut result: CallToolResult, requests: &[RequestUsage]) -> CallToolResult {
    if requests.is_empty() {
        return result;
    }
    let Ok(value) = serde_json::to_value(UsageMeta {
        requests: requests.to_vec(),
    }) else {
        return result;
    };
    result
        .meta
        .get_or_insert_with(rmcp::model::MetaObject::default)
        .0
        .insert(USAGE_META_KEY.to_owned(), value);
    result
}

/// The requests a served lousho agent reported in `result`, if any.
#[cfg(feature = "mcp-client")]
pub(crate) fn usage_of(result: &CallToolResult) -> Vec<RequestUsage> {
    let Some(value) = result.meta.as_ref().and_then(|m| m.0.get(USAGE_META_KEY)) else {
        return Vec::new();
    };
    match serde_json::from_value::<UsageMeta>(value.clone()) {
        Ok(mut meta) => {
            meta.requests.truncate(MAX_REQUESTS);
            meta.requests
        }
        Err(e) => {
            tracing::debug!(error = %e, "ignoring a `_meta.{USAGE_META_KEY}` that is not lousho's usage");
            Vec::new()
        }
    }
}

#[cfg(all(test, feature = "mcp-client", feature = "mcp-server"))]
mod tests {
    use super::*;
    use crate::model::Usage;
    use rmcp::model::{ContentBlock, MetaObject};

    #[test]
    fn usage_round_trips_through_meta_and_junk_is_ignored() {
        let requests = vec![RequestUsage {
            model: "test".into(),
            usage: Usage::new(40, 4),
            cost_usd: Some(0.5),
            tool_definition_tokens: 61,
        }];
        let result = with_usage(
            CallToolResult::success(vec![ContentBlock::text("ok")]),
            &requests,
        );
        assert_eq!(usage_of(&result), requests);
        let mut junk = CallToolResult::success(vec![]);
        junk.meta = Some(MetaObject(
            serde_json::json!({USAGE_META_KEY: {"requests": "many"}})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        ));
        assert!(usage_of(&junk).is_empty());
    }
}
