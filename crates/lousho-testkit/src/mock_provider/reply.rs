//! What the mock answers, independent of the wire format.

use serde_json::Value;
use std::time::Duration;

/// One piece of a scripted streamed answer.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// Text, streamed as these pieces.
    Text(Vec<String>),
    /// A tool call whose JSON arguments stream as these fragments.
    ToolCall {
        id: String,
        name: String,
        fragments: Vec<String>,
    },
    /// An error event inside the stream (`type`, `message`).
    StreamError { kind: String, message: String },
    /// Anthropic: a `thinking` block streamed as these pieces, then its
    /// signature (issued by the mock). OpenAI: `reasoning_content` deltas,
    /// as compatible servers stream reasoning.
    Thinking(Vec<String>),
    /// Anthropic: a `redacted_thinking` block with this encrypted data.
    RedactedThinking(String),
    /// Anthropic's native tool search: a `server_tool_use` block with the
    /// query, then a `tool_search_tool_result` naming the tools found.
    ToolSearch {
        id: String,
        query: String,
        found: Vec<String>,
    },
}

/// How the reply ends.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    /// A streamed answer in the provider's format.
    Stream(Vec<Step>),
    /// An HTTP error in the provider's format: (type, message).
    Error {
        status: u16,
        kind: String,
        message: String,
    },
    /// One of the provider's own errors, in its shape with its headers.
    Canned(Canned),
    /// An HTTP response with this exact body.
    Raw {
        status: u16,
        content_type: String,
        body: String,
    },
}

/// The provider errors a mock renders in each API's own shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Canned {
    /// A request-rate limit: 429 with the limit headers.
    RateLimited { retry_after_secs: u64 },
    /// The provider is overloaded.
    Overloaded,
    /// The conversation is longer than the model's context.
    ContextTooLong,
}

/// One scripted response of a [`MockProvider`](crate::mock_provider::MockProvider).
/// Each request takes the next reply; when the script runs out the mock
/// answers 500.
///
/// ```
/// use lousho_testkit::mock_provider::MockReply;
/// use serde_json::json;
///
/// let script = [
///     MockReply::new().text("Let me check.").tool_call("call_1", "search", json!({"q": "rust"})).usage(12, 7),
///     MockReply::error(429, "rate_limit_exceeded", "slow down").header("retry-after", "1"),
///     MockReply::new().text("partial answer").disconnect_after(2),
/// ];
/// # let _ = script;
/// ```
#[derive(Debug, Clone)]
pub struct MockReply {
    pub(crate) body: Body,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) usage: Option<(u64, u64)>,
    pub(crate) cache: (u64, u64),
    pub(crate) reasoning: u64,
    pub(crate) finish: Option<String>,
    pub(crate) delay: Duration,
    pub(crate) chunk_delay: Duration,
    pub(crate) disconnect_after: Option<usize>,
    pub(crate) hold: bool,
    pub(crate) fragments: usize,
}

impl Default for MockReply {
    fn default() -> Self {
        Self {
            body: Body::Stream(Vec::new()),
            headers: Vec::new(),
            usage: None,
            cache: (0, 0),
            reasoning: 0,
            finish: None,
            delay: Duration::ZERO,
            chunk_delay: Duration::ZERO,
            disconnect_after: None,
            hold: false,
            fragments: 4,
        }
    }
}

/// Splits text after each space, so "a b c" streams as "a ", "b ", "c".
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        cur.push(c);
        if c == ' ' {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Splits `text` into `n` pieces at character boundaries (mid-token, as the
/// real APIs do).
pub(crate) fn fragments(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let n = n.clamp(1, chars.len().max(1));
    let size = chars.len().div_ceil(n).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

impl MockReply {
    /// An empty streamed answer; add text and tool calls.
    pub fn new() -> Self {
        Self::default()
    }

    /// A streamed answer with this text (word by word).
    pub fn text_reply(text: &str) -> Self {
        Self::new().text(text)
    }

    /// Streams `text`, word by word.
    pub fn text(self, text: &str) -> Self {
        let pieces = words(text);
        self.step(Step::Text(pieces))
    }

    /// Streams `text` in exactly these pieces.
    pub fn text_pieces<S: Into<String>>(self, pieces: impl IntoIterator<Item = S>) -> Self {
        self.step(Step::Text(pieces.into_iter().map(Into::into).collect()))
    }

    /// Streams a tool call whose arguments arrive in fragments (see
    /// [`fragments`](Self::fragments); 4 by default).
    pub fn tool_call(self, id: &str, name: &str, arguments: Value) -> Self {
        let fragments = fragments(&arguments.to_string(), self.fragments);
        self.step(Step::ToolCall {
            id: id.into(),
            name: name.into(),
            fragments,
        })
    }

    /// Anthropic only: a server-side tool search (`tool_search_tool_bm25`)
    /// for `query` that found `found` (tool names), streamed as the API
    /// streams it: a `server_tool_use` block, then a `tool_search_tool_result`.
    pub fn tool_search<S: Into<String>>(
        mut self,
        id: &str,
        query: &str,
        found: impl IntoIterator<Item = S>,
    ) -> Self {
        if let Body::Stream(steps) = &mut self.body {
            steps.push(Step::ToolSearch {
                id: id.to_owned(),
                query: query.to_owned(),
                found: found.into_iter().map(Into::into).collect(),
            });
        }
        self
    }

    /// Streams a tool call whose raw argument text arrives in these fragments.
    pub fn tool_call_fragments<S: Into<String>>(
        self,
        id: &str,
        name: &str,
        pieces: impl IntoIterator<Item = S>,
    ) -> Self {
        let fragments = pieces.into_iter().map(Into::into).collect();
        self.step(Step::ToolCall {
            id: id.into(),
            name: name.into(),
            fragments,
        })
    }

    /// How many fragments later tool calls' arguments are split into.
    pub fn fragments(mut self, n: usize) -> Self {
        self.fragments = n;
        self
    }

    /// An error event inside the stream (after whatever came before it).
    pub fn stream_error(self, kind: &str, message: &str) -> Self {
        self.step(Step::StreamError {
            kind: kind.into(),
            message: message.into(),
        })
    }

    /// Token usage reported at the end.
    pub fn usage(mut self, input: u64, output: u64) -> Self {
        self.usage = Some((input, output));
        self
    }

    /// Of the [`usage`](Self::usage) input tokens, those read from and
    /// written to the prompt cache: Anthropic reports them apart
    /// (`cache_read_input_tokens`, `cache_creation_input_tokens`, and
    /// `input_tokens` the rest), OpenAI the reads within `prompt_tokens`
    /// (`prompt_tokens_details.cached_tokens`).
    pub fn cache_tokens(mut self, read: u64, write: u64) -> Self {
        self.cache = (read, write);
        self
    }

    /// Of the [`usage`](Self::usage) output tokens, those spent reasoning
    /// (OpenAI `completion_tokens_details.reasoning_tokens`; Anthropic does
    /// not report them apart).
    pub fn reasoning_tokens(mut self, n: u64) -> Self {
        self.reasoning = n;
        self
    }

    /// Streams thinking, word by word: on Anthropic a `thinking` block
    /// (`thinking_delta`s, then a `signature_delta` with a signature the
    /// mock issues and later checks: a request whose thinking block's
    /// signature the mock did not issue for that exact text is answered
    /// 400, as the API does); on OpenAI `reasoning_content` deltas.
    pub fn thinking(self, text: &str) -> Self {
        self.step(Step::Thinking(words(text)))
    }

    /// Anthropic: a `redacted_thinking` block carrying `data`.
    pub fn redacted_thinking(self, data: &str) -> Self {
        self.step(Step::RedactedThinking(data.into()))
    }

    /// The wire finish reason (`stop`/`tool_calls`, `end_turn`/`tool_use`, …);
    /// by default it follows from whether there are tool calls.
    pub fn finish(mut self, reason: &str) -> Self {
        self.finish = Some(reason.into());
        self
    }

    /// An HTTP error with the provider's error body: `kind` is the error
    /// type/code (`rate_limit_error`, `context_length_exceeded`, …).
    pub fn error(status: u16, kind: &str, message: &str) -> Self {
        Self {
            body: Body::Error {
                status,
                kind: kind.into(),
                message: message.into(),
            },
            ..Self::default()
        }
    }

    /// A rate limit as the provider answers it, the limit's headers
    /// included. OpenAI: 429 `{"error": {"type": "requests", "code":
    /// "rate_limit_exceeded", …}}` with `x-ratelimit-limit-requests`,
    /// `x-ratelimit-remaining-requests: 0`, `x-ratelimit-reset-requests:
    /// <n>s` (and the tokens ones), no `retry-after`. Anthropic: 429
    /// `rate_limit_error` with `retry-after: <n>` and
    /// `anthropic-ratelimit-requests-{limit,remaining,reset}` (remaining 0,
    /// reset an RFC 3339 time).
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        Self::canned(Canned::RateLimited { retry_after_secs })
    }

    /// An overloaded provider: Anthropic 529 `overloaded_error`; OpenAI 503
    /// (`server_error`, "The server is overloaded or not ready yet.").
    pub fn overloaded() -> Self {
        Self::canned(Canned::Overloaded)
    }

    /// A conversation too long for the model: OpenAI 400 with `code:
    /// "context_length_exceeded"`; Anthropic 400 `invalid_request_error`
    /// "prompt is too long: 210000 tokens > 200000 maximum".
    pub fn context_too_long() -> Self {
        Self::canned(Canned::ContextTooLong)
    }

    fn canned(canned: Canned) -> Self {
        Self {
            body: Body::Canned(canned),
            ..Self::default()
        }
    }

    /// A response with exactly this body and content type.
    pub fn raw(status: u16, content_type: &str, body: &str) -> Self {
        Self {
            body: Body::Raw {
                status,
                content_type: content_type.into(),
                body: body.into(),
            },
            ..Self::default()
        }
    }

    /// A `200 text/event-stream` response with exactly this body (malformed SSE).
    pub fn raw_sse(body: &str) -> Self {
        Self::raw(200, "text/event-stream", body)
    }

    /// A response header (e.g. `retry-after`).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Waits this long before answering.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Waits this long before each event of the stream.
    pub fn chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay = delay;
        self
    }

    /// Breaks the connection after this many events (a mid-stream disconnect).
    pub fn disconnect_after(mut self, events: usize) -> Self {
        self.disconnect_after = Some(events);
        self
    }

    /// After the content, keeps the stream open with keep-alives, without
    /// the finish events, until the client disconnects (or 30 s pass).
    pub fn hold(mut self) -> Self {
        self.hold = true;
        self
    }

    fn step(mut self, step: Step) -> Self {
        if let Body::Stream(steps) = &mut self.body {
            steps.push(step);
        }
        self
    }

    pub(crate) fn has_tool_calls(&self) -> bool {
        matches!(&self.body, Body::Stream(steps) if steps.iter().any(|s| matches!(s, Step::ToolCall { .. })))
    }
}
