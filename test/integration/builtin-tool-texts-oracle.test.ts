/**
 * What the model and extensions read about the seven built-in tools, on our worker and on
 * upstream pi 1.6.0 as the oracle: each tool's name, description and parameter schema in
 * the model request, and the snippet and guidelines `before_agent_start` hands extensions
 * (`systemPromptOptions.toolSnippets` / `toolGuidelines`), which the system prompt lists.
 * Skipped when test/upstream is not installed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";

const { server, dirs, dir } = useOracleFixture();

/** Writes what its `before_agent_start` handler was handed about the tools to $TOOL_TEXTS_OUT. */
const EXTENSION = `import { writeFileSync } from "node:fs";
export default function (pi) {
  pi.on("before_agent_start", (event) => {
    const o = event.systemPromptOptions;
    writeFileSync(process.env.TOOL_TEXTS_OUT, JSON.stringify({ snippets: o.toolSnippets, guidelines: o.toolGuidelines }));
  });
}
`;

const TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"];

type Json = Record<string, any>;

async function observe(impl: Implementation, args: string[] = []): Promise<Json> {
  const folder = dir(`pi-tool-texts-${impl}-`);
  const extension = join(folder, "texts.ts");
  const out = join(folder, "texts.json");
  writeFileSync(extension, EXTENSION);
  const { w } = startOracle(impl, server, dirs, {
    pi: "1.6.0",
    args: ["-e", extension, "--tools", TOOLS.join(","), ...args],
    env: { TOOL_TEXTS_OUT: out },
  });
  server.enqueue({ text: "ok" });
  const from = w.received.length;
  const firstRequest = server.requests.length;
  expect(await w.request({ type: "prompt", message: "hello" }, 30_000)).toMatchObject({ success: true });
  await w.event("agent_end", 30_000, from);
  const body = server.requests[firstRequest]!.body as { tools: { function: Json }[] };
  return {
    tools: body.tools.map(({ function: f }) => ({
      name: f.name,
      description: f.description,
      parameters: f.parameters,
    })),
    ...JSON.parse(readFileSync(out, "utf8")),
  };
}

describe.skipIf(!UPSTREAM["1.6.0"].installed)("built-in tools' texts: ours and upstream pi 1.6.0", () => {
  it("declares each tool with pi's description and parameter texts, and hands extensions pi's snippets and guidelines", async () => {
    const ours = await observe("ours");
    const upstream = await observe("upstream");
    expect(upstream.tools.map((t: Json) => t.name)).toEqual(TOOLS);
    expect(ours).toEqual(upstream);
    // pi's own words for one of them, so a change of either side is told apart from a difference.
    expect(upstream.snippets.read).toBe("Read file contents");
    expect(upstream.guidelines.bash).toEqual([
      "You can inspect PI_* environment variables for current model and session details.",
    ]);
  }, 60_000);
});
