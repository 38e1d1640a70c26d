// Compiles every inputSchema and outputSchema of tools/list, as the
// official TypeScript SDK client receives them, under Ajv's strict mode
// (JSON Schema 2020-12, with ajv-formats for uuid and date-time): unknown
// keywords, malformed keyword values and unknown formats are errors. Run by
// internal/mcpserver's TestToolSchemasCompileUnderAjvStrict with
// AGENTBOX_URL, AGENTBOX_KEY and AGENTBOX_EXAMPLE_TOOLS (a JSON list of the
// tools whose input schema may keep seed 002's "example" keyword).
//
// ajv and ajv-formats are the SDK's own dependencies (npm ls ajv), so the
// versions that validate tool results in the SDK are the ones used here.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const exampleTools = new Set(JSON.parse(process.env.AGENTBOX_EXAMPLE_TOOLS));
const transport = new StreamableHTTPClientTransport(new URL(process.env.AGENTBOX_URL), {
  requestInit: { headers: { Authorization: `Bearer ${process.env.AGENTBOX_KEY}` } },
});
const client = new Client({ name: "agentbox-strict-schemas", version: "1.0.0" });
await client.connect(transport);

const tools = [];
let cursor;
do {
  const page = await client.listTools(cursor ? { cursor } : {});
  tools.push(...page.tools);
  cursor = page.nextCursor;
} while (cursor);

const problems = [];
let compiled = 0;
for (const tool of tools) {
  for (const [which, schema] of [["inputSchema", tool.inputSchema], ["outputSchema", tool.outputSchema]]) {
    if (!schema) {
      problems.push(`${tool.name}: no ${which}`);
      continue;
    }
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats(ajv);
    if (which === "inputSchema" && exampleTools.has(tool.name)) {
      ajv.addKeyword({ keyword: "example" });
    }
    try {
      ajv.compile(schema);
      compiled++;
    } catch (e) {
      problems.push(`${tool.name}.${which}: ${e.message}`);
    }
  }
}
await client.close();
console.log(JSON.stringify({ tools: tools.length, compiled, problems }));
