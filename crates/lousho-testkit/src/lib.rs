//! Test helpers for lousho: fixture tools, mock provider servers and fixture
//! MCP servers. Not published.

#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod bench;
pub mod cassette;
pub mod hostile;
pub mod mcp_fixture;
pub mod mock_provider;
pub mod oauth_fixture;
pub mod oidc_provider;
#[cfg(feature = "otel")]
pub mod otlp;
pub mod postgres;
pub mod replicas;
pub mod serve;
pub mod tools;
