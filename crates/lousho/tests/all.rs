//! lousho's integration tests: one binary, one module per behaviour.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs,
    unreachable_pub,
    missing_debug_implementations
)]

mod suite;
