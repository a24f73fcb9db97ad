"""A server on the official Python SDK's `MCPServer` that uses what a client
offers besides tools: log messages (with `logging/setLevel`), the client's
roots, sampling with the client's model and URL-mode elicitation, each asked
the 2025-11-25 way (a request of the server's own, mid-call). For lousho's
interop tests.

    python client_features_server.py [--only-2026] [http PORT]

`--only-2026` refuses the `initialize` handshake, so the connection speaks
2026-07-28 (where log messages are asked for per request, in `_meta`).
Stdio by default; `http PORT` serves Streamable HTTP on 127.0.0.1:PORT/mcp.
"""

import sys
import warnings

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import EmptyResult, SamplingMessage, SetLevelRequestParams, TextContent

import command_line  # beside this script (its folder is on sys.path)

warnings.simplefilter("ignore")  # the deprecations of logging, roots and sampling

args = command_line.parse()

server = MCPServer("lousho-client-features-python")

LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
# The level the client asked for with `logging/setLevel` (2025-11-25).
asked = {"level": "debug"}


async def set_level(ctx, params: SetLevelRequestParams) -> EmptyResult:
    asked["level"] = params.level
    print(f"client asked for log level {params.level}", file=sys.stderr, flush=True)
    return EmptyResult()


# Declares the `logging` capability (MCPServer has no option for it).
server._lowlevel_server.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)


@server.tool()
async def log(text: str, ctx: Context) -> str:
    """Logs `text` at the levels debug, info, warning and error (those the client asked for)."""
    for level in ["debug", "info", "warning", "error"]:
        if LEVELS.index(level) >= LEVELS.index(asked["level"]):
            await ctx.log(level, f"{level} line: {text}", logger_name="features")
    return "logged"


@server.tool()
async def roots(ctx: Context) -> str:
    """Lists the client's roots (`roots/list`)."""
    listed = await ctx.session.list_roots()
    return " ".join(str(r.uri) for r in listed.roots) or "no roots"


@server.tool()
async def sample(prompt: str, ctx: Context) -> str:
    """Asks the client's model (`sampling/createMessage`)."""
    answer = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
        max_tokens=64,
        system_prompt="Answer in one line.",
    )
    content = answer.content
    return f"model {answer.model} said: {getattr(content, 'text', content)}"


@server.tool()
async def sign_in(ctx: Context) -> str:
    """Sends the user to a sign-in page (URL-mode elicitation)."""
    result = await ctx.elicit_url(
        "Sign in to Example to link your account.",
        "https://example.com/login?state=abc",
        "sign-in-1",
    )
    return f"sign-in: {result.action}"


if __name__ == "__main__":
    command_line.run(server, args)
