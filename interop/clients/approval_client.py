"""Asks a lousho-served agent (served with `approvals: elicit`) to do something
that needs approval, answering the approval form as told, with the official
Python MCP SDK; prints a JSON report on stdout (the Rust interop tests assert
on it).

usage: python approval_client.py ANSWER stdio <server command> [args...]
       python approval_client.py ANSWER http <url>
ANSWER: allow | deny (with a reason) | none (no elicitation capability) |
        silent (never answers)
"""

import json
import sys

import anyio
import mcp_types as types
from connect import connect
from mcp import ClientSession


async def run(session: ClientSession, answer: str, asked: list) -> dict:
    await session.initialize()
    result = await session.call_tool("test-agent", {"message": "delete order 42"})
    return {
        "result": result.model_dump(by_alias=True, mode="json", exclude_none=True),
        "asked": asked,
    }


async def main() -> None:
    answer = sys.argv[1]
    asked: list = []

    async def on_elicit(context, params):
        asked.append({"message": params.message, "schema": params.requested_schema})
        if answer == "silent":
            await anyio.sleep_forever()
        if answer == "allow":
            return types.ElicitResult(action="accept", content={"decision": "allow"})
        return types.ElicitResult(action="accept", content={"decision": "deny", "reason": "not on a Friday"})

    kw = {} if answer == "none" else {"elicitation_callback": on_elicit}
    with anyio.fail_after(60):
        async with connect(sys.argv[2:], **kw) as session:
            report = await run(session, answer, asked)
    print(json.dumps(report))


anyio.run(main)
