//! Requests of a known MCP method whose params do not fit its type reach the
//! handler as custom requests (rmcp tries each typed request, then falls back
//! to a custom one): they get `-32602 Invalid params` saying what is wrong,
//! not `-32601 Method not found`.

use rmcp::model::{
    CallToolRequestParams, CustomRequest, ErrorCode, ErrorData, InitializeRequestParams,
};
use serde_json::Value;

/// The error for a custom request: invalid params for a known method,
/// method not found otherwise.
pub(crate) fn custom_request_error(request: &CustomRequest) -> ErrorData {
    let method = request.method.as_str();
    if !is_known(method) {
        return ErrorData::new(ErrorCode::METHOD_NOT_FOUND, method.to_owned(), None);
    }
    let Some(params) = &request.params else {
        return ErrorData::invalid_params(format!("`{method}` needs params"), None);
    };
    let problem = match method {
        "tools/call" => problem::<CallToolRequestParams>(params),
        "initialize" => problem::<InitializeRequestParams>(params),
        _ => None,
    };
    let message = match problem {
        Some(p) => format!("invalid params for `{method}`: {p}"),
        None => format!("invalid params for `{method}`"),
    };
    ErrorData::invalid_params(message, None)
}

/// Why `params` is not a `T`, if it is not.
fn problem<T: serde::de::DeserializeOwned>(params: &Value) -> Option<String> {
    T::deserialize(params).err().map(|e| e.to_string())
}

/// Client-to-server request methods rmcp reads into a typed request.
fn is_known(method: &str) -> bool {
    matches!(
        method,
        "initialize"
            | "ping"
            | "tools/call"
            | "tools/list"
            | "prompts/get"
            | "prompts/list"
            | "resources/list"
            | "resources/read"
            | "resources/templates/list"
            | "resources/subscribe"
            | "resources/unsubscribe"
            | "completion/complete"
            | "logging/setLevel"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn code(method: &str, params: Option<Value>) -> (i32, String) {
        let e = custom_request_error(&CustomRequest::new(method, params));
        (e.code.0, e.message.into_owned())
    }

    #[test]
    fn malformed_params_of_known_methods_are_invalid_params() {
        let (c, m) = code("tools/call", Some(json!({"name": 5})));
        assert_eq!(c, -32602);
        assert!(
            m.contains("tools/call") && m.contains("invalid type"),
            "{m}"
        );
        assert_eq!(code("initialize", None).0, -32602);
        assert_eq!(code("frobnicate", Some(json!({}))).0, -32601);
    }
}
