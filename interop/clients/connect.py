"""Connects the official Python MCP SDK's ClientSession to a server named on
the command line, over stdio or Streamable HTTP — the one way every client
script here does it — and calls every agent tool a lousho server lists.

    target: ["stdio", command, *args] or ["http", url]
"""

from contextlib import asynccontextmanager
from typing import AsyncIterator

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


@asynccontextmanager
async def connect(target: list[str], **session_options) -> AsyncIterator[ClientSession]:
    if target[0] == "stdio":
        params = StdioServerParameters(command=target[1], args=target[2:])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, **session_options) as session:
                yield session
    else:
        async with streamable_http_client(target[1]) as (read, write):
            async with ClientSession(read, write, **session_options) as session:
                yield session


async def call_agent_tools(session: ClientSession) -> tuple[list, dict]:
    """Initialises `session`, lists its tools and calls each agent tool (those
    taking `message`) with `hello <name>`: the tool names, and each call's
    `{isError, text}` by name."""
    await session.initialize()
    tools = (await session.list_tools()).tools
    calls: dict = {}
    for tool in tools:
        if "message" not in (tool.input_schema or {}).get("properties", {}):
            continue
        result = await session.call_tool(tool.name, {"message": f"hello {tool.name}"})
        calls[tool.name] = {
            "isError": bool(result.is_error),
            "text": result.content[0].text if result.content else "",
        }
    return [t.name for t in tools], calls
