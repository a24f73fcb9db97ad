mod agent_loop;
mod models;
mod tools;
mod mcp_serve;
