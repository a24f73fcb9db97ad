"""Connects the official Python MCP SDK's ClientSession to a server named on
the command line, over stdio or Streamable HTTP — the one way every client
script here does it.

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
