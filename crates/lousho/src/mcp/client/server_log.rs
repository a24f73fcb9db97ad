//! A server's own log messages (`notifications/message`): each becomes a
//! `tracing` event with the target [`SERVER_LOG_TARGET`], the server's name
//! in the field `server` (and the server's logger name in `logger`), at the
//! `tracing` level matching the MCP level.
//!
//! How much a server sends is its entry's [`LogLevel`]
//! ([`McpServer::log_level`](super::McpServer::log_level), `logLevel:` in a
//! spec): a 2025-11-25 server that declares the `logging` capability gets
//! `logging/setLevel` after connecting; a 2026-07-28 server gets the level in
//! each call's `_meta` (`io.modelcontextprotocol/logLevel`), without which it
//! sends no log messages at all.

// Logging is deprecated by SEP-2577 but spoken by 2025-11-25 servers.
#![allow(deprecated)]

use crate::mcp::log_level::from_rmcp_level;
use crate::tool::LogLevel;
use rmcp::model::LoggingMessageNotificationParam;

/// The `tracing` target of servers' log messages. The server's name is the
/// event's `server` field, e.g.
/// `RUST_LOG=lousho::mcp::server_log=info` shows every server's messages of
/// level info and above.
pub const SERVER_LOG_TARGET: &str = "lousho::mcp::server_log";

/// The most of one log message that is kept (longer ones are cut, marked
/// with `…`): a server must not flood the operator's terminal.
const MAX_MESSAGE_BYTES: usize = 4096;

/// The `tracing` level a server's messages of `level` are logged at:
/// `debug` → DEBUG, `info` and `notice` → INFO, `warning` → WARN, the rest →
/// ERROR.
fn tracing_level(level: LogLevel) -> tracing::Level {
    match level {
        LogLevel::Debug => tracing::Level::DEBUG,
        LogLevel::Info | LogLevel::Notice => tracing::Level::INFO,
        LogLevel::Warning => tracing::Level::WARN,
        _ => tracing::Level::ERROR,
    }
}

/// The message's text: a string as it is, other JSON compact; cut at
/// [`MAX_MESSAGE_BYTES`].
fn message_text(data: &serde_json::Value) -> String {
    let mut text = match data {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if text.len() > MAX_MESSAGE_BYTES {
        let mut end = MAX_MESSAGE_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// Logs one of `server`'s messages through `tracing`.
pub(crate) fn emit(server: &str, params: &LoggingMessageNotificationParam) {
    let level = from_rmcp_level(params.level);
    let message = message_text(&params.data);
    let logger = params.logger.as_deref();
    // `tracing`'s level must be a constant at each call site.
    macro_rules! at {
        ($level:expr) => {
            tracing::event!(
                target: SERVER_LOG_TARGET,
                $level,
                server,
                logger,
                mcp_level = %level,
                "{message}"
            )
        };
    }
    match tracing_level(level) {
        tracing::Level::DEBUG => at!(tracing::Level::DEBUG),
        tracing::Level::INFO => at!(tracing::Level::INFO),
        tracing::Level::WARN => at!(tracing::Level::WARN),
        _ => at!(tracing::Level::ERROR),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_map_onto_tracing_and_round_trip_the_wire() {
        use crate::mcp::log_level::to_rmcp_level;
        use LogLevel as L;
        for level in [
            L::Debug,
            L::Info,
            L::Notice,
            L::Warning,
            L::Error,
            L::Critical,
            L::Alert,
            L::Emergency,
        ] {
            assert_eq!(from_rmcp_level(to_rmcp_level(level)), level);
        }
        assert_eq!(tracing_level(L::Notice), tracing::Level::INFO);
        assert_eq!(tracing_level(L::Warning), tracing::Level::WARN);
        assert_eq!(tracing_level(L::Alert), tracing::Level::ERROR);
    }

    #[test]
    fn long_and_structured_messages_are_text() {
        assert_eq!(
            message_text(&serde_json::json!({"a": 1})),
            "{\"a\":1}".to_owned()
        );
        let long = "é".repeat(MAX_MESSAGE_BYTES);
        let cut = message_text(&serde_json::Value::String(long));
        assert!(cut.len() <= MAX_MESSAGE_BYTES + '…'.len_utf8());
        assert!(cut.ends_with('…'));
    }
}
