// Lists a lousho server's tools with the official TypeScript MCP SDK and calls
// every agent tool (those taking `message`); prints a JSON report on stdout.
//
// usage: node agents_client.mjs stdio <server command> [args...]
//        node agents_client.mjs http <url>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connect } from "./connect.mjs";

const client = await connect(new Client({ name: "lousho-interop-ts", version: "0.0.0" }), process.argv.slice(2));
const tools = (await client.listTools()).tools;
const report = { tools: tools.map((t) => t.name), calls: {} };
for (const tool of tools) {
  if (!tool.inputSchema?.properties?.message) continue;
  const result = await client.callTool({ name: tool.name, arguments: { message: `hello ${tool.name}` } });
  report.calls[tool.name] = { isError: Boolean(result.isError), text: result.content?.[0]?.text ?? "" };
}
await client.close();
console.log(JSON.stringify(report));
