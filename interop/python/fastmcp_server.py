"""A small server on the official Python SDK's high-level API (mcp 2.x
`MCPServer`, formerly FastMCP) for lousho's interop tests."""

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("lousho-interop-python")


@server.tool(title="Add numbers", annotations=ToolAnnotations(readOnlyHint=True))
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


if __name__ == "__main__":
    server.run("stdio")
