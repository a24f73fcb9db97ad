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

use crate::model::{Message, ModelRequest, Role};
use crate::tool::search::{BYTES_PER_TOKEN, json_len};

/// The estimated tokens of a message.
pub(crate) fn estimate_message(message: &Message) -> usize {
    json_len(message) / BYTES_PER_TOKEN + 1
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

/// The request to send: `request` itself when it fits `budget`, else a copy
/// without its oldest turns.
/// `tool_tokens`: the estimated tokens of the definitions the request loads
/// (the turn's, counted once per tool set).
pub(crate) fn fit(
    request: &ModelRequest,
    budget: Option<usize>,
    tool_tokens: usize,
) -> Option<ModelRequest> {
    let budget = budget?;
    let first = first_kept(
        &request.messages,
        request.system.as_deref(),
        tool_tokens,
        budget,
    );
    if first == 0 {
        return None;
    }
    tracing::debug!(
        target: "lousho::agent",
        dropped = first,
        kept = request.messages.len() - first,
        budget,
        "the conversation is over the context budget: sending the newest turns"
    );
    // Only the kept messages are copied.
    Some(ModelRequest {
        system: request.system.clone(),
        messages: request.messages[first..].to_vec(),
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
