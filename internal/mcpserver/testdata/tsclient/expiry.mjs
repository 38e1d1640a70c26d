// Session expiry through an official TypeScript client, run by
// internal/mcpserver's TestSessionExpiryEverySDK with AGENTBOX_URL and
// AGENTBOX_KEY. The first argument picks the client: "sdk" for
// @modelcontextprotocol/sdk (1.x), "client" for @modelcontextprotocol/client
// (2.x, in its default legacy mode: initialize and Mcp-Session-Id).
//
// One connection, never reopened: agent_prime, a call that succeeds, then
// the script prints {"step":"idle"} and waits for a line on stdin while the
// Go side moves the server's clock past the idle window. The next call must
// come back as an isError NOT_PRIMED result (not a thrown error), agent_prime
// on the same client must succeed, and so must the call after it. The last
// line is the report: {"done": true, problems, initializes, sessions}.
import { createInterface } from "node:readline";

const mode = process.argv[2];
let Client, StreamableHTTPClientTransport;
if (mode === "sdk") {
  ({ Client } = await import("@modelcontextprotocol/sdk/client/index.js"));
  ({ StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js"));
} else if (mode === "client") {
  ({ Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client"));
} else {
  throw new Error(`unknown client ${mode}: want sdk or client`);
}

const problems = [];
// What the client sent: how many initialize requests, which session ids.
const sent = { initializes: 0, sessions: new Set() };
async function recordingFetch(input, init) {
  const body = typeof init?.body === "string" ? init.body : "";
  if (/"method"\s*:\s*"initialize"/.test(body)) sent.initializes++;
  const sid = new Headers(init?.headers).get("mcp-session-id");
  if (sid) sent.sessions.add(sid);
  return fetch(input, init);
}

const stdin = createInterface({ input: process.stdin });
const lines = stdin[Symbol.asyncIterator]();
const transport = new StreamableHTTPClientTransport(new URL(process.env.AGENTBOX_URL), {
  requestInit: { headers: { Authorization: `Bearer ${process.env.AGENTBOX_KEY}` } },
  fetch: recordingFetch,
});
const client = new Client({ name: `agentbox-expiry-${mode}`, version: "1.0.0" });
await client.connect(transport);

async function call(label, name) {
  try {
    return await client.callTool({ name, arguments: {} });
  } catch (e) {
    problems.push(`${label}: the client threw ${e?.code ?? ""} ${e?.message ?? e}`);
    return undefined;
  }
}

function ok(label, res) {
  if (res && res.isError) problems.push(`${label}: ${JSON.stringify(res.structuredContent)}, want success`);
  return res?.structuredContent;
}

const first = ok("agent_prime", await call("agent_prime", "agent_prime"));
ok("checkpoint_get", await call("checkpoint_get", "checkpoint_get"));

console.log(JSON.stringify({ step: "idle" }));
await lines.next();

const expired = await call("checkpoint_get after the idle window", "checkpoint_get");
if (expired) {
  const env = expired.structuredContent?.error;
  if (!expired.isError || env?.code !== "NOT_PRIMED") {
    problems.push(`checkpoint_get after the idle window: ${JSON.stringify(expired).slice(0, 300)}, want isError NOT_PRIMED`);
  } else if (!env.next_action?.includes("agent_prime")) {
    problems.push(`NOT_PRIMED next_action ${JSON.stringify(env.next_action)} does not say to call agent_prime`);
  }
}
const again = ok("agent_prime after the expiry", await call("agent_prime after the expiry", "agent_prime"));
if (first && again && again.session_id !== first.session_id) {
  problems.push(`agent_prime after the expiry returned session ${again.session_id}, want the connection's ${first.session_id} bound again`);
}
ok("checkpoint_get after priming again", await call("checkpoint_get after priming again", "checkpoint_get"));

await client.close();
stdin.close();
console.log(JSON.stringify({ done: true, problems, initializes: sent.initializes, sessions: sent.sessions.size }));
