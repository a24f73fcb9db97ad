"""The command line lousho's interop servers on the official Python SDK
share:

    python SERVER.py [--only-2026] [http PORT]

`--only-2026` refuses the `initialize` handshake, as a server that speaks
only protocol 2026-07-28 does, so clients that try it first fall back to
`server/discover` and per-request metadata. Stdio by default; `http PORT`
serves Streamable HTTP on 127.0.0.1:PORT/mcp.
"""

import sys


def parse():
    """The script's arguments without `--only-2026`; if it was given, the
    server refuses `initialize` from now on."""
    args = sys.argv[1:]
    if "--only-2026" not in args:
        return args
    args.remove("--only-2026")
    from mcp.server import runner
    from mcp.shared.exceptions import MCPError
    from mcp_types import UNSUPPORTED_PROTOCOL_VERSION

    def refuse(self, params):
        raise MCPError(
            code=UNSUPPORTED_PROTOCOL_VERSION,
            message="this server speaks only protocol 2026-07-28; use server/discover",
        )

    runner.ServerRunner._handle_initialize = refuse
    return args


def run(server, args):
    """Serves `server` as `args` (from `parse`) say: `http PORT` (the URL
    printed first), else stdio."""
    if len(args) >= 2 and args[0] == "http":
        print(f"listening on http://127.0.0.1:{args[1]}/mcp", flush=True)
        server.run("streamable-http", host="127.0.0.1", port=int(args[1]))
    else:
        server.run("stdio")
