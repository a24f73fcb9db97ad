"""Lists a lousho server's tools with the official Python MCP SDK and calls
every agent tool (those taking `message`); prints a JSON report on stdout.

usage: python agents_client.py stdio <server command> [args...]
       python agents_client.py http <url>
"""

import json
import sys

import anyio
from connect import connect
from mcp import ClientSession


async def exercise(session: ClientSession) -> dict:
    await session.initialize()
    tools = (await session.list_tools()).tools
    report: dict = {"tools": [t.name for t in tools], "calls": {}}
    for tool in tools:
        if "message" not in (tool.input_schema or {}).get("properties", {}):
            continue
        result = await session.call_tool(tool.name, {"message": f"hello {tool.name}"})
        report["calls"][tool.name] = {
            "isError": bool(result.is_error),
            "text": result.content[0].text if result.content else "",
        }
    return report


async def main() -> None:
    async with connect(sys.argv[1:]) as session:
        report = await exercise(session)
    print(json.dumps(report))


anyio.run(main)
