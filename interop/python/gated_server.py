"""A server on the official Python SDK whose tools block on files the test
controls, for lousho's crash-and-resume tests (issue 34).

    GATE_LOG=calls.log python gated_server.py   # stdio

`peek(path)` (read-only) and `poke(path)` (a write: no hints) each append
their name and the call's `dev.lousho/idempotency-key` (from `_meta`) to
$GATE_LOG, then read `path` and answer its text: a FIFO keeps them running
until the test writes to it or closes it.
"""

import os

import anyio

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("lousho-gated")


def _log(ctx: Context, name: str) -> None:
    meta = getattr(ctx.request_context, "meta", None) or {}
    if not isinstance(meta, dict):
        meta = getattr(meta, "model_extra", None) or {}
    key = meta.get("dev.lousho/idempotency-key")
    with open(os.environ["GATE_LOG"], "a") as log:
        log.write(f"{name} {key}\n")


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def peek(path: str, ctx: Context) -> str:
    """Read a file."""
    _log(ctx, "peek")
    return await anyio.to_thread.run_sync(_read, path, abandon_on_cancel=True)


@server.tool()
async def poke(path: str, ctx: Context) -> str:
    """Change a file."""
    _log(ctx, "poke")
    return await anyio.to_thread.run_sync(_read, path, abandon_on_cancel=True)


if __name__ == "__main__":
    server.run("stdio")
