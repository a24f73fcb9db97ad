// Cancels an agent-as-tool chain from the top with the official TypeScript
// MCP SDK: calls `top` (which runs `middle`, which runs `bottom`, every level
// waiting until cancelled), waits until `chain_status` says all three levels
// started, aborts the call (the SDK sends notifications/cancelled), then
// waits until every level saw its cancellation. Prints a JSON report.
//
// usage: node chain_client.mjs stdio <server command> [args...]
//        node chain_client.mjs http <url>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connect } from "./connect.mjs";

// Generous for a loaded 2-core machine; each wait ends as soon as its event is seen.
const WAIT_MS = 30_000;

const client = await connect(new Client({ name: "lousho-interop-ts", version: "0.0.0" }), process.argv.slice(2));

async function waitFor(key) {
  const deadline = Date.now() + WAIT_MS;
  let seen = [];
  while (seen.length < 3 && Date.now() < deadline) {
    seen = (await client.callTool({ name: "chain_status", arguments: {} })).structuredContent[key];
    if (seen.length < 3) await new Promise((r) => setTimeout(r, 50));
  }
  return seen;
}

const controller = new AbortController();
const call = client
  .callTool({ name: "top", arguments: { message: "go down" } }, undefined, {
    signal: controller.signal,
    timeout: WAIT_MS * 2,
  })
  .then(
    () => true,
    () => false,
  );
const started = await waitFor("started");
controller.abort("cancelled from the top");
const finished = await call;
const cancelled = await waitFor("cancelled");
await client.close();
console.log(JSON.stringify({ started, cancelled, finished }));
