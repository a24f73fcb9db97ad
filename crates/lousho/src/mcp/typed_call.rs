//! A `tools/call` request line read straight into its types. rmcp's
//! `ClientJsonRpcMessage` is an untagged union over flattened requests: serde
//! buffers the whole message, then tries each variant in turn and builds an
//! error for every one that fails — 40 % of a served agent's CPU per call.
//! The calls, nearly all of the traffic, are read here in one pass (by the
//! stdio and stateless HTTP servers); any other line (and
//! a call this cannot read) goes the general way, so what is accepted and
//! how errors are answered does not change.

use rmcp::model::{
    CallToolRequest, CallToolRequestMethod, CallToolRequestParams, ClientJsonRpcMessage,
    ClientRequest, Extensions, JsonRpcVersion2_0, RequestId,
};
use serde::Deserialize;

#[derive(Deserialize)]
struct CallLine {
    // Checked ("2.0") though unused.
    #[allow(dead_code)]
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    // Checked ("tools/call").
    #[allow(dead_code)]
    method: CallToolRequestMethod,
    params: CallToolRequestParams,
}

/// `message` as a `tools/call` request: its id and params (`_meta` among
/// them); `None` for any other message.
pub(crate) fn read_call_parts(message: &[u8]) -> Option<(RequestId, CallToolRequestParams)> {
    let CallLine { id, params, .. } = serde_json::from_slice::<CallLine>(message).ok()?;
    Some((id, params))
}

/// `line` as a `tools/call` request, built as rmcp's own reading builds it;
/// `None` for any other line.
#[cfg(test)]
pub(crate) fn read_call(line: &[u8]) -> Option<ClientJsonRpcMessage> {
    let (id, params) = read_call_parts(line)?;
    Some(call_message(id, params))
}

/// The `tools/call` request with `id` and `params` as rmcp's own reading
/// builds it (the `_meta` of the params in the request's extensions).
pub(crate) fn call_message(
    id: RequestId,
    mut params: CallToolRequestParams,
) -> ClientJsonRpcMessage {
    let mut extensions = Extensions::new();
    if let Some(meta) = params.meta.take() {
        extensions.insert(meta);
    }
    let mut request = CallToolRequest::new(params);
    request.extensions = extensions;
    ClientJsonRpcMessage::request(ClientRequest::CallToolRequest(request), id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::GetMeta;

    /// The typed reading and rmcp's agree on every call; other lines are left alone.
    #[test]
    fn calls_read_as_rmcp_reads_them() {
        let calls = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
            r#"{"params":{"arguments":{"n":[1,2,{"x":null}]},"name":"e","_meta":{"progressToken":"p1","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}},"method":"tools/call","id":"abc","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","requestState":"s","inputResponses":{}}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"t","extra":1}}"#,
        ];
        for line in calls {
            let typed = read_call(line.as_bytes()).expect("read");
            let general: ClientJsonRpcMessage = serde_json::from_str(line).expect("rmcp reads it");
            assert_eq!(
                serde_json::to_value(&typed).expect("json"),
                serde_json::to_value(&general).expect("json"),
                "{line}"
            );
            let (ClientJsonRpcMessage::Request(t), ClientJsonRpcMessage::Request(g)) =
                (typed, general)
            else {
                panic!("not requests: {line}");
            };
            assert_eq!(t.id, g.id);
            assert_eq!(t.request.get_meta(), g.request.get_meta(), "{line}");
            let (ClientRequest::CallToolRequest(t), ClientRequest::CallToolRequest(g)) =
                (t.request, g.request)
            else {
                panic!("not calls: {line}");
            };
            assert_eq!(t.params, g.params, "{line}");
        }
        for other in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            "not json",
        ] {
            assert!(read_call(other.as_bytes()).is_none(), "{other}");
        }
    }
}
