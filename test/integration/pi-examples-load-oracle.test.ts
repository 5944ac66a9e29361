/**
 * Every one of pi 1.6.0's example extensions, with upstream pi 1.6.0 as the oracle: each
 * loaded alone (`-e`) on our worker and on upstream `pi --mode rpc` (same mock model
 * server), then the same script on both: `get_commands`, then one prompt the model
 * answers. The two transcripts (see test/support/oracle-transcript.ts) must be
 * equal: what the example says at start-up (status, widgets, notices, errors), the commands
 * it registers, what it adds to the model's request (system prompt, messages, tools) and
 * what it does around a run. The behaviour of most examples is exercised further by the
 * other pi-examples-* oracle tests; EXAMPLES_LEFT_OUT names each example this test leaves
 * out and why. Skipped when test/upstream is not installed (the e2e project's setup, test/support/e2e-setup.ts, installs it).
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { transcriptsOf, type Transcript } from "../support/oracle-transcript.js";
import { EXAMPLE_DIFFERENCES } from "../differential/deliberate.js";
import { UPSTREAM } from "../support/upstream-oracle.js";

type Line = Record<string, any>;

const { servers, dirs } = useOracleFixture();
const PI = "1.6.0";
const installed = UPSTREAM[PI].installed;

/**
 * The examples this test does not run, each with its reason. Keep README's list (section
 * "Extensions") the same.
 */
const EXAMPLES_LEFT_OUT: Record<string, string> = {
  "gondolin/":
    "needs its own npm dependencies (@earendil-works/gondolin, not installed with pi) and a Gondolin VM; pi 1.6.0 does not start without them either",
};

/**
 * Lines an example sends at its own pace, left out on both sides: titlebar-spinner's titles
 * (frames 80 ms apart while a run goes, the last one at agent_settled, after the script's
 * agent_end; the commands oracle test waits for them and compares them).
 */
const DROP: Record<string, (l: Line) => boolean> = {
  "titlebar-spinner": (l) => l.type === "extension_ui_request" && l.method === "setTitle",
};

/** What a transcript may differ in for one example, made equal on both sides before comparing. */
const NORMALIZE: Record<string, (text: string) => string> = {
  // It shows the system prompt's length; ours words its own prompt (the prompt-events oracle
  // test checks the length is the prompt's the model got).
  "system-prompt-header": (text) => text.replace(/System: \d+ chars/g, "System: <n> chars"),
};

/** The examples folder's entries as `-e` takes them: a file without `.ts`, a folder with a final `/`. */
function examples(): string[] {
  const root = join(UPSTREAM[PI].package, "examples/extensions");
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() || e.name.endsWith(".ts"))
    .map((e) => (e.isDirectory() ? `${e.name}/` : e.name.slice(0, -3)))
    .sort();
}

/** EXAMPLE_DIFFERENCES.themeColours: a transcript with the theme's ANSI escapes taken out. */
function unstyled(t: Transcript): Transcript {
  void EXAMPLE_DIFFERENCES.themeColours;
  return JSON.parse(JSON.stringify(t).replace(/\\u001b\[[0-9;]*m/g, "")) as Transcript;
}

const ALL = installed ? examples() : [];
const RUN = ALL.filter((e) => !(e in EXAMPLES_LEFT_OUT));

describe.skipIf(!installed)("every pi 1.6.0 example extension loads and runs a prompt as on pi 1.6.0", () => {
  it("the list left out names only examples that exist", () => {
    for (const name of Object.keys(EXAMPLES_LEFT_OUT)) expect(ALL).toContain(name);
  });

  it.each(RUN)(
    "%s",
    async (example) => {
      // Both sides at once, each on its own mock model server: the test waits for the slower.
      const t = await transcriptsOf(
        servers,
        dirs,
        { pi: PI, examples: [example] },
        async (s) => {
          const commands = await s.send({ type: "get_commands" });
          s.note((commands.data?.commands ?? []).map((c: Line) => [c.name, c.description]));
          await s.run("hello", { text: "hi there" });
        },
        DROP[example],
      );
      const same = NORMALIZE[example] ?? ((text: string) => text);
      const [ours, upstream] = [t.ours, t.upstream].map((x) => JSON.parse(same(JSON.stringify(unstyled(x)))));
      expect(ours).toEqual(upstream);
    },
    60_000,
  );
});
