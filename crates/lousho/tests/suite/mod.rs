mod agent_hooks;
mod agent_loop;
mod agent_tools;
mod approvals;
mod budgets;
#[cfg(feature = "builtin")]
mod builtins_clock;
#[cfg(feature = "builtin")]
mod builtins_fs;
#[cfg(feature = "builtin")]
mod builtins_races;
#[cfg(feature = "builtin")]
mod builtins_sandbox;
#[cfg(feature = "builtin")]
mod builtins_todo;
mod cassette_model;
mod compaction;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod compaction_journal;
mod context_budget;
#[cfg(feature = "mcp-server")]
mod mcp_serve;
#[cfg(feature = "mcp-server")]
mod mcp_serve_approvals;
#[cfg(feature = "mcp-server")]
mod mcp_serve_caller_limits;
#[cfg(feature = "mcp-server")]
mod mcp_serve_errors;
#[cfg(all(feature = "mcp-server", feature = "builtin", unix))]
mod mcp_serve_files;
#[cfg(feature = "mcp-server")]
mod mcp_serve_hosts;
#[cfg(feature = "mcp-server")]
mod mcp_serve_icons;
#[cfg(feature = "mcp-server")]
mod mcp_serve_limits;
#[cfg(feature = "mcp-server")]
mod mcp_serve_load;
#[cfg(feature = "mcp-server")]
mod mcp_serve_offers;
#[cfg(feature = "mcp-server")]
mod mcp_serve_sessions;
#[cfg(feature = "mcp-server")]
mod mcp_serve_talk_back;
#[cfg(feature = "mcp-server")]
mod mcp_serve_text_progress;
#[cfg(feature = "mcp-server")]
mod mcp_serve_transcripts;
mod model_errors;
mod model_fallback;
mod model_limits;
mod models;
mod module_layers;
mod permissions;
mod providers_anthropic;
mod providers_cache;
mod providers_common;
mod providers_compatible;
mod providers_openai;
mod providers_thinking;
mod resume;
mod run_request;
mod sampling_model;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod session_journal;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod session_processes;
mod session_store;
#[cfg(all(feature = "builtin", feature = "spec"))]
mod skills_local;
#[cfg(feature = "spec")]
mod spec_agents;
#[cfg(feature = "spec")]
mod spec_files;
#[cfg(feature = "spec")]
mod spec_limits;
#[cfg(all(feature = "spec", feature = "mcp-server"))]
mod spec_serve_offers;
mod structured_output;
mod tool_input;
mod tool_offer;
mod tool_search;
mod tool_search_native;
mod tools;
mod usage;
#[cfg(feature = "mcp-server")]
mod usage_served;
