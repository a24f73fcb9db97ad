// Connects an official TypeScript SDK Client to a server named on the
// command line, over stdio or Streamable HTTP — the one way every client
// script here does it. target: [mode, command-or-url, ...args].
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export async function connect(client, [mode, target, ...rest]) {
  if (mode === "stdio") {
    await client.connect(new StdioClientTransport({ command: target, args: rest, stderr: "inherit" }));
  } else {
    await client.connect(new StreamableHTTPClientTransport(new URL(target)));
  }
  return client;
}
