// Lists a lousho server's tools with the official TypeScript MCP SDK and
// calls every agent tool (those taking `message`) twice: the SDK checks each
// result's `structuredContent` against the tool's `outputSchema` (a call
// whose structured content does not match throws, failing the script).
// Prints a JSON report on stdout: each agent tool's `outputSchema` and each
// call's `{isError, structured, text}` by tool name (a list of two).
//
// usage: node output_client.mjs stdio <server command> [args...]
//        node output_client.mjs http <url>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connect } from "./connect.mjs";

const client = await connect(new Client({ name: "lousho-interop-ts", version: "0.0.0" }), process.argv.slice(2));
const report = { outputSchemas: {}, calls: {} };
for (const tool of (await client.listTools()).tools) {
  if (!tool.inputSchema?.properties?.message) continue;
  report.outputSchemas[tool.name] = tool.outputSchema ?? null;
  const calls = [];
  for (const n of [1, 2]) {
    const result = await client.callTool({ name: tool.name, arguments: { message: `call ${n}` } });
    calls.push({
      isError: Boolean(result.isError),
      structured: result.structuredContent ?? null,
      text: result.content?.[0]?.text ?? "",
    });
  }
  report.calls[tool.name] = calls;
}
await client.close();
console.log(JSON.stringify(report));
