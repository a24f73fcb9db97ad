//! Context that grows: what the model is sent when a conversation is longer
//! than its context budget.
//!
//! The strategy (`AgentBuilder::context_budget`):
//! the system prompt and the tool definitions always go; then the newest
//! messages that fit, cut only **before a user message**. A user message
//! starts a turn, so an assistant's tool call and the tool message with its
//! result always go together (or not at all), and the model's input starts
//! with a user message as the providers require. The newest user message and
//! everything after it always go, even past the budget (a single turn cannot
//! be cut without splitting it).
//!
//! Sizes are estimated, not counted by the model's tokenizer: one token per
//! 4 bytes of the JSON the message serialises to (about right for English
//! text and JSON with the common tokenizers; set the budget with headroom).
//! Only what is sent shrinks: the run's reply, the session's history and the
//! store keep every message.
//!
//! A conversation with a summary ([`super::compaction`]) is sent with its
//! latest summary in place of the messages it replaces ([`view`]); with
//! compaction on, tool results before the latest assistant message are
//! trimmed when the conversation is over the budget, before any turn is left
//! out.

use crate::model::{Message, ModelRequest, Part, Role, Summary};
use crate::tool::ToolOutput;
use crate::tool::search::{BYTES_PER_TOKEN, json_len};

/// How a summary is introduced where it stands in for older messages (a
/// user message: this line, a blank line, the summary).
pub const SUMMARY_HEADER: &str = "[Summary of the earlier conversation: older messages were replaced by this summary to fit the context.]";

/// How a trimmed tool result ends: `{}` is the number of bytes left out.
pub const TRIM_MARKER: &str = "[… {} more bytes of this tool result left out to fit the context]";

/// The latest summary message of a conversation: its position and summary.
pub(crate) fn latest_summary(messages: &[Message]) -> Option<(usize, &Summary)> {
    messages
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, m)| m.as_summary().map(|s| (i, s)))
}

/// The conversation as the model is sent it, when it holds a summary: the
/// messages before the latest summary's range (the pinned first one), the
/// summary as a user message, the messages after its range; other summary
/// messages left out. `None`: no summary (sent as it is).
pub(crate) fn view(messages: &[Message]) -> Option<Vec<Message>> {
    let (at, summary) = latest_summary(messages)?;
    let from = usize::try_from(summary.from).unwrap_or(at).min(at);
    let to = usize::try_from(summary.to).unwrap_or(at).clamp(from, at);
    let plain = |m: &&Message| m.as_summary().is_none();
    let mut out = Vec::with_capacity(messages.len() - (to - from) + 1);
    out.extend(messages[..from].iter().filter(plain).cloned());
    out.push(Message::user(format!(
        "{}\n\n{}",
        SUMMARY_HEADER, summary.text
    )));
    out.extend(messages[to..].iter().filter(plain).cloned());
    Some(out)
}

/// Trims every tool result in `messages` longer than `max_bytes`
/// ([`trimmed`]).
pub(crate) fn trim_tool_results(messages: &mut [Message], max_bytes: usize) {
    for message in messages.iter_mut().filter(|m| m.role == Role::Tool) {
        for part in &mut message.parts {
            if let Part::ToolResult(result) = part
                && let Some(short) = trimmed(&result.output, max_bytes)
            {
                result.output = short;
            }
        }
    }
}

/// Trims the tool results before the latest assistant message (those of
/// its calls, which the model answers next, stay whole).
pub(crate) fn trim_older_tool_results(messages: &mut [Message], max_bytes: usize) {
    let latest = messages
        .iter()
        .rposition(|m| m.role == Role::Assistant)
        .unwrap_or(0);
    trim_tool_results(&mut messages[..latest], max_bytes);
}

/// The estimated tokens of a message.
pub(crate) fn estimate_message(message: &Message) -> usize {
    json_len(message) / BYTES_PER_TOKEN + 1
}

/// `output` shortened to `max_bytes` of text and the marker, when longer.
pub(crate) fn trimmed(output: &ToolOutput, max_bytes: usize) -> Option<ToolOutput> {
    let text = output.to_model_text();
    if text.len() <= max_bytes {
        return None;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let marker = TRIM_MARKER.replace("{}", &(text.len() - end).to_string());
    let mut out = ToolOutput::text(format!("{}\n{marker}", &text[..end]));
    out.is_error = output.is_error;
    Some(out)
}

/// The index of the first message to send so that the estimate stays within
/// `budget` tokens, cutting only before a user message (0: send them all).
pub(crate) fn first_kept(
    messages: &[Message],
    system: Option<&str>,
    tool_tokens: usize,
    budget: usize,
) -> usize {
    let starts: Vec<usize> = (0..messages.len())
        .filter(|&i| messages[i].role == Role::User)
        .collect();
    let Some(&first_user) = starts.first() else {
        // No user message at all: nowhere to cut.
        return 0;
    };
    let mut used = system.map_or(0, str::len) / BYTES_PER_TOKEN + tool_tokens;
    let mut keep = messages.len();
    for &start in starts.iter().rev() {
        let turn: usize = messages[start..keep].iter().map(estimate_message).sum();
        // The newest turn always goes.
        if keep != messages.len() && used + turn > budget {
            break;
        }
        used += turn;
        keep = start;
    }
    // Messages before the first user message (none in a normal
    // conversation) go only if everything else went too.
    if keep == first_user {
        let head: usize = messages[..keep].iter().map(estimate_message).sum();
        if used + head <= budget {
            return 0;
        }
    }
    keep
}

/// The request to send: `None` when `request` goes as it is, else a copy
/// with its latest summary in place of what it replaces ([`view`]), its
/// older tool results trimmed to `trim` bytes (compaction on, over the
/// budget) and without its oldest turns when it is still over `budget`.
/// `tool_tokens`: the estimated tokens of the definitions the request loads
/// (the turn's, counted once per tool set). `summarised`: the conversation
/// may hold a summary (without, it is not searched for one: a turn of an
/// agent without compaction costs nothing here).
pub(crate) fn fit(
    request: &ModelRequest,
    budget: Option<usize>,
    tool_tokens: usize,
    trim: Option<usize>,
    summarised: bool,
) -> Option<ModelRequest> {
    let mut messages = if summarised {
        view(&request.messages)
    } else {
        None
    };
    if let Some(budget) = budget {
        let system = request.system.as_deref();
        if let Some(max_bytes) = trim {
            let sent = messages.as_deref().unwrap_or(&request.messages);
            let fixed = system.map_or(0, str::len) / BYTES_PER_TOKEN + tool_tokens;
            if fixed + sent.iter().map(estimate_message).sum::<usize>() > budget {
                let mut owned = messages.take().unwrap_or_else(|| request.messages.clone());
                trim_older_tool_results(&mut owned, max_bytes);
                messages = Some(owned);
            }
        }
        let sent = messages.as_deref().unwrap_or(&request.messages);
        let first = first_kept(sent, system, tool_tokens, budget);
        if first > 0 {
            tracing::debug!(
                target: "lousho::agent",
                dropped = first,
                kept = sent.len() - first,
                budget,
                "the conversation is over the context budget: sending the newest turns"
            );
            // Only the kept messages are copied.
            messages = Some(match messages {
                Some(mut owned) => owned.split_off(first),
                None => request.messages[first..].to_vec(),
            });
        }
    }
    Some(ModelRequest {
        system: request.system.clone(),
        messages: messages?,
        tools: request.tools.clone(),
        settings: request.settings.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conversation_without_user_messages_is_sent_whole() {
        let messages = vec![Message::assistant("a".repeat(400))];
        assert_eq!(first_kept(&messages, None, 0, 1), 0);
    }

    #[test]
    fn the_newest_turn_goes_even_past_the_budget() {
        let messages = vec![
            Message::user("old"),
            Message::assistant("old answer"),
            Message::user("x".repeat(4000)),
        ];
        assert_eq!(first_kept(&messages, None, 0, 10), 2);
    }
}
