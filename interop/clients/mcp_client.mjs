// Drives a lousho-served agent with the official TypeScript MCP SDK and prints
// a JSON report on stdout (the Rust interop tests assert on it).
//
// usage: node mcp_client.mjs stdio <server command> [args...]
//        node mcp_client.mjs http <url> [token]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, ...rest] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function exercise(client) {
  const report = {};
  report.server_name = client.getServerVersion()?.name;
  report.tools = (await client.listTools()).tools;
  const progress = [];
  report.agent = await client.callTool(
    { name: "test-agent", arguments: { message: "lookup order 42" } },
    undefined,
    { onprogress: (p) => progress.push({ progress: p.progress, message: p.message }) },
  );
  report.agent_progress = progress;
  report.direct = await client.callTool({ name: "lookup_order", arguments: { id: "7" } });
  report.failure = await client.callTool({ name: "test-agent", arguments: { message: "please fail" } });

  // Cancel a slow agent run: aborting the call sends notifications/cancelled.
  const abort = new AbortController();
  let finished = false;
  const slow = client
    .callTool({ name: "test-agent", arguments: { message: "be slow" } }, undefined, { signal: abort.signal })
    .then(() => { finished = true; })
    .catch(() => {});
  await sleep(500);
  abort.abort("test cancels");
  await slow;
  report.slow_call_finished = finished;
  let seen = 0;
  for (let i = 0; i < 50 && !seen; i++) {
    const status = await client.callTool({ name: "cancel_status", arguments: {} });
    seen = status.structuredContent.cancelled;
    if (!seen) await sleep(100);
  }
  report.cancel_seen = seen;
  return report;
}

async function raw(url, token) {
  const init = {
    jsonrpc: "2.0", id: 1, method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
  };
  const base = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
  const auth = token ? { Authorization: `Bearer ${token}` } : {};
  const post = (headers, body = JSON.stringify(init)) => fetch(url, { method: "POST", headers, body });
  const out = {};
  let r = await fetch(url, { method: "GET", headers: { ...base, ...auth } });
  out.get = { status: r.status, allow: r.headers.get("allow") };
  r = await post({ ...base, ...auth, Origin: "http://evil.example.com" });
  out.foreign_origin = { status: r.status };
  r = await post({ ...base, ...auth }, "{not json");
  out.malformed = { status: r.status, body: await r.text() };
  if (token) {
    r = await post(base);
    out.no_token = { status: r.status, www_authenticate: r.headers.get("www-authenticate") };
    r = await post({ ...base, Authorization: "Bearer wrong" });
    out.wrong_token = { status: r.status, www_authenticate: r.headers.get("www-authenticate") };
  }
  return out;
}

const client = new Client({ name: "lousho-interop-ts", version: "0.0.0" });
let report;
if (mode === "stdio") {
  await client.connect(new StdioClientTransport({ command: target, args: rest, stderr: "inherit" }));
  report = await exercise(client);
  await client.close();
} else {
  const token = rest[0];
  const opts = token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(target), opts));
  report = await exercise(client);
  await client.close();
  report.raw = await raw(target, token);
  if (token) {
    const bad = new Client({ name: "lousho-interop-ts", version: "0.0.0" });
    try {
      await bad.connect(new StreamableHTTPClientTransport(new URL(target), {
        requestInit: { headers: { Authorization: "Bearer wrong" } },
      }));
      report.sdk_wrong_token = "connected";
    } catch (e) {
      report.sdk_wrong_token = String(e);
    }
  }
}
console.log(JSON.stringify(report));
