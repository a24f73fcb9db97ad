"""Uses what a lousho server offers besides tools, as a new user of the
official Python MCP SDK would: its `Client` (mode "auto", which negotiates
protocol 2026-07-28; change events come on a `subscriptions/listen` stream).
Prints a JSON report on stdout.

offers WORKSPACE: lists resources and templates, completes the file
template's `path` (prefix "no"), reads notes.txt and `../outside.txt`
(refused), lists prompts, gets `review` with {path: notes.txt}, completes
its `focus` (prefix "s"); listens to notes.txt, then appends to the file
until the update arrives.

grow: listens for tools/list_changed, calls `add_tool`, waits for the
event and lists the tools again.

usage: python offers_client.py offers|grow [WORKSPACE] stdio <server command> [args...]
       python offers_client.py offers|grow [WORKSPACE] http <url>
"""

import json
import os
import sys

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.shared.exceptions import MCPError

MODE = sys.argv[1]
ARGS = sys.argv[2:]
WORKSPACE = ARGS.pop(0) if MODE == "offers" else None


def target():
    if ARGS[0] == "stdio":
        return StdioServerParameters(command=ARGS[1], args=ARGS[2:])
    return ARGS[1]


def text_of(contents) -> str:
    c = contents[0]
    return getattr(c, "text", None) or f"<blob {getattr(c, 'blob', '')}>"


async def next_event(sub, seconds: float):
    with anyio.move_on_after(seconds):
        return await sub.__anext__()
    return None


async def offers(client: Client) -> dict:
    report: dict = {}
    resources = (await client.list_resources()).resources
    report["resources"] = sorted(r.name for r in resources)
    templates = (await client.list_resource_templates()).resource_templates
    report["templates"] = [t.uri_template for t in templates]
    files = next(t.uri_template for t in templates if t.uri_template.startswith("file://"))
    done = await client.complete(
        types.ResourceTemplateReference(uri=files), {"name": "path", "value": "no"}
    )
    report["path_completions"] = done.completion.values
    notes = next(r.uri for r in resources if r.name == "notes.txt")
    report["notes_uri"] = notes
    report["notes"] = text_of((await client.read_resource(notes)).contents)
    try:
        await client.read_resource(files.replace("{+path}", "../outside.txt"))
        report["outside"] = "read"
    except MCPError as e:
        report["outside"] = e.code

    prompts = (await client.list_prompts()).prompts
    report["prompts"] = {
        p.name: [(a.name, bool(a.required)) for a in (p.arguments or [])] for p in prompts
    }
    got = await client.get_prompt("review", {"path": "notes.txt"})
    report["review"] = [(m.role, m.content.text) for m in got.messages]
    done = await client.complete(types.PromptReference(name="review"), {"name": "focus", "value": "s"})
    report["focus_completions"] = done.completion.values

    async with client.listen(resource_subscriptions=[notes]) as sub:
        path = os.path.join(WORKSPACE, "notes.txt")
        event = None
        with anyio.fail_after(30):
            while event is None:
                with open(path, "a", encoding="utf-8") as f:
                    f.write("more\n")
                event = await next_event(sub, 0.7)
        report["updated"] = getattr(event, "uri", repr(event))
    return report


async def grow(client: Client) -> dict:
    before = sorted(t.name for t in (await client.list_tools()).tools)
    async with client.listen(tools_list_changed=True) as sub:
        result = await client.call_tool("add_tool", {})
        with anyio.fail_after(30):
            event = await sub.__anext__()
    after = sorted(t.name for t in (await client.list_tools(cache_mode="refresh")).tools)
    return {
        "called": result.content[0].text if result.content else "",
        "event": type(event).__name__,
        "before": before,
        "after": after,
    }


async def main() -> None:
    async with Client(target()) as client:
        version = getattr(client.session, "protocol_version", None)
        report = await (offers(client) if MODE == "offers" else grow(client))
    report["protocol_version"] = version
    print(json.dumps(report))


anyio.run(main)
