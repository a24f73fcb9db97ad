"""Lists and reads the skills a lousho server serves through the Skills
extension (SEP-2640, `io.modelcontextprotocol/skills`) with the official
Python MCP SDK, and prints a JSON report on stdout (the Rust interop tests
assert on it). The SDK has no skills methods of its own, so `skills/list`
goes out as a typed custom request through `ClientSession.send_request`.

usage: python skills_client.py stdio <server command> [args...]
       python skills_client.py http <url>
"""

import json
import sys
from typing import Any, Literal

import anyio
from mcp import types
from mcp.client.session import ClientSession
from pydantic import BaseModel, ConfigDict

from connect import connect

SKILLS = "io.modelcontextprotocol/skills"


class ListSkillsRequest(types.PaginatedRequest[Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"


class ListSkillsResult(BaseModel):
    model_config = ConfigDict(extra="allow")
    skills: list[dict[str, Any]]
    nextCursor: str | None = None


async def exercise(session: ClientSession) -> dict:
    report: dict = {}
    init = await session.initialize()
    caps = init.capabilities.model_dump(by_alias=True, mode="json", exclude_none=True)
    report["extension"] = caps.get("extensions", {}).get(SKILLS)
    listed = await session.send_request(ListSkillsRequest(), ListSkillsResult)
    report["skills"] = listed.skills
    resources = await session.list_resources()
    report["resources"] = [r.uri for r in resources.resources]
    reads = {}
    for skill in listed.skills:
        for entry in skill["resources"]:
            result = await session.read_resource(entry["uri"])
            content = result.contents[0]
            reads[entry["uri"]] = getattr(content, "text", None)
    report["reads"] = reads
    return report


async def main() -> None:
    async with connect(sys.argv[1:]) as session:
        report = await exercise(session)
    print(json.dumps(report))


anyio.run(main)
