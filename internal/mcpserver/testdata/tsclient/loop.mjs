// The whole coordination loop through the official TypeScript 2.x client
// (@modelcontextprotocol/client), in the era AGENTBOX_ERA names: "modern"
// pins protocol 2026-07-28 (server/discover, no initialize, no
// Mcp-Session-Id), "legacy" is the 2025 initialize handshake. Run by
// internal/mcpserver's TestTypeScript2Loop with AGENTBOX_URL and
// AGENTBOX_CTX (JSON: alice_key, bob_key, bob_id, room_id).
//
// Every call passes the session_id agent_prime returned, as a host without
// a stable MCP session must. The client validates every result against its
// own schemas of the negotiated revision (in modern mode, the 2026-07-28
// wire schemas: resultType, ttlMs, cacheScope, DiscoverResult); a result it
// refuses is thrown and reported as a problem. Prints one JSON line.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const url = new URL(process.env.AGENTBOX_URL);
const ctx = JSON.parse(process.env.AGENTBOX_CTX);
const era = process.env.AGENTBOX_ERA;
const problems = [];
const steps = [];

async function connect(key) {
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const options = era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {};
  const client = new Client({ name: "agentbox-loop", version: "1.0.0" }, options);
  await client.connect(transport);
  return { client, transport };
}

// call runs one tool and returns its structuredContent; an isError result
// or a thrown error is a problem unless wantCode names the error expected.
async function call(who, name, args, wantCode) {
  let res;
  try {
    res = await who.client.callTool({ name, arguments: args });
  } catch (e) {
    problems.push(`${name}: the client threw ${e?.code ?? ""} ${e?.message ?? e}`);
    return undefined;
  }
  const sc = res.structuredContent ?? {};
  if (wantCode) {
    if (!res.isError || sc.error?.code !== wantCode) problems.push(`${name}: got ${JSON.stringify(res).slice(0, 300)}, want isError ${wantCode}`);
  } else if (res.isError) {
    problems.push(`${name}: ${JSON.stringify(sc.error).slice(0, 300)}`);
  }
  steps.push(name);
  return sc;
}

const alice = await connect(ctx.alice_key);
const bob = await connect(ctx.bob_key);
const negotiated = {
  era: alice.client.getProtocolEra?.(),
  version: alice.client.getNegotiatedProtocolVersion?.(),
  session: alice.transport.sessionId ?? null,
  server: alice.client.getServerVersion()?.name,
  instructions: alice.client.getInstructions() ?? "",
};

const tools = await alice.client.listTools();
if (!tools.tools.some((t) => t.name === "agent_prime")) problems.push("tools/list lacks agent_prime");

const a = (await call(alice, "agent_prime", {}))?.session_id;
const b = (await call(bob, "agent_prime", {}))?.session_id;
if (!a || !b) problems.push("agent_prime returned no session_id");

// Without the handle, a modern call has no session at all: the tool says so.
if (era === "modern") await call(alice, "checkpoint_get", {}, "NOT_PRIMED");

await call(alice, "message_send", {
  session_id: a, idempotency_key: `loop-${era}-dm`,
  destination: { kind: "dm", recipient_agent_id: ctx.bob_id }, body_md: "Hello Bob.",
});
const ask = await call(alice, "message_send", {
  session_id: a, idempotency_key: `loop-${era}-room`,
  destination: { kind: "room", room_id: ctx.room_id }, body_md: "Bob, please review.",
  mentions: [ctx.bob_id], requests: [ctx.bob_id],
});
const inbox = await call(bob, "inbox_list", { session_id: b });
const rows = inbox?.rows ?? [];
if (rows.length < 2) problems.push(`inbox_list: ${rows.length} rows, want the DM and the request`);
const thread = await call(bob, "thread_read", { session_id: b, message_id: ask?.message_id });
if (!thread?.entries?.length) problems.push("thread_read: no entries");
await call(bob, "request_respond", {
  session_id: b, idempotency_key: `loop-${era}-resp`, request_message_id: ask?.message_id,
  expected_revision: "0", status: "accepted", body_md: "On it.",
});
const acked = await call(bob, "inbox_ack", {
  session_id: b, idempotency_key: `loop-${era}-ack`, inbox_seqs: rows.map((r) => r.inbox_seq),
});
if (!acked) problems.push("inbox_ack: no result");
const incoming = await call(bob, "requests_list", { session_id: b, direction: "incoming" });
const outgoing = await call(alice, "requests_list", { session_id: a, direction: "outgoing" });
const mine = outgoing?.requests?.find((r) => r.request_message_id === ask?.message_id);
if (mine?.status !== "accepted") problems.push(`requests_list outgoing: ${JSON.stringify(mine)}, want status accepted`);
if (!incoming?.requests?.some((r) => r.request_message_id === ask?.message_id)) problems.push("requests_list incoming lacks the request");

await alice.client.close();
await bob.client.close();
console.log(JSON.stringify({ negotiated, steps, problems }));
