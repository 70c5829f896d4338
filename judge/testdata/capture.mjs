// capture.mjs lists the contract of an MCP server over stdio with the
// official TypeScript SDK client and prints it in the JSON form of
// contract.Contract (snake_case, as sandbox/run.go builds it from the Go
// SDK's types). Usage, from a directory where the server and
// @modelcontextprotocol/sdk are installed:
//
//   node capture.mjs <command> [args...] > surface.json
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, stderr: "ignore" });
let protocolVersion = "";
const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (v) => {
  protocolVersion = v;
  setProtocolVersion?.(v);
};
const client = new Client({ name: "verifymcp-capture", version: "0" });
await client.connect(transport);

async function all(method, key) {
  const out = [];
  let cursor;
  do {
    const page = await client[method](cursor ? { cursor } : {});
    out.push(...page[key]);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

const caps = client.getServerCapabilities() ?? {};
const info = client.getServerVersion() ?? {};
const c = {
  protocol_version: protocolVersion,
  server_info: { name: info.name ?? "", ...(info.title ? { title: info.title } : {}), version: info.version ?? "" },
  capabilities: caps,
  ...(client.getInstructions() ? { instructions: client.getInstructions() } : {}),
  tools: [],
  prompts: [],
  resources: [],
  resource_templates: [],
  schema_hash: "",
};
if (caps.tools) {
  for (const t of await all("listTools", "tools")) {
    const tool = { name: t.name, ...(t.title ? { title: t.title } : {}), description: t.description ?? "" };
    if (t.inputSchema) tool.input_schema = t.inputSchema;
    if (t.outputSchema) tool.output_schema = t.outputSchema;
    if (t.annotations) {
      const a = t.annotations;
      tool.annotations = {
        ...(a.title ? { title: a.title } : {}),
        read_only_hint: !!a.readOnlyHint,
        ...(a.destructiveHint !== undefined ? { destructive_hint: a.destructiveHint } : {}),
        idempotent_hint: !!a.idempotentHint,
        ...(a.openWorldHint !== undefined ? { open_world_hint: a.openWorldHint } : {}),
      };
    }
    c.tools.push(tool);
  }
}
if (caps.prompts) {
  for (const p of await all("listPrompts", "prompts")) {
    c.prompts.push({
      name: p.name, ...(p.title ? { title: p.title } : {}), description: p.description ?? "",
      arguments: (p.arguments ?? []).map((a) => ({
        name: a.name, ...(a.title ? { title: a.title } : {}), description: a.description ?? "", required: !!a.required,
      })),
    });
  }
}
if (caps.resources) {
  for (const r of await all("listResources", "resources")) {
    c.resources.push({ uri: r.uri, name: r.name, ...(r.title ? { title: r.title } : {}), description: r.description ?? "", ...(r.mimeType ? { mime_type: r.mimeType } : {}) });
  }
  for (const t of await all("listResourceTemplates", "resourceTemplates")) {
    c.resource_templates.push({ uri_template: t.uriTemplate, name: t.name, ...(t.title ? { title: t.title } : {}), description: t.description ?? "", ...(t.mimeType ? { mime_type: t.mimeType } : {}) });
  }
}
process.stdout.write(JSON.stringify(c, null, 2) + "\n");
await client.close();
