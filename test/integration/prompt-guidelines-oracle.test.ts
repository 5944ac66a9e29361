/**
 * Tool guidelines with stray spaces, blanks and repeats (within one tool and across two),
 * on our worker and on upstream pi 1.6.0 with the same extension and script: what
 * `before_agent_start` gets in `systemPromptOptions` (`toolGuidelines` by tool, and
 * `promptGuidelines`, empty until a handler adds a rule), and the rule bullets and the
 * handler's own section (`sections`) in the system prompt the model got. Skipped when
 * test/upstream is not installed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";
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
    const o = event.systemPromptOptions;
    writeFileSync(process.env.GUIDELINES_OUT, JSON.stringify({
      promptGuidelines: o.promptGuidelines,
      toolGuidelines: { alpha: o.toolGuidelines.alpha, beta: o.toolGuidelines.beta },
      sections: o.sections,
    }));
    o.promptGuidelines.push("G-extra", "G-one");
    o.sections.house_rules = "Answer in haiku.";
  });
}
`;

/** Run one prompt on `impl`; the guidelines the handler got and the prompt's G- bullets. */
async function observe(
  impl: Implementation,
): Promise<{ options: Record<string, unknown>; bullets: string[]; end: string }> {
  const folder = dir(`pi-guidelines-${impl}-`);
  const extension = join(folder, "guidelines.ts");
  const out = join(folder, "options.json");
  writeFileSync(extension, EXTENSION);
  const { w } = startOracle(impl, server, dirs, {
    pi: "1.6.0",
    args: ["-e", extension],
    env: { GUIDELINES_OUT: out },
  });
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
  // The prompt's end: the working directory, then the handler's section.
  const end = first.content.slice(first.content.lastIndexOf("\n\n<house_rules>"));
  return { options: JSON.parse(readFileSync(out, "utf8")) as Record<string, unknown>, bullets, end };
}

describe.skipIf(!UPSTREAM["1.6.0"].installed)(
  "prompt options of before_agent_start: our worker and upstream pi 1.6.0",
  () => {
    it("hands each tool's guidelines trimmed and once, renders the rules a handler adds and its section, as upstream", async () => {
      const upstream = await observe("upstream");
      const ours = await observe("ours");
      // Upstream's facts, so a change of either side is told apart from a difference.
      expect(upstream.options).toEqual({
        promptGuidelines: [],
        toolGuidelines: { alpha: ["G-one", "G-two", "G-shared"], beta: ["G-shared", "G-three", "G-two"] },
        sections: {},
      });
      expect(upstream.bullets).toEqual(["G-one", "G-two", "G-shared", "G-three", "G-extra"]);
      expect(upstream.end).toBe("\n\n<house_rules>\nAnswer in haiku.\n</house_rules>");
      expect(ours).toEqual(upstream);
    }, 90_000);
  },
);
