// Lists a lousho server's tools with the official TypeScript MCP SDK and calls
// every agent tool (those taking `message`); prints a JSON report on stdout.
//
// usage: node agents_client.mjs stdio <server command> [args...]
//        node agents_client.mjs http <url>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, ...rest] = process.argv.slice(2);
const client = new Client({ name: "lousho-interop-ts", version: "0.0.0" });
if (mode === "stdio") {
  await client.connect(new StdioClientTransport({ command: target, args: rest, stderr: "inherit" }));
} else {
  await client.connect(new StreamableHTTPClientTransport(new URL(target)));
}
const tools = (await client.listTools()).tools;
const report = { tools: tools.map((t) => t.name), calls: {} };
for (const tool of tools) {
  if (!tool.inputSchema?.properties?.message) continue;
  const result = await client.callTool({ name: tool.name, arguments: { message: `hello ${tool.name}` } });
  report.calls[tool.name] = { isError: Boolean(result.isError), text: result.content?.[0]?.text ?? "" };
}
await client.close();
console.log(JSON.stringify(report));
