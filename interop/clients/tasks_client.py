"""Calls a lousho-served agent tool as a task (the `io.modelcontextprotocol/tasks`
extension, SEP-2663) with the official Python MCP SDK's `Client` (mode
"auto": protocol 2026-07-28). The SDK has no tasks support of its own, so this
client brings the extension (`ClientExtension` with a claim on
`resultType: "task"`): the first call is resolved by polling `tasks/get` until
the result; the second call (SLOW, a message that keeps the agent busy) is
polled until its status says it is calling `slow_wait`, cancelled with
`tasks/cancel` and polled until it ends; then `cancel_status` tells whether
the tool saw the cancellation. Prints a JSON report on stdout.

usage: python tasks_client.py TOOL MESSAGE SLOW stdio <server command> [args...]
       python tasks_client.py TOOL MESSAGE SLOW http <url>
"""

import json
import sys
from typing import Any, Literal

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.client.extension import ClientExtension, ResultClaim
from mcp_types import Result
from pydantic import BaseModel, ConfigDict, Field

TASKS = "io.modelcontextprotocol/tasks"
TOOL = sys.argv[1]
MESSAGE = sys.argv[2]
SLOW = sys.argv[3]
polls: list = []


class TaskHandle(Result):
    """`CreateTaskResult`: the task the server made for the call."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    result_type: Literal["task"] = Field(alias="resultType")
    task_id: str = Field(alias="taskId")
    status: str
    poll_interval_ms: int | None = Field(default=None, alias="pollIntervalMs")


class TaskIdParams(types.RequestParams):
    task_id: str = Field(alias="taskId")


class GetTask(types.Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"


class CancelTask(types.Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


class AnyResult(BaseModel):
    model_config = ConfigDict(extra="allow")


async def get(session, task_id: str) -> dict[str, Any]:
    raw = await session.send_request(GetTask(params=TaskIdParams(taskId=task_id)), AnyResult)
    state = raw.model_dump(by_alias=True, mode="json")
    polls.append({"status": state.get("status"), "statusMessage": state.get("statusMessage")})
    return state


async def until_done(session, handle: TaskHandle) -> dict[str, Any]:
    while True:
        state = await get(session, handle.task_id)
        if state.get("status") in ("completed", "failed", "cancelled"):
            return state
        await anyio.sleep((handle.poll_interval_ms or 500) / 1000)


async def resolve(handle: TaskHandle, ctx) -> types.CallToolResult:
    state = await until_done(ctx.session, handle)
    if state["status"] != "completed":
        return types.CallToolResult(content=[types.TextContent(type="text", text=state["status"])], is_error=True)
    return types.CallToolResult.model_validate(state["result"])


class Tasks(ClientExtension):
    identifier = TASKS

    def claims(self):
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=resolve)]


async def main() -> None:
    if sys.argv[4] == "stdio":
        target = StdioServerParameters(command=sys.argv[5], args=sys.argv[6:])
    else:
        target = sys.argv[5]
    async with Client(target, extensions=[Tasks()]) as client:
        version = getattr(client.session, "protocol_version", None)
        await client.list_tools()
        # One call resolved through the task: polled to its result.
        result = await client.call_tool(TOOL, {"message": MESSAGE})
        completed = {
            "isError": bool(result.is_error),
            "text": result.content[0].text if result.content else "",
        }
        # A second task, cancelled once its tool runs.
        handle = await client.session.call_tool(TOOL, {"message": SLOW}, allow_claimed=True)
        assert isinstance(handle, TaskHandle), handle
        with anyio.fail_after(30):
            while "slow_wait" not in ((await get(client.session, handle.task_id)).get("statusMessage") or ""):
                await anyio.sleep(0.1)
        await client.session.send_request(CancelTask(params=TaskIdParams(taskId=handle.task_id)), AnyResult)
        cancelled = await until_done(client.session, handle)
        status = await client.call_tool("cancel_status", {})
        seen = status.content[0].text if status.content else ""
    print(
        json.dumps(
            {
                "protocol_version": version,
                "completed": completed,
                "cancelled": cancelled.get("status"),
                "cancel_status": seen,
                "polls": polls,
            }
        )
    )


anyio.run(main)
