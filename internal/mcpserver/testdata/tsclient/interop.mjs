// Interop test of the agentbox MCP endpoint with the official TypeScript
// SDK client, which (unlike the go-sdk client) validates structuredContent
// against each tool's outputSchema, error results included. Run by
// internal/mcpserver's TestTypeScriptSDKInterop with AGENTBOX_URL and
// AGENTBOX_CTX (JSON: alice_key, bob_key, bob_id, room_id).
//
// Every tool in tools/list is called once to succeed and once to fail; a
// failure must come back as an isError result carrying the whole error
// envelope (structuredContent.error and the same JSON in the text block),
// never as an exception thrown by the SDK.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { readFileSync } from "node:fs";

const url = new URL(process.env.AGENTBOX_URL);
const ctx = JSON.parse(process.env.AGENTBOX_CTX);
const problems = [];
const counts = { tools: 0, ok: 0, errors: 0 };

const transport = new StreamableHTTPClientTransport(url, {
  requestInit: { headers: { Authorization: `Bearer ${ctx.alice_key}` } },
});
const client = new Client({ name: "agentbox-interop", version: "1.0.0" });
await client.connect(transport);

const tools = [];
let cursor;
do {
  const page = await client.listTools(cursor ? { cursor } : {});
  tools.push(...page.tools);
  cursor = page.nextCursor;
} while (cursor);
counts.tools = tools.length;

// checkError asserts res is an isError result with the whole envelope.
function checkError(label, res, wantCode) {
  const env = res.structuredContent?.error;
  if (!res.isError || !env) {
    problems.push(`${label}: got ${JSON.stringify(res).slice(0, 300)}, want isError with structuredContent.error`);
    return;
  }
  for (const field of ["code", "message", "next_action", "help", "retryable"]) {
    if (!(field in env)) problems.push(`${label}: envelope lacks ${field}`);
  }
  if (wantCode && env.code !== wantCode) problems.push(`${label}: code ${env.code}, want ${wantCode}`);
  const text = res.content?.find((c) => c.type === "text")?.text ?? "";
  let fromText;
  try {
    fromText = JSON.parse(text);
  } catch {
    fromText = undefined;
  }
  if (JSON.stringify(fromText) !== JSON.stringify(res.structuredContent)) {
    problems.push(`${label}: text block ${text.slice(0, 200)} is not the structuredContent envelope`);
  }
  counts.errors++;
}

async function call(label, name, args) {
  try {
    return await client.callTool({ name, arguments: args });
  } catch (e) {
    problems.push(`${label}: the SDK threw ${e?.code ?? ""} ${e?.message ?? e}`);
    return undefined;
  }
}

// Before agent_prime, a tool answers NOT_PRIMED: the first error an agent
// meets, which the SDK used to throw away.
const early = await call("checkpoint_get before agent_prime", "checkpoint_get", {});
if (early) checkError("checkpoint_get before agent_prime", early, "NOT_PRIMED");

// resolve replaces "$ctx.NAME" and "$ok.TOOL.PATH" strings (fixtures.json).
function resolve(v, ok) {
  if (typeof v === "string" && v.startsWith("$")) {
    const [root, ...path] = v.slice(1).split(".");
    let x = root === "ctx" ? ctx : ok;
    for (const p of path) {
      if (x === undefined || x === null) throw new Error(`${v}: nothing at ${p}`);
      x = x[p];
    }
    if (x === undefined) throw new Error(`${v} is undefined`);
    return x;
  }
  if (Array.isArray(v)) return v.map((e) => resolve(e, ok));
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, e]) => [k, resolve(e, ok)]));
  return v;
}

const { calls } = JSON.parse(readFileSync(new URL("./fixtures.json", import.meta.url), "utf8"));
const ok = {};
for (const tool of tools) {
  if (!calls.some((c) => c.tool === tool.name)) {
    problems.push(`${tool.name}: no fixture arguments; add the tool to testdata/tsclient/fixtures.json`);
  }
}
for (const f of calls) {
  if (!tools.some((t) => t.name === f.tool)) {
    problems.push(`fixture ${f.tool}: no such tool in tools/list`);
    continue;
  }
  const args = (label, raw) => {
    try {
      return resolve(raw, ok);
    } catch (e) {
      problems.push(`${f.tool} (${label}): fixture arguments failed: ${e.message}`);
      return undefined;
    }
  };
  const okArgs = args("success", f.ok);
  const good = okArgs && (await call(`${f.tool} (success)`, f.tool, okArgs));
  if (good) {
    if (good.isError) {
      problems.push(`${f.tool} (success): got error ${JSON.stringify(good.structuredContent)}`);
    } else {
      ok[f.tool] = good.structuredContent;
      counts.ok++;
    }
  }
  const errArgs = args("error", f.error);
  const bad = errArgs && (await call(`${f.tool} (error)`, f.tool, errArgs));
  if (bad) checkError(`${f.tool} (error)`, bad, f.code);
}

await client.close();
console.log(JSON.stringify({ counts, problems }));
process.exit(problems.length === 0 ? 0 : 1);
