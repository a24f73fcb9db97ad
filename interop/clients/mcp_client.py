"""Drives a lousho-served agent with the official Python MCP SDK and prints a
JSON report on stdout (the Rust interop tests assert on it).

usage: python mcp_client.py stdio <server command> [args...]
       python mcp_client.py http <url> [token]
"""

import asyncio
import json
import sys

import anyio
import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def result_json(result):
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


async def exercise(session: ClientSession) -> dict:
    report: dict = {}
    init = await session.initialize()
    report["server_name"] = init.server_info.name
    report["protocol_version"] = init.protocol_version
    tools = await session.list_tools()
    report["tools"] = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in tools.tools]

    progress: list = []

    async def on_progress(value, total, message):
        progress.append({"progress": value, "message": message})

    agent = await session.call_tool("test-agent", {"message": "lookup order 42"}, progress_callback=on_progress)
    report["agent"] = result_json(agent)
    report["agent_progress"] = progress
    report["direct"] = result_json(await session.call_tool("lookup_order", {"id": "7"}))
    report["failure"] = result_json(await session.call_tool("test-agent", {"message": "please fail"}))

    # Cancel a slow agent run by abandoning the call: the SDK sends
    # notifications/cancelled (stdio) or drops the request (HTTP).
    finished = False
    with anyio.move_on_after(1.0):
        await session.call_tool("test-agent", {"message": "be slow"})
        finished = True
    report["slow_call_finished"] = finished
    seen = 0
    for _ in range(50):
        status = await session.call_tool("cancel_status", {})
        seen = status.structured_content["cancelled"]
        if seen:
            break
        await asyncio.sleep(0.1)
    report["cancel_seen"] = seen
    return report


async def raw_http(url: str, token: str | None) -> dict:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    out = {}
    async with httpx2.AsyncClient() as c:
        r = await c.get(url, headers={**accept, **auth})
        out["get"] = {"status": r.status_code, "allow": r.headers.get("allow")}
        r = await c.delete(url, headers={**accept, **auth})
        out["delete"] = {"status": r.status_code, "allow": r.headers.get("allow")}
        r = await c.post(url, json=init, headers={**accept, **auth, "Origin": "http://evil.example.com"})
        out["foreign_origin"] = {"status": r.status_code}
        r = await c.post(url, json=init, headers={**accept, **auth})
        out["plain_init"] = {"status": r.status_code}
        if token:
            r = await c.post(url, json=init, headers=accept)
            out["no_token"] = {"status": r.status_code, "www_authenticate": r.headers.get("www-authenticate")}
            r = await c.post(url, json=init, headers={**accept, "Authorization": "Bearer wrong"})
            out["wrong_token"] = {"status": r.status_code, "www_authenticate": r.headers.get("www-authenticate")}
    return out


async def main() -> None:
    mode = sys.argv[1]
    if mode == "stdio":
        params = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                report = await exercise(session)
    else:
        url = sys.argv[2]
        token = sys.argv[3] if len(sys.argv) > 3 else None
        headers = {"Authorization": f"Bearer {token}"} if token else None
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    report = await exercise(session)
        report["raw"] = await raw_http(url, token)
        if token:
            # The SDK itself, with a wrong token, must fail to connect.
            try:
                async with create_mcp_http_client(headers={"Authorization": "Bearer wrong"}) as http:
                    async with streamable_http_client(url, http_client=http) as (read, write):
                        async with ClientSession(read, write) as session:
                            with anyio.fail_after(10):
                                await session.initialize()
                report["sdk_wrong_token"] = "connected"
            except BaseException as e:  # noqa: BLE001 - report whatever the SDK raised
                report["sdk_wrong_token"] = f"{type(e).__name__}: {e}"
    print(json.dumps(report))


anyio.run(main)
