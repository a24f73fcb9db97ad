//! The `lousho` binary driven as a user drives it: real processes, real
//! pipes, the offline test model. One binary, one module per behaviour.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs,
    unreachable_pub,
    missing_debug_implementations
)]

mod suite;
