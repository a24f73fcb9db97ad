"""A small server on the official Python SDK's high-level API (mcp 2.x
`MCPServer`, formerly FastMCP) for lousho's interop tests.

    python fastmcp_server.py            # stdio
    python fastmcp_server.py http PORT  # Streamable HTTP on 127.0.0.1:PORT/mcp
                                        # (stateful, SSE replies: the SDK's defaults)
"""

import sys

from pydantic import BaseModel

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import Completion, ToolAnnotations

server = MCPServer("lousho-interop-python")


@server.tool(title="Add numbers", annotations=ToolAnnotations(readOnlyHint=True))
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


class Name(BaseModel):
    name: str = "Ada"


@server.tool()
async def greet(ctx: Context) -> str:
    """Reports progress, asks the user for a name mid-call, and greets them;
    the result names the request id the call came with."""
    await ctx.report_progress(1, 2, "asking")
    answer = await ctx.elicit("Who is there?", Name)
    await ctx.report_progress(2, 2, "answered")
    name = answer.data.name if answer.action == "accept" else answer.action
    return f"hello {name} (request {ctx.request_id})"


@server.resource("config://app", mime_type="text/plain")
def app_config() -> str:
    """The app's configuration."""
    return "theme = dark\nlanguage = en"


@server.resource("logo://small", mime_type="image/png")
def logo() -> bytes:
    """A 1x1 PNG (a blob resource)."""
    return bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
    )


@server.resource("notes://{topic}", mime_type="text/plain")
def note(topic: str) -> str:
    """Notes on a topic (a resource template)."""
    return f"Notes on {topic}."


@server.prompt(title="Code review")
def review(code: str, language: str = "python") -> str:
    """Asks for a review of some code."""
    return f"Please review this {language} code:\n{code}"


@server.completion()
async def complete(ref, argument, context):
    """Completes the `language` of `review` and the `topic` of notes://."""
    choices = {"language": ["python", "rust", "typescript"], "topic": ["mcp", "rust"]}
    values = [v for v in choices.get(argument.name, []) if v.startswith(argument.value)]
    return Completion(values=values)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "http":
        print(f"listening on http://127.0.0.1:{sys.argv[2]}/mcp", flush=True)
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
