//! Use MCP servers (documented at [`crate::mcp`], where its items are
//! re-exported).

mod call;
mod call_failure;
pub(crate) mod catalog;
pub(crate) mod config;
mod connect;
mod connection;
mod elicitation;
mod error;
mod fingerprint;
mod handler;
mod http;
mod identity;
mod input_rounds;
mod instructions;
mod live;
mod load;
mod mentions;
pub(crate) mod naming;
#[cfg(feature = "oauth")]
pub mod oauth;
#[cfg(not(feature = "oauth"))]
mod oauth_off;
mod offered;
mod offers;
mod output_check;
#[cfg(not(feature = "oauth"))]
use oauth_off as oauth;
mod peer_requests;
mod pinning;
mod process;
mod progress;
mod prompts;
mod replies;
mod request;
mod resources;
mod result;
mod roots;
mod sampling;
mod server_log;
#[cfg(feature = "builtin")]
mod skills;
mod stderr;
mod stdio_transport;
mod stdout_watch;
mod tasks;
mod tool;
mod warnings;

pub use call::IDEMPOTENCY_KEY_META;
pub use catalog::{
    DEFAULT_MANIFEST_MAX_AGE, DiskManifestStore, MANIFEST_FORMAT, ManifestOffers, ManifestStore,
    ManifestStoreError, ManifestTool, MemoryManifestStore, ToolManifest,
};
pub use config::{
    ConfigError, DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_SERVER_REQUESTS, DEFAULT_STARTUP_TIMEOUT,
    DEFAULT_STDERR_CAPTURE_BYTES, HttpTransport, IdpSettings, McpConfigFile, McpServers,
    McpTransport, OAuthGrant, OAuthSettings, SigningAlgorithm, StderrMode, StdioTransport,
    ToolFilter, VariableError, expand_variables, parse_mcp_servers, servers_from_value,
};
pub use connect::{ConnectOptions, McpClient, OnError, connect_mcp};
pub use connection::ServerStatus;
pub use elicitation::{
    ElicitationHandler, ElicitationKind, ElicitationRequest, ElicitationResponse, fill_defaults,
};
pub use error::McpError;
pub use fingerprint::ToolFingerprint;
pub use identity::{OWN_ENV_VARS, SPEC_CHAIN_VAR, ServerIdentity};
pub use instructions::MAX_INSTRUCTIONS_BYTES;
pub use load::{LoadOptions, load_mcp_tools};
pub use mentions::{ResourceMention, resource_mentions};
pub use naming::{NameCollision, ToolNames, ToolNaming, qualified_name};
pub use offered::{
    McpPrompt, McpPromptArgument, McpResource, McpResourceTemplate, ResourceContents,
};
pub use progress::{ProgressHook, ServerProgress};
pub use prompts::{CompletionTarget, PromptConversation};
pub use resources::{ResourceUpdates, resource_content, resource_parts};
pub use roots::McpRoot;
pub use sampling::{
    DEFAULT_SAMPLING_MAX_REQUESTS, DEFAULT_SAMPLING_MAX_TOKENS, SamplingError, SamplingHandler,
    SamplingRequest, SamplingResponse, SamplingSettings, SamplingStop,
};
pub use server_log::SERVER_LOG_TARGET;
pub use tool::McpTool;
pub use warnings::LOG_TARGET;
