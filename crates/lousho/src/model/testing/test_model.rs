use super::args::arguments_for_schema;
use crate::model::{
    FinishReason, Message, Model, ModelEvent, ModelRequest, ModelStream, Role, ToolCall, Usage,
};
use futures::stream;
use std::collections::BTreeSet;

/// A deterministic model for testing agents, resolved from the model string
/// `test` (or `test/<anything>`).
///
/// On the first turn after a user message it calls every tool it is offered
/// (or the chosen subset) once, with arguments generated to satisfy each
/// tool's input schema ([`arguments_for_schema`]). On the next turn it answers
/// with text that reports each tool's result. Without tools it echoes the
/// user's message.
#[derive(Debug, Clone, Default)]
pub struct TestModel {
    name: Option<String>,
    only: Option<BTreeSet<String>>,
}

impl TestModel {
    /// Calls every tool it is offered.
    pub fn new() -> Self {
        Self::default()
    }

    /// Calls only these tools (when offered).
    #[must_use]
    pub fn call_tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.only = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Calls no tools: it only echoes.
    #[must_use]
    pub fn no_tools(self) -> Self {
        self.call_tools(Vec::<String>::new())
    }

    pub(crate) fn named(mut self, name: String) -> Self {
        self.name = Some(name);
        self
    }

    fn answer(&self, request: &ModelRequest) -> Vec<ModelEvent> {
        let last = request.messages.last();
        let turn = request
            .messages
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count();
        match last {
            Some(m) if m.role == Role::Tool => {
                let lines: Vec<String> = m
                    .tool_results_iter()
                    .map(|r| {
                        let status = if r.output.is_error { " (error)" } else { "" };
                        format!("- {}{status}: {}", r.name, r.output.to_model_text())
                    })
                    .collect();
                text_events(format!("Tool results:\n{}", lines.join("\n")))
            }
            _ => {
                let calls: Vec<ToolCall> = request
                    .tools
                    .iter()
                    .filter(|t| self.only.as_ref().is_none_or(|only| only.contains(&t.name)))
                    .enumerate()
                    .map(|(i, t)| ToolCall {
                        id: format!("test_call_{turn}_{i}"),
                        name: t.name.clone(),
                        arguments: arguments_for_schema(&t.input_schema),
                    })
                    .collect();
                if calls.is_empty() {
                    let said = last.map(Message::text).unwrap_or_default();
                    text_events(format!("You said: {said}"))
                } else {
                    let mut events: Vec<ModelEvent> =
                        calls.into_iter().map(ModelEvent::ToolCall).collect();
                    events.push(ModelEvent::Finished(FinishReason::ToolCalls));
                    events
                }
            }
        }
    }
}

fn text_events(text: String) -> Vec<ModelEvent> {
    // Stream word by word, as a real model would.
    let mut events: Vec<ModelEvent> = text
        .split_inclusive(' ')
        .map(|w| ModelEvent::TextDelta(w.to_owned()))
        .collect();
    events.push(ModelEvent::Finished(FinishReason::Stop));
    events
}

fn estimate_tokens(request: &ModelRequest) -> u64 {
    let chars: usize = request
        .messages
        .iter()
        .map(|m| m.text().len())
        .sum::<usize>()
        + request.system.as_ref().map_or(0, String::len);
    (chars as u64).div_ceil(4)
}

impl Model for TestModel {
    fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("test")
    }

    fn stream(&self, request: &ModelRequest) -> ModelStream {
        let mut events = self.answer(request);
        let output_tokens = events
            .iter()
            .map(|e| match e {
                ModelEvent::TextDelta(t) => t.len() as u64,
                ModelEvent::ToolCall(c) => c.arguments.to_string().len() as u64,
                _ => 0,
            })
            .sum::<u64>()
            .div_ceil(4);
        let usage = Usage::new(estimate_tokens(request), output_tokens);
        let finish = events.pop();
        events.push(ModelEvent::Usage(usage));
        events.extend(finish);
        Box::pin(stream::iter(events.into_iter().map(Ok)))
    }
}
