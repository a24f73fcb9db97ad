"""Answers a lousho-served agent's approval over protocol 2026-07-28 with the
official Python MCP SDK's `Client` (mode "auto": `server/discover`, then
multi-round-trip requests): the `tools/call` answers `input_required` with
the approval form, the SDK calls the elicitation callback and retries the
call with the answer. Prints a JSON report on stdout.

usage: python mrtr_client.py allow|deny stdio <server command> [args...]
       python mrtr_client.py allow|deny http <url>
"""

import json
import sys

import anyio
from mcp import Client, StdioServerParameters, types

ANSWER = sys.argv[1]
asked: list = []


async def on_elicit(context, params):
    asked.append({"message": params.message, "schema": params.requested_schema})
    if ANSWER == "allow":
        return types.ElicitResult(action="accept", content={"decision": "allow"})
    return types.ElicitResult(action="accept", content={"decision": "deny", "reason": "not on a Friday"})


async def main() -> None:
    if sys.argv[2] == "stdio":
        target = StdioServerParameters(command=sys.argv[3], args=sys.argv[4:])
    else:
        target = sys.argv[3]
    async with Client(target, elicitation_callback=on_elicit) as client:
        version = getattr(client.session, "protocol_version", None)
        result = await client.call_tool("test-agent", {"message": "delete order 42"})
    print(
        json.dumps(
            {
                "protocol_version": version,
                "result": result.model_dump(by_alias=True, mode="json", exclude_none=True),
                "asked": asked,
            }
        )
    )


anyio.run(main)
