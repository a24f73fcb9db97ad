// The official TypeScript SDK with sessions (stateful Streamable HTTP) and a
// tool `ask` that elicits through `server.request`, with no related request:
// the SDK sends such a request on the session's standalone GET stream and,
// with no event store, drops it when that stream is not open yet. GET is
// answered after GET_DELAY_MS (default 400), so a client that calls `ask`
// before its GET stream is open loses the question and the call never ends.
// `node standalone_elicit_server.mjs` prints `listening on <url>`.
import http from "node:http";
import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ListToolsRequestSchema,
  isInitializeRequest,
} from "@modelcontextprotocol/sdk/types.js";

const getDelay = Number(process.env.GET_DELAY_MS ?? 400);
const sessions = new Map();

function makeServer() {
  const server = new Server({ name: "standalone-elicit", version: "0.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{ name: "ask", description: "Asks the user their name", inputSchema: { type: "object", properties: {} } }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async () => {
    const answer = await server.request(
      {
        method: "elicitation/create",
        params: {
          message: "Who are you?",
          requestedSchema: { type: "object", properties: { name: { type: "string", default: "John Doe" } } },
        },
      },
      ElicitResultSchema,
    );
    return { content: [{ type: "text", text: `${answer.action}: ${JSON.stringify(answer.content ?? {})}` }] };
  });
  return server;
}

const httpServer = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const text = Buffer.concat(chunks).toString();
  const body = text ? JSON.parse(text) : undefined;
  const id = req.headers["mcp-session-id"];
  let transport = id ? sessions.get(id) : undefined;
  if (!transport) {
    if (req.method !== "POST" || !isInitializeRequest(body)) {
      res.writeHead(400).end("no session");
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => sessions.set(sid, transport),
    });
    transport.onclose = () => sessions.delete(transport.sessionId);
    await makeServer().connect(transport);
  }
  if (req.method === "GET") await new Promise((r) => setTimeout(r, getDelay));
  await transport.handleRequest(req, res, body);
});
httpServer.listen(0, "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${httpServer.address().port}/mcp`);
});
