// The official TypeScript SDK serving one trivial `echo` tool, for the serve
// benchmark: `node echo_server.mjs` (stdio) or `node echo_server.mjs --http`
// (stateless Streamable HTTP with JSON responses on 127.0.0.1; prints
// `listening on <url>`).
import http from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

function makeServer() {
  const server = new Server({ name: "ts-echo", version: "0.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{
      name: "echo",
      description: "Echo the text back",
      inputSchema: { type: "object", properties: { text: { type: "string" } } },
    }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => ({
    content: [{ type: "text", text: req.params.arguments?.text ?? "" }],
  }));
  return server;
}

if (process.argv.includes("--http")) {
  const httpServer = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = JSON.parse(Buffer.concat(chunks).toString() || "null");
    const server = makeServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => { transport.close(); server.close(); });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  httpServer.listen(0, "127.0.0.1", () => {
    console.log(`listening on http://127.0.0.1:${httpServer.address().port}/mcp`);
  });
} else {
  await makeServer().connect(new StdioServerTransport());
}
