//! lousho's integration tests: one binary, one module per behaviour.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod suite;
