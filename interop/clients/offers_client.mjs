// Uses what a lousho server offers besides tools with the official
// TypeScript MCP SDK (protocol 2025-11-25: resources/subscribe and
// notifications, so over HTTP the server must be stateful); prints a JSON
// report on stdout (the Rust interop tests assert on it).
//
// offers WORKSPACE: lists resources and templates, completes the file
// template's `path` (prefix "no"), reads notes.txt and `../outside.txt`
// (refused), lists prompts, gets `review` with {path: notes.txt}, completes
// its `focus` (prefix "s"); subscribes to notes.txt, then appends to the
// file until notifications/resources/updated arrives.
// grow: calls `add_tool`, waits for notifications/tools/list_changed and
// lists the tools again.
//
// usage: node offers_client.mjs offers|grow [WORKSPACE] stdio <server command> [args...]
//        node offers_client.mjs offers|grow [WORKSPACE] http <url>
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { connect } from "./connect.mjs";

const [mode, ...rest] = process.argv.slice(2);
const workspace = mode === "offers" ? rest.shift() : null;
const deadline = setTimeout(() => {
  console.error("offers client: not done within 60 s");
  process.exit(2);
}, 60_000);

const heard = [];
let wake = () => {};
const client = new Client({ name: "ts-offers-client", version: "0.0.1" }, { capabilities: {} });
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
  heard.push(n.params.uri);
  wake();
});
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  heard.push("tools/list_changed");
  wake();
});
const heardSomething = (ms) =>
  new Promise((resolve) => {
    if (heard.length) return resolve(true);
    const timer = setTimeout(() => resolve(false), ms);
    wake = () => {
      clearTimeout(timer);
      resolve(true);
    };
  });

await connect(client, rest);
const report = {};
if (mode === "offers") {
  const { resources } = await client.listResources();
  report.resources = resources.map((r) => r.name).sort();
  const { resourceTemplates } = await client.listResourceTemplates();
  report.templates = resourceTemplates.map((t) => t.uriTemplate);
  const files = report.templates.find((t) => t.startsWith("file://"));
  let done = await client.complete({
    ref: { type: "ref/resource", uri: files },
    argument: { name: "path", value: "no" },
  });
  report.path_completions = done.completion.values;
  const notes = resources.find((r) => r.name === "notes.txt").uri;
  report.notes_uri = notes;
  report.notes = (await client.readResource({ uri: notes })).contents[0].text;
  try {
    await client.readResource({ uri: files.replace("{+path}", "../outside.txt") });
    report.outside = "read";
  } catch (e) {
    report.outside = e.code;
  }
  const { prompts } = await client.listPrompts();
  report.prompts = Object.fromEntries(
    prompts.map((p) => [p.name, (p.arguments ?? []).map((a) => [a.name, Boolean(a.required)])]),
  );
  const got = await client.getPrompt({ name: "review", arguments: { path: "notes.txt" } });
  report.review = got.messages.map((m) => [m.role, m.content.text]);
  done = await client.complete({
    ref: { type: "ref/prompt", name: "review" },
    argument: { name: "focus", value: "s" },
  });
  report.focus_completions = done.completion.values;

  await client.subscribeResource({ uri: notes });
  while (!(heard.length > 0)) {
    appendFileSync(join(workspace, "notes.txt"), "more\n");
    await heardSomething(700);
  }
  report.updated = heard[0];
} else {
  report.before = (await client.listTools()).tools.map((t) => t.name).sort();
  const result = await client.callTool({ name: "add_tool", arguments: {} });
  report.called = result.content[0]?.text ?? "";
  while (!heard.includes("tools/list_changed")) {
    await heardSomething(30_000);
  }
  report.event = heard[0];
  report.after = (await client.listTools()).tools.map((t) => t.name).sort();
}
clearTimeout(deadline);
console.log(JSON.stringify(report));
await client.close();
