// Asks a lousho-served agent (served with `approvals: elicit`) to do something
// that needs approval, answering the approval form as told, with the official
// TypeScript MCP SDK; prints a JSON report on stdout (the Rust interop tests
// assert on it).
//
// usage: node approval_client.mjs ANSWER stdio <server command> [args...]
//        node approval_client.mjs ANSWER http <url>
// ANSWER: allow | deny (with a reason) | none (no elicitation capability) |
//         silent (never answers)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connect } from "./connect.mjs";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [answer, ...target] = process.argv.slice(2);
const capabilities = answer === "none" ? {} : { elicitation: { form: {} } };
const client = new Client({ name: "ts-approval-client", version: "0.0.1" }, { capabilities });
const asked = [];
if (answer !== "none") {
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push({ message: request.params.message, schema: request.params.requestedSchema });
    if (answer === "silent") return new Promise(() => {});
    if (answer === "allow") return { action: "accept", content: { decision: "allow" } };
    return { action: "accept", content: { decision: "deny", reason: "not on a Friday" } };
  });
}
const deadline = setTimeout(() => {
  console.error("approval client: no result within 60 s");
  process.exit(2);
}, 60_000);
await connect(client, target);
const result = await client.callTool(
  { name: "test-agent", arguments: { message: "delete order 42" } },
  undefined,
  { timeout: 60_000 },
);
clearTimeout(deadline);
console.log(JSON.stringify({ result, asked }));
await client.close();
