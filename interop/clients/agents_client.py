"""Lists a lousho server's tools with the official Python MCP SDK and calls
every agent tool (those taking `message`); prints a JSON report on stdout.

usage: python agents_client.py stdio <server command> [args...]
       python agents_client.py http <url>
"""

import json
import sys

import anyio
from connect import call_agent_tools, connect
from mcp import ClientSession


async def exercise(session: ClientSession) -> dict:
    tools, calls = await call_agent_tools(session)
    return {"tools": tools, "calls": calls}


async def main() -> None:
    async with connect(sys.argv[1:]) as session:
        report = await exercise(session)
    print(json.dumps(report))


anyio.run(main)
