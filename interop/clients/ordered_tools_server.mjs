// The official TypeScript SDK serving one `search` tool whose input schema
// lists its properties in an order that is not alphabetical (and a nested
// object's too), over stdio: `node ordered_tools_server.mjs`. lousho must keep
// that order (in `lousho tools --json` and in what the model is given).
// A call of `search` returns its arguments as JSON text, as received;
// `index` sends three progress notifications 300 ms apart (when the call has
// a progress token), then answers.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const server = new Server({ name: "ts-ordered", version: "0.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [{
    name: "search",
    description: "Search the notes",
    inputSchema: {
      type: "object",
      properties: {
        query: { type: "string", description: "what to look for" },
        limit: { type: "integer", minimum: 1 },
        filter: {
          type: "object",
          properties: { tag: { type: "string" }, author: { type: "string" } },
        },
        caseSensitive: { type: "boolean" },
        after: { type: "string", format: "date" },
      },
      required: ["query"],
    },
  }, {
    name: "index",
    description: "Index the notes (slow; reports progress)",
    inputSchema: { type: "object", properties: {} },
  }],
}));
server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
  if (req.params.name === "index") {
    const progressToken = req.params._meta?.progressToken;
    for (let step = 1; step <= 3; step++) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      if (progressToken !== undefined) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken, progress: step, total: 3, message: `indexing part ${step}` },
        });
      }
    }
    return { content: [{ type: "text", text: "indexed" }] };
  }
  return { content: [{ type: "text", text: JSON.stringify(req.params.arguments ?? {}) }] };
});
await server.connect(new StdioServerTransport());
