//! A tool's `outputSchema` checked against its `structuredContent` (the
//! MCP spec's SHOULD, as the official SDKs do): a result that does not match
//! becomes an error result naming the field, so the model never reads
//! structured data its schema does not promise.

use crate::tool::ToolOutput;
use serde_json::Value;
use std::sync::OnceLock;

/// The compiled `outputSchema` of one listed tool (compiled on the first
/// call; a schema that does not compile checks nothing).
#[derive(Default)]
pub(crate) struct OutputCheck {
    schema: Option<Value>,
    compiled: OnceLock<Option<jsonschema::Validator>>,
}

impl OutputCheck {
    /// A check of results against `schema` (none: every result passes).
    pub(crate) fn new(schema: Option<Value>) -> Self {
        Self {
            schema,
            compiled: OnceLock::new(),
        }
    }

    /// `output` as the model should see it: unchanged when it matches (or is
    /// an error result, or the tool has no output schema); otherwise an error
    /// result saying which field of `tool` of `server` is wrong.
    pub(crate) fn apply(&self, server: &str, tool: &str, output: ToolOutput) -> ToolOutput {
        let Some(schema) = &self.schema else {
            return output;
        };
        if output.is_error {
            return output;
        }
        let Some(structured) = &output.structured else {
            return ToolOutput::error(format!(
                "MCP server `{server}`: tool `{tool}` has an outputSchema but returned no structuredContent"
            ));
        };
        let validator = self.compiled.get_or_init(|| {
            jsonschema::validator_for(schema)
                .inspect_err(|e| {
                    tracing::warn!(server, tool, error = %e, "not checking results: the tool's outputSchema does not compile")
                })
                .ok()
        });
        let Some(validator) = validator else {
            return output;
        };
        let mismatch = validator.iter_errors(structured).next().map(|e| {
            let path = e.instance_path().as_str();
            let field = if path.is_empty() {
                "the top level".to_owned()
            } else {
                format!("field `{path}`")
            };
            format!("{field}: {e}")
        });
        match mismatch {
            None => output,
            Some(why) => ToolOutput::error(format!(
                "MCP server `{server}`: tool `{tool}` returned structuredContent that does not match its outputSchema at {why}"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::OutputCheck;
    use crate::tool::ToolOutput;
    use serde_json::json;

    fn structured(value: serde_json::Value) -> ToolOutput {
        let mut out = ToolOutput::text("x");
        out.structured = Some(value);
        out
    }

    #[test]
    fn a_result_that_breaks_the_output_schema_is_an_error_naming_the_field() {
        let check = OutputCheck::new(Some(json!({
            "type": "object",
            "properties": {"answer": {"type": "string"}, "n": {"type": "integer"}},
            "required": ["answer"]
        })));
        let ok = check.apply("s", "t", structured(json!({"answer": "yes", "n": 1})));
        assert!(!ok.is_error);
        let wrong = check.apply("s", "t", structured(json!({"answer": 42})));
        assert!(wrong.is_error);
        assert!(
            wrong.to_model_text().contains("field `/answer`"),
            "{}",
            wrong.to_model_text()
        );
        let missing = check.apply("s", "t", structured(json!({"n": 1})));
        assert!(missing.is_error);
        assert!(
            missing.to_model_text().contains("\"answer\""),
            "{}",
            missing.to_model_text()
        );
        let none = check.apply("s", "t", ToolOutput::text("no structure"));
        assert!(none.is_error);
        // An error result is passed on as it is.
        let failed = check.apply("s", "t", ToolOutput::error("boom"));
        assert_eq!(failed.to_model_text(), "boom");
        // No schema: nothing checked.
        let free = OutputCheck::new(None).apply("s", "t", structured(json!(1)));
        assert!(!free.is_error);
    }
}
