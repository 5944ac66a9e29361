/**
 * pi 1.6's `defaultTools` setting, with upstream pi 1.6.0 as the oracle: the same settings
 * and one prompt on our worker and on upstream `pi --mode rpc`; the tools each model
 * request declares must be the same. The user's list (`+`/`-` entries change the
 * defaults, plain names replace them), a trusted project's list over it (joined when it
 * has only `+`/`-` entries), an untrusted project's left out, and `--tools +name` applied
 * to the setting's selection. Skipped when test/upstream is not installed.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { transcriptOf } from "../support/oracle-transcript.js";
import { UPSTREAM } from "../support/upstream-oracle.js";

const { server, dirs } = useOracleFixture();

interface Case {
  name: string;
  user: string[];
  project?: string[];
  args: string[];
  /** pi 1.6.0's answer, so a change of either side is told apart from a difference. */
  tools: string[];
}

const CASES: Case[] = [
  {
    name: "the user's +/- entries change the defaults",
    user: ["+grep", "-write"],
    args: [],
    tools: ["read", "bash", "edit", "grep"],
  },
  { name: "the user's plain names replace them", user: ["read", "ls"], args: [], tools: ["read", "ls"] },
  {
    name: "a trusted project's +/- entries join the user's list",
    user: ["read"],
    project: ["+find"],
    args: ["--approve"],
    tools: ["read", "find"],
  },
  {
    name: "a trusted project's plain names replace the user's list",
    user: ["read"],
    project: ["bash"],
    args: ["--approve"],
    tools: ["bash"],
  },
  {
    name: "an untrusted project's list is left out",
    user: ["read"],
    project: ["+find"],
    args: ["--no-approve"],
    tools: ["read"],
  },
  {
    name: "--tools +name changes the setting's selection",
    user: ["read", "bash"],
    args: ["--tools", "+find"],
    tools: ["read", "bash", "find"],
  },
];

describe.skipIf(!UPSTREAM["1.6.0"].installed)("defaultTools: our worker and upstream pi 1.6.0", () => {
  it.each(CASES)(
    "$name",
    async ({ user, project, args, tools }) => {
      const declared: string[][] = [];
      for (const impl of ["ours", "upstream"] as const) {
        const t = await transcriptOf(
          impl,
          server,
          dirs,
          {
            pi: "1.6.0",
            args,
            prepare: (home) => writeFileSync(join(home, "settings.json"), JSON.stringify({ defaultTools: user })),
            prepareProject: (dir) => {
              if (!project) return;
              // The project root is the nearest folder with .git.
              mkdirSync(join(dir, ".git"));
              mkdirSync(join(dir, ".pi"));
              writeFileSync(join(dir, ".pi", "settings.json"), JSON.stringify({ defaultTools: project }));
            },
          },
          async (s) => {
            await s.run("hello", { text: "hi" });
          },
        );
        declared.push(t.requests[0]!.tools);
      }
      expect(declared[1]).toEqual(tools);
      expect(declared[0]).toEqual(declared[1]);
    },
    60_000,
  );
});
