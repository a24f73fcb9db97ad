//! Serve an agent (and chosen tools) over MCP, on stdio or Streamable HTTP.
