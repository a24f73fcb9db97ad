//! [`LogLevel`] on the wire (rmcp's `LoggingLevel`), one mapping for the
//! client (servers' log messages, `logLevel`) and the server (`ctx.log`,
//! `logging/setLevel`).

// Logging is deprecated by SEP-2577 but spoken by 2025-11-25 peers.
#![allow(deprecated)]

use crate::tool::LogLevel;
use rmcp::model::LoggingLevel as L;

/// The rmcp level of `level`.
pub(crate) fn to_rmcp_level(level: LogLevel) -> L {
    match level {
        LogLevel::Debug => L::Debug,
        LogLevel::Info => L::Info,
        LogLevel::Notice => L::Notice,
        LogLevel::Warning => L::Warning,
        LogLevel::Error => L::Error,
        LogLevel::Critical => L::Critical,
        LogLevel::Alert => L::Alert,
        LogLevel::Emergency => L::Emergency,
    }
}

/// The lousho level of an rmcp one.
pub(crate) fn from_rmcp_level(level: L) -> LogLevel {
    match level {
        L::Debug => LogLevel::Debug,
        L::Info => LogLevel::Info,
        L::Notice => LogLevel::Notice,
        L::Warning => LogLevel::Warning,
        L::Error => LogLevel::Error,
        L::Critical => LogLevel::Critical,
        L::Alert => LogLevel::Alert,
        L::Emergency => LogLevel::Emergency,
    }
}
