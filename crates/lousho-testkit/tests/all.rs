//! lousho-testkit's integration tests: the fixture server binary driven by
//! real third-party MCP clients. One binary, one module per behaviour.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod suite;
