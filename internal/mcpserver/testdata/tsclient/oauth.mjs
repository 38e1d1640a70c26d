// The MCP authorization flow as a host runs it, with the TypeScript SDK's
// OAuth client provider (@modelcontextprotocol/sdk client/auth, pinned in
// package-lock.json), then the coordination loop on the token. Run by
// internal/oauth's TestTypeScriptOAuthFlow with AGENTBOX_URL (the MCP
// endpoint) and AGENTBOX_CTX (JSON: client_id, redirect_uri, bob_key,
// bob_id, alice_id, room_id).
//
// The client starts with no credentials: the server's 401 names its
// protected resource metadata, the SDK discovers the authorization server
// from it, runs the authorization-code flow with PKCE for the scopes the
// challenge names (redirectToAuthorization is the user's browser: it
// follows the provider's redirects, the provider's login signs the user in
// at once), exchanges the code, and every later request carries the token.
// Prints one JSON line: what the flow saw, the steps run, the problems.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const url = new URL(process.env.AGENTBOX_URL);
const ctx = JSON.parse(process.env.AGENTBOX_CTX);
const problems = [];
const steps = [];
const flow = {};

// A pre-registered public client: the SDK neither registers nor uses a
// client ID metadata document, as with a Cognito app client.
class Provider {
  get redirectUrl() { return ctx.redirect_uri; }
  get clientMetadata() {
    return {
      client_name: "agentbox oauth test", redirect_uris: [ctx.redirect_uri],
      grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none",
    };
  }
  clientInformation() { return { client_id: ctx.client_id }; }
  tokens() { return this.saved; }
  saveTokens(tokens) { this.saved = tokens; }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
  async redirectToAuthorization(authorizationUrl) {
    flow.scope = authorizationUrl.searchParams.get("scope");
    flow.resource = authorizationUrl.searchParams.get("resource");
    flow.pkce = authorizationUrl.searchParams.get("code_challenge_method");
    let next = authorizationUrl.href;
    for (let i = 0; i < 10; i++) {
      const res = await fetch(next, { redirect: "manual" });
      const loc = res.headers.get("location");
      if (!loc) throw new Error(`the authorization stopped at ${next}: ${res.status}`);
      const to = new URL(loc, next);
      if (to.href.startsWith(ctx.redirect_uri)) {
        this.code = to.searchParams.get("code");
        if (!this.code) throw new Error(`no code: ${to.search}`);
        return;
      }
      next = to.href;
    }
    throw new Error("too many redirects");
  }
}

const provider = new Provider();
const connect = async (options) => {
  const client = new Client({ name: "agentbox-oauth", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url, options));
  return client;
};

// 1. No credentials: the 401 starts the flow, which ends at the redirect.
let alice;
try {
  alice = await connect({ authProvider: provider });
  problems.push("connect without a token succeeded: the server did not challenge");
} catch (e) {
  if (!(e instanceof UnauthorizedError)) problems.push(`connect without a token threw ${e?.message ?? e}, want UnauthorizedError`);
}
// 2. The code, exchanged by the transport with the PKCE verifier.
if (provider.code) {
  const t = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await t.finishAuth(provider.code);
}
flow.token = provider.saved?.token_type ?? null;
flow.scopes = provider.saved?.scope ?? null;
if (!provider.saved?.access_token) problems.push("no access token after the code exchange");

// 3. The coordination loop, alice on the token, bob on his key.
async function call(who, name, args) {
  let res;
  try {
    res = await who.callTool({ name, arguments: args });
  } catch (e) {
    problems.push(`${name}: the client threw ${e?.code ?? ""} ${e?.message ?? e}`);
    return undefined;
  }
  if (res.isError) problems.push(`${name}: ${JSON.stringify(res.structuredContent?.error).slice(0, 300)}`);
  steps.push(name);
  return res.structuredContent ?? {};
}
if (provider.saved) {
  alice = await connect({ authProvider: provider });
  const bob = await connect({ requestInit: { headers: { Authorization: `Bearer ${ctx.bob_key}` } } });
  const primed = await call(alice, "agent_prime", {});
  if (primed?.agent?.agent_id !== ctx.alice_id) problems.push(`agent_prime on the token: agent ${primed?.agent?.agent_id}, want alice`);
  const a = primed?.session_id;
  const b = (await call(bob, "agent_prime", {}))?.session_id;
  const ask = await call(alice, "message_send", {
    session_id: a, idempotency_key: "oauth-ask", destination: { kind: "room", room_id: ctx.room_id },
    body_md: "Bob, please review.", mentions: [ctx.bob_id], requests: [ctx.bob_id],
  });
  const rows = (await call(bob, "inbox_list", { session_id: b }))?.rows ?? [];
  if (rows.length < 1) problems.push("bob's inbox lacks alice's request");
  await call(bob, "request_respond", {
    session_id: b, idempotency_key: "oauth-resp", request_message_id: ask?.message_id,
    expected_revision: "0", status: "accepted", body_md: "On it.",
  });
  const outgoing = await call(alice, "requests_list", { session_id: a, direction: "outgoing" });
  const mine = outgoing?.requests?.find((r) => r.request_message_id === ask?.message_id);
  if (mine?.status !== "accepted") problems.push(`requests_list outgoing: ${JSON.stringify(mine)}, want status accepted`);
  const inbox = (await call(alice, "inbox_list", { session_id: a }))?.rows ?? [];
  if (inbox.length > 0) {
    await call(alice, "inbox_ack", { session_id: a, idempotency_key: "oauth-ack", inbox_seqs: inbox.map((r) => r.inbox_seq) });
  }
  await alice.close();
  await bob.close();
}
console.log(JSON.stringify({ flow, steps, problems }));
