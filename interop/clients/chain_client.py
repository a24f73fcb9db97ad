"""Cancels an agent-as-tool chain from the top with the official Python MCP
SDK: calls `top` (which runs `middle`, which runs `bottom`, every level
waiting until cancelled), waits until `chain_status` says all three levels
started, abandons the call (the SDK sends notifications/cancelled; over HTTP
it also drops the request's stream), then waits until every level saw its
cancellation. Prints a JSON report on stdout.

usage: python chain_client.py stdio <server command> [args...]
       python chain_client.py http <url>
"""

import json
import sys

import anyio
from connect import connect
from mcp import ClientSession

# Generous for a loaded 2-core machine; each wait ends as soon as its event is seen.
WAIT_SECONDS = 30


async def status(session: ClientSession) -> dict:
    return (await session.call_tool("chain_status", {})).structured_content


async def wait_for(session: ClientSession, key: str) -> list:
    seen: list = []
    with anyio.move_on_after(WAIT_SECONDS):
        while len(seen) < 3:
            seen = (await status(session))[key]
            if len(seen) < 3:
                await anyio.sleep(0.05)
    return seen


async def exercise(session: ClientSession) -> dict:
    await session.initialize()
    finished = False
    started: list = []
    async with anyio.create_task_group() as group:

        async def call() -> None:
            nonlocal finished
            await session.call_tool("top", {"message": "go down"})
            finished = True

        group.start_soon(call)
        started = await wait_for(session, "started")
        group.cancel_scope.cancel()
    cancelled = await wait_for(session, "cancelled")
    return {"started": started, "cancelled": cancelled, "finished": finished}


async def main() -> None:
    async with connect(sys.argv[1:]) as session:
        report = await exercise(session)
    print(json.dumps(report))


anyio.run(main)
