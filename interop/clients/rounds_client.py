"""Talks to a lousho server as a new user of the official Python MCP SDK
would: its `Client` (mode "auto", which negotiates protocol 2026-07-28), with
an elicitation callback (approval forms get `allow`, other forms their
defaults plus `ok: true`) and a sampling callback (with `tools` the client
declares `sampling.tools`: the first request gets a `tool_use` of
`lookup_order`, the next text quoting its result; with `text`, text only).
Every question arrives in an `input_required` round. Calls each tool named on
the command line (agent tools with `{"message": "hello <name>"}`, others with
`{}`); prints a JSON report on stdout.

usage: python rounds_client.py tools|text TOOL[,TOOL...] stdio <server command> [args...]
       python rounds_client.py tools|text TOOL[,TOOL...] http <url>
"""

import json
import sys

import anyio
from mcp import Client, StdioServerParameters, types

MODE = sys.argv[1]
TOOLS = sys.argv[2].split(",")
asked: list = []
sampled: list = []


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


async def on_elicit(context, params):
    schema = params.requested_schema or {}
    asked.append({"message": params.message, "schema": schema})
    props = schema.get("properties", {})
    if "decision" in props:
        return types.ElicitResult(action="accept", content={"decision": "allow"})
    content = {k: v["default"] for k, v in props.items() if "default" in v}
    if "ok" in props:
        content["ok"] = True
    return types.ElicitResult(action="accept", content=content)


async def on_sample(context, params: types.CreateMessageRequestParams):
    sampled.append(
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


async def main() -> None:
    if sys.argv[3] == "stdio":
        target = StdioServerParameters(command=sys.argv[4], args=sys.argv[5:])
    else:
        target = sys.argv[4]
    caps = types.SamplingCapability(tools=types.SamplingToolsCapability()) if MODE == "tools" else None
    calls: dict = {}
    async with Client(
        target,
        elicitation_callback=on_elicit,
        sampling_callback=on_sample,
        sampling_capabilities=caps,
    ) as client:
        version = getattr(client.session, "protocol_version", None)
        listed = {t.name: t for t in (await client.list_tools()).tools}
        for name in TOOLS:
            tool = listed.get(name)
            takes_message = tool is not None and "message" in (tool.input_schema or {}).get("properties", {})
            arguments = {"message": f"hello {name}"} if takes_message else {}
            if name == "test-agent":
                arguments = {"message": "delete order 42"}
            result = await client.call_tool(name, arguments)
            calls[name] = {
                "isError": bool(result.is_error),
                "text": result.content[0].text if result.content else "",
            }
    print(json.dumps({"protocol_version": version, "calls": calls, "asked": asked, "sampled": sampled}))


anyio.run(main)
