//! lousho-testkit's integration tests: the MCP client against the fixture
//! servers built from this crate, and served agents driven by real
//! third-party MCP clients (`CARGO_BIN_EXE_*` is only set for tests of the
//! crate that owns the binaries). One binary, one module per behaviour.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs,
    unreachable_pub,
    missing_debug_implementations
)]

mod suite;
