// Answers a lousho-served agent's `sampling/createMessage` with the official
// TypeScript MCP SDK: with `tools` (the client declares `sampling.tools`), the
// first request gets a `tool_use` of `lookup_order`, the next (carrying the
// tool result) gets text quoting that result; with `text`, no tools capability
// and a text answer. Calls every agent tool; prints a JSON report on stdout.
//
// usage: node sampling_client.mjs tools|text stdio <server command> [args...]
//        node sampling_client.mjs tools|text http <url>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connect } from "./connect.mjs";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, ...target] = process.argv.slice(2);
const seen = [];
const texts = (content) =>
  (Array.isArray(content) ? content : [content])
    .flatMap((b) => (b.type === "text" ? [b.text] : b.type === "tool_result" ? b.content.filter((c) => c.type === "text").map((c) => c.text) : []))
    .join(" ");

const sampling = mode === "tools" ? { tools: {} } : {};
const client = new Client({ name: "lousho-interop-ts", version: "0.0.0" }, { capabilities: { sampling } });
client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  const params = request.params;
  const last = params.messages[params.messages.length - 1].content;
  seen.push({
    tools: (params.tools ?? []).map((t) => t.name),
    system: params.systemPrompt,
    last: texts(last),
    messages: params.messages.length,
  });
  const blocks = Array.isArray(last) ? last : [last];
  if (params.tools?.length && !blocks.some((b) => b.type === "tool_result")) {
    return {
      role: "assistant",
      model: "interop-model",
      stopReason: "toolUse",
      content: [{ type: "tool_use", id: "call-1", name: "lookup_order", input: { id: "42" } }],
    };
  }
  return {
    role: "assistant",
    model: "interop-model",
    stopReason: "endTurn",
    content: { type: "text", text: `client model says: ${texts(blocks)}` },
  };
});

await connect(client, target);
const report = { calls: {} };
for (const tool of (await client.listTools()).tools) {
  if (!tool.inputSchema?.properties?.message) continue;
  const result = await client.callTool({ name: tool.name, arguments: { message: `hello ${tool.name}` } });
  report.calls[tool.name] = { isError: Boolean(result.isError), text: result.content?.[0]?.text ?? "" };
}
report.seen = seen;
await client.close();
console.log(JSON.stringify(report));
