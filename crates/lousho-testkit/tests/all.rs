//! lousho-testkit's integration tests: the MCP client against the fixture
//! servers built from this crate (`CARGO_BIN_EXE_lousho-fixture-mcp` is only
//! set for tests of the crate that owns the binary) and against pinned
//! third-party peers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
