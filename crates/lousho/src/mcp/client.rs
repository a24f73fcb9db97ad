//! Use MCP servers: connect stdio and Streamable HTTP servers and mount their tools.
