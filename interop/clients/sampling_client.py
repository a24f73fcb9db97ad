"""Answers a lousho-served agent's `sampling/createMessage` with the official
Python MCP SDK: with `tools` (the client declares `sampling.tools`), the
first request gets a `tool_use` of `lookup_order`, the next (carrying the
tool result) gets text quoting that result; with `text`, no tools capability
and a text answer. Calls every agent tool; prints a JSON report on stdout.

usage: python sampling_client.py tools|text stdio <server command> [args...]
       python sampling_client.py tools|text http <url>
"""

import json
import sys

import anyio
from connect import call_agent_tools, connect
from mcp import ClientSession, types

MODE = sys.argv[1]
seen: list = []


def texts(blocks) -> str:
    if not isinstance(blocks, list):
        blocks = [blocks]
    out = []
    for b in blocks:
        if getattr(b, "type", None) == "text":
            out.append(b.text)
        elif getattr(b, "type", None) == "tool_result":
            out.extend(c.text for c in b.content if getattr(c, "type", None) == "text")
    return " ".join(out)


async def sample(context, params: types.CreateMessageRequestParams):
    seen.append(
        {
            "tools": [t.name for t in (params.tools or [])],
            "system": params.system_prompt,
            "last": texts(params.messages[-1].content),
            "messages": len(params.messages),
        }
    )
    last = params.messages[-1].content
    blocks = last if isinstance(last, list) else [last]
    if params.tools and not any(getattr(b, "type", None) == "tool_result" for b in blocks):
        return types.CreateMessageResultWithTools(
            role="assistant",
            model="interop-model",
            stop_reason="toolUse",
            content=[types.ToolUseContent(id="call-1", name="lookup_order", input={"id": "42"})],
        )
    return types.CreateMessageResult(
        role="assistant",
        model="interop-model",
        stop_reason="endTurn",
        content=types.TextContent(type="text", text=f"client model says: {texts(blocks)}"),
    )


async def exercise(session: ClientSession) -> dict:
    _, calls = await call_agent_tools(session)
    return {"calls": calls, "seen": seen}


async def main() -> None:
    caps = types.SamplingCapability(tools=types.SamplingToolsCapability()) if MODE == "tools" else None
    async with connect(sys.argv[2:], sampling_callback=sample, sampling_capabilities=caps) as session:
        report = await exercise(session)
    print(json.dumps(report))


anyio.run(main)
