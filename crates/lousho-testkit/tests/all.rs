//! lousho-testkit's integration tests: the MCP client against the fixture
//! servers built from this crate (`CARGO_BIN_EXE_*` is only set for tests of
//! the crate that owns the binary), and the fixture server binaries driven by
//! real third-party MCP clients. One binary, one module per behaviour.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod suite;
