// A real MCP server written with the official SDK, for the MCP tests: over stdio when run
// as a program (`node mcp-probe-server.mjs`), or handed to a test's HTTP transport through
// `createProbeServer()`. Its tools answer in ways a test can check: `echo` and `add` answer,
// `pid` names the server's process, `spawn_sleeper` leaves a grandchild running (to check
// teardown takes the whole tree), `crash` kills the server in the middle of a call.
import { spawn } from "node:child_process";
import { pathToFileURL } from "node:url";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const TOOLS = [
  {
    name: "echo",
    description: "Echo the text back",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  },
  {
    name: "add",
    description: "Add two numbers",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    },
  },
  { name: "pid", description: "The server's process id", inputSchema: { type: "object", properties: {} } },
  {
    name: "spawn_sleeper",
    description: "Start a long sleep below the server and return its pid",
    inputSchema: { type: "object", properties: {} },
  },
  {
    name: "crash",
    description: "Exit the server in the middle of the call",
    inputSchema: { type: "object", properties: {} },
  },
  { name: "fail", description: "Answer with an error result", inputSchema: { type: "object", properties: {} } },
];

/** A probe server named `name`; connect it to a transport. */
export function createProbeServer(name = "probe") {
  const server = new Server(
    { name, version: "1.0.0" },
    { capabilities: { tools: {} }, instructions: "Probe tools for tests" },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const args = request.params.arguments ?? {};
    const text = (t) => ({ content: [{ type: "text", text: t }] });
    switch (request.params.name) {
      case "echo":
        return text(`echo: ${args.text}`);
      case "add":
        return text(String(Number(args.a) + Number(args.b)));
      case "pid":
        return text(String(process.pid));
      case "spawn_sleeper": {
        const child = spawn("sleep", ["300"], { stdio: "ignore" });
        return text(String(child.pid));
      }
      case "crash":
        process.stderr.write("probe: crashing on purpose\n");
        process.exit(3);
        return text("unreachable");
      case "fail":
        return { content: [{ type: "text", text: "the probe failed on purpose" }], isError: true };
      default:
        return { content: [{ type: "text", text: `unknown tool ${request.params.name}` }], isError: true };
    }
  });
  return server;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.env.PROBE_FAIL_START) {
    process.stderr.write(`probe: refusing to start (${process.env.PROBE_FAIL_START})\n`);
    process.exit(7);
  }
  await createProbeServer(process.env.PROBE_NAME ?? "probe").connect(new StdioServerTransport());
}
