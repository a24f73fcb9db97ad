"""Lists a lousho server's tools with the official Python MCP SDK and calls
every agent tool (those taking `message`) twice: the SDK checks each
result's `structuredContent` against the tool's `outputSchema` (a call
whose structured content does not match raises, failing the script). Prints
a JSON report on stdout: each agent tool's `outputSchema` and each call's
`{isError, structured, text}` by tool name (a list of two).

usage: python output_client.py stdio <server command> [args...]
       python output_client.py http <url>
"""

import json
import sys

import anyio
from connect import connect


async def main() -> None:
    report: dict = {"outputSchemas": {}, "calls": {}}
    async with connect(sys.argv[1:]) as session:
        await session.initialize()
        for tool in (await session.list_tools()).tools:
            if "message" not in (tool.input_schema or {}).get("properties", {}):
                continue
            report["outputSchemas"][tool.name] = tool.output_schema
            calls = []
            for n in (1, 2):
                result = await session.call_tool(tool.name, {"message": f"call {n}"})
                calls.append(
                    {
                        "isError": bool(result.is_error),
                        "structured": result.structured_content,
                        "text": result.content[0].text if result.content else "",
                    }
                )
            report["calls"][tool.name] = calls
    print(json.dumps(report))


anyio.run(main)
