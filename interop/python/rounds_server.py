"""A server on the official Python SDK's `MCPServer` that asks the client for
input through resolvers (`Elicit`, `ListRoots`, `Sample`): with a client of
protocol 2026-07-28 each question comes back as an `input_required` round
and the tool runs on the client's retry. For lousho's interop tests.

    python rounds_server.py [--only-2026] [http PORT]

`--only-2026` refuses the `initialize` handshake (as a server that speaks
only 2026-07-28 does), so clients that try it first fall back to
`server/discover` and per-request metadata. Stdio by default; `http PORT`
serves Streamable HTTP on 127.0.0.1:PORT/mcp.
"""

from typing import Annotated

from pydantic import BaseModel

from mcp.server.mcpserver import Elicit, ListRoots, MCPServer, Resolve, Sample
from mcp.types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent

import command_line  # beside this script (its folder is on sys.path)

args = command_line.parse()

server = MCPServer("lousho-rounds-python")


class Name(BaseModel):
    name: str = "Ada"


async def ask_name() -> Elicit[Name]:
    return Elicit("Who is there?", Name)


@server.tool()
async def greet(who: Annotated[Name, Resolve(ask_name)]) -> str:
    """Asks the user for a name (an elicitation) and greets them."""
    return f"hello {who.name}"


async def ask_roots() -> ListRoots:
    return ListRoots()


@server.tool()
async def roots(listed: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
    """Lists the client's roots."""
    return " ".join(str(r.uri) for r in listed.roots) or "no roots"


async def ask_model() -> Sample:
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text="say hi"))],
        max_tokens=50,
    )


@server.tool()
async def sample(answer: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """Asks the client's model to say hi."""
    content = answer.content
    return f"model said: {getattr(content, 'text', content)}"


if __name__ == "__main__":
    command_line.run(server, args)
