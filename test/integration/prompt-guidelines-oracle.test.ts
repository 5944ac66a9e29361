/**
 * Tool guidelines with stray spaces, blanks and repeats (within one tool and across two),
 * on our worker and on upstream pi 0.73.1 with the same extension and script: what
 * `before_agent_start` gets in `systemPromptOptions.promptGuidelines`, and the Guidelines
 * bullets of the system prompt the model got. Skipped when test/upstream is not installed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startOracle, upstreamInstalled, type Implementation } from "../support/upstream-oracle.js";
import { useOracleFixture } from "../support/oracle-fixture.js";

const { server, dirs, dir } = useOracleFixture();

/** Two tools whose guidelines need pi's normalization; the handler writes what it was handed to $GUIDELINES_OUT. */
const EXTENSION = `import { writeFileSync } from "node:fs";
import { Type } from "typebox";
const execute = async () => ({ content: [{ type: "text", text: "ok" }] });
export default function (pi) {
  pi.registerTool({ name: "alpha", label: "alpha", description: "first tool", parameters: Type.Object({}), execute,
    promptGuidelines: ["  G-one  ", "G-two", "G-one", "   ", "", "G-shared"] });
  pi.registerTool({ name: "beta", label: "beta", description: "second tool", parameters: Type.Object({}), execute,
    promptGuidelines: ["G-shared", "G-three\\n", "\\tG-two "] });
  pi.on("before_agent_start", (event) => {
    writeFileSync(process.env.GUIDELINES_OUT, JSON.stringify(event.systemPromptOptions.promptGuidelines));
  });
}
`;

/** Run one prompt on `impl`; the guidelines the handler got and the prompt's G- bullets. */
async function observe(impl: Implementation): Promise<{ options: string[]; bullets: string[] }> {
  const folder = dir(`pi-guidelines-${impl}-`);
  const extension = join(folder, "guidelines.ts");
  const out = join(folder, "options.json");
  writeFileSync(extension, EXTENSION);
  const { w } = startOracle(impl, server, dirs, { args: ["-e", extension], env: { GUIDELINES_OUT: out } });
  server.enqueue({ text: "ok" });
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message: "hello" }, 30_000)).toMatchObject({ success: true });
  await w.event("agent_end", 30_000, from);
  const first = (server.requests[0].body as { messages: { role: string; content: string }[] }).messages[0];
  expect(first.role).toBe("system");
  // Only the extension's bullets: the built-in tools' texts are each implementation's own.
  const bullets = first.content
    .split("\n")
    .filter((l) => l.startsWith("- G-"))
    .map((l) => l.slice(2));
  return { options: JSON.parse(readFileSync(out, "utf8")) as string[], bullets };
}

describe.skipIf(!upstreamInstalled)("promptGuidelines normalization: our worker and upstream pi", () => {
  it("hands extensions each tool's guidelines trimmed and once, and writes each text once into the prompt, as upstream does", async () => {
    const upstream = await observe("upstream");
    const ours = await observe("ours");
    // Upstream's facts, so a change of either side is told apart from a difference.
    expect(upstream.options.filter((g) => g.startsWith("G-"))).toEqual([
      "G-one",
      "G-two",
      "G-shared",
      "G-shared",
      "G-three",
      "G-two",
    ]);
    expect(upstream.bullets).toEqual(["G-one", "G-two", "G-shared", "G-three"]);
    expect(ours.options.filter((g) => g.startsWith("G-"))).toEqual(upstream.options.filter((g) => g.startsWith("G-")));
    expect(ours.bullets).toEqual(upstream.bullets);
  }, 90_000);
});
