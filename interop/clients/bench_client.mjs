// The official TypeScript SDK's client as a subject of lousho's MCP client
// benchmark (crates/lousho-testkit/benches/mcp_client.rs). It connects once,
// then measures what the benchmark asks on stdin, one JSON line per task, and
// answers one JSON line each, so every figure is taken inside Node (no pipe
// hop per call):
//   {"op":"measure","text":"hi","calls":2000,"secs":5,"inflight":32}
//     → {"p50_us":…,"p99_us":…,"rate":…}
//   {"op":"trip","text":"xxx…","calls":15} → {"median_us":…}
//
// usage: node bench_client.mjs stdio <server command> [args...]
//        node bench_client.mjs http <url>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createInterface } from "node:readline";

const [mode, target, ...rest] = process.argv.slice(2);
const transport =
  mode === "stdio"
    ? new StdioClientTransport({ command: target, args: rest, stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(target));
const client = new Client({ name: "bench", version: "0" });
await client.connect(transport);

const call = (text) => client.callTool({ name: "echo", arguments: { text } });
const micros = (ns) => Number(ns) / 1000;

async function sequential(text, n) {
  const lat = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await call(text);
    lat.push(micros(process.hrtime.bigint() - t));
  }
  return lat.sort((a, b) => a - b);
}

async function measure({ text, calls, secs, inflight }) {
  for (let i = 0; i < 100; i++) await call(text);
  const lat = await sequential(text, calls);
  const deadline = performance.now() + secs * 1000;
  let done = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inflight }, async () => {
      while (performance.now() < deadline) {
        await call(text);
        done++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return {
    p50_us: lat[Math.floor(lat.length / 2)],
    p99_us: lat[Math.floor((lat.length * 99) / 100)],
    rate: done / elapsed,
  };
}

async function trip({ text, calls }) {
  await call(text); // warm-up at this size
  const lat = await sequential(text, calls);
  return { median_us: lat[Math.floor(calls / 2)] };
}

process.stdout.write(JSON.stringify({ ready: true }) + "\n");
for await (const line of createInterface({ input: process.stdin })) {
  const task = JSON.parse(line);
  const answer = task.op === "measure" ? await measure(task) : await trip(task);
  process.stdout.write(JSON.stringify(answer) + "\n");
}
await client.close();
