//! Argument completion (`completion/complete`): what a prompt or a resource
//! template suggests for an argument the client's user is typing.

use futures::future::BoxFuture;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

/// The most values one `completion/complete` answer carries (MCP's cap).
pub const MAX_COMPLETION_VALUES: usize = 100;

/// What a client asks completion for: an argument of a prompt or a
/// resource template, and what the user typed so far.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompletionRequest {
    /// The argument's name (a prompt argument or a template variable).
    pub argument: String,
    /// What the user typed so far (possibly empty).
    pub value: String,
    /// The values of the arguments already filled in, by name.
    pub context: BTreeMap<String, String>,
    /// The OAuth caller the request came from, if any: completions of
    /// caller-bound values (the served sessions) offer only its own.
    pub(crate) caller: Option<super::caller_store::CallerKey>,
}

/// The code behind a completion: request in, suggested values out (any
/// number; the server sends the first [`MAX_COMPLETION_VALUES`] and says
/// how many there are).
pub(crate) type Completer =
    Arc<dyn Fn(CompletionRequest) -> BoxFuture<'static, Vec<String>> + Send + Sync>;

/// Wraps a closure as a [`Completer`].
pub(crate) fn completer<F, Fut>(f: F) -> Completer
where
    F: Fn(CompletionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Vec<String>> + Send + 'static,
{
    Arc::new(move |request| Box::pin(f(request)))
}

/// Runs `completer` (none: no suggestions) and shapes MCP's answer: at most
/// [`MAX_COMPLETION_VALUES`], with the total and whether more exist.
pub(crate) async fn complete(
    completer: Option<&Completer>,
    request: CompletionRequest,
) -> rmcp::model::CompletionInfo {
    let mut values = match completer {
        Some(c) => c(request).await,
        None => Vec::new(),
    };
    let total = values.len();
    values.truncate(MAX_COMPLETION_VALUES);
    let mut info = rmcp::model::CompletionInfo::default();
    info.has_more = Some(total > values.len());
    info.total = u32::try_from(total).ok();
    info.values = values;
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(value: &str) -> CompletionRequest {
        CompletionRequest {
            argument: "lang".to_owned(),
            value: value.to_owned(),
            context: BTreeMap::new(),
            caller: None,
        }
    }

    #[tokio::test]
    async fn caps_values_and_says_more_exist() {
        let many = completer(|_| async { (0..150).map(|i| i.to_string()).collect() });
        let info = complete(Some(&many), request("")).await;
        assert_eq!(info.values.len(), MAX_COMPLETION_VALUES);
        assert_eq!(info.total, Some(150));
        assert_eq!(info.has_more, Some(true));

        let prefix = completer(|r: CompletionRequest| async move {
            ["rust", "ruby", "go"]
                .into_iter()
                .filter(|l| l.starts_with(&r.value))
                .map(str::to_owned)
                .collect()
        });
        let info = complete(Some(&prefix), request("ru")).await;
        assert_eq!(info.values, ["rust", "ruby"]);
        assert_eq!(info.has_more, Some(false));

        let none = complete(None, request("x")).await;
        assert!(none.values.is_empty());
    }
}
