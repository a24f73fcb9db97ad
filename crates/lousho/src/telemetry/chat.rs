//! The `chat` span around one model request's stream: entered while the
//! stream is polled (the provider's I/O happens inside it), ended with the
//! usage and finish reason the stream reported, or the error.

use super::{content, span};
use crate::model::{FinishReason, ModelEvent, ModelRequest, ModelStream, Price, ToolCall, Usage};
use futures::Stream;
use std::pin::Pin;
use std::task::{Context, Poll};
use tracing::Span;

/// Wraps `stream` (the request's) in a `chat` span; with no subscriber
/// interested, returns it as it is.
pub(crate) fn traced_stream(
    model_name: &str,
    request: &ModelRequest,
    record_content: bool,
    price: Option<Price>,
    stream: ModelStream,
) -> ModelStream {
    let span = span::chat(model_name);
    if span.is_disabled() {
        return stream;
    }
    if record_content {
        if let Some(system) = &request.system {
            span.record(
                "gen_ai.system_instructions",
                content::system(system).as_str(),
            );
        }
        span.record(
            "gen_ai.input.messages",
            content::messages(&request.messages).as_str(),
        );
    }
    Box::pin(Traced {
        inner: stream,
        model_name: model_name.to_owned(),
        span,
        record_content,
        price,
        usage: Usage::default(),
        finish: None,
        text: String::new(),
        calls: Vec::new(),
        ended: false,
    })
}

struct Traced {
    inner: ModelStream,
    /// `vendor/model`: the `gen_ai.response.model` of a turn that ends well.
    model_name: String,
    span: Span,
    record_content: bool,
    price: Option<Price>,
    usage: Usage,
    finish: Option<FinishReason>,
    /// The turn's text and calls, kept only when recording content.
    text: String,
    calls: Vec<ToolCall>,
    ended: bool,
}

impl Traced {
    fn observe(&mut self, event: &ModelEvent) {
        match event {
            ModelEvent::Usage(u) => self.usage += *u,
            ModelEvent::Finished(reason) => self.finish = Some(reason.clone()),
            ModelEvent::TextDelta(t) if self.record_content => self.text.push_str(t),
            ModelEvent::ToolCall(c) if self.record_content => self.calls.push(c.clone()),
            _ => {}
        }
    }

    fn end(&mut self) {
        self.ended = true;
        span::record_response_model(&self.span, Some(&self.model_name));
        let cost = self.price.map(|p| p.cost(self.usage));
        span::record_usage(&self.span, self.usage, cost);
        let reason = self.finish.as_ref().map(finish_reason);
        if let Some(reason) = reason {
            span::record_finish_reasons(&self.span, &[reason]);
        }
        if self.record_content {
            self.span.record(
                "gen_ai.output.messages",
                content::output(&self.text, &self.calls, reason).as_str(),
            );
        }
    }
}

impl Stream for Traced {
    type Item = <ModelStream as Stream>::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        let span = this.span.clone();
        let _entered = span.enter();
        let polled = this.inner.as_mut().poll_next(cx);
        match &polled {
            Poll::Ready(Some(Ok(event))) => this.observe(event),
            Poll::Ready(Some(Err(e))) if !this.ended => {
                this.ended = true;
                span::record_error(&this.span, "model_error", e);
            }
            Poll::Ready(None) if !this.ended => this.end(),
            _ => {}
        }
        polled
    }
}

/// The conventions' finish reason names.
pub(crate) fn finish_reason(reason: &FinishReason) -> &str {
    match reason {
        FinishReason::Stop => "stop",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::Length => "length",
        FinishReason::ContentFilter => "content_filter",
        FinishReason::Other(other) => other,
    }
}
