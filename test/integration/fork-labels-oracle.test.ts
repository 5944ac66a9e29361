/**
 * A fork of a session with labels, side by side with pi 1.6.0 (its `createBranchedSession`):
 * the label entries of the path are left out, the entries after them are chained to the
 * entry before, and the labels the kept entries have now are written again at the end.
 * With a session file and with `--no-session` (kept in memory). Skipped when test/upstream
 * is not installed.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import type { RpcWorker } from "../support/rpc-worker.js";
import { entryShape } from "../support/session-shape.js";
import { startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";

type Line = Record<string, any>;

const { server, dirs, dir } = useOracleFixture();
const IMPLS: Implementation[] = ["upstream", "ours"];

/** `/mark N TEXT` labels the Nth assistant reply of the branch (TEXT empty: clears it). */
const MARK = `export default function (pi) {
  pi.registerCommand("mark", {
    description: "label a reply",
    handler: async (args, ctx) => {
      const [n, ...text] = args.split(" ");
      const replies = ctx.sessionManager.getBranch().filter((e) => e.type === "message" && e.message.role === "assistant");
      pi.setLabel(replies[Number(n)].id, text.join(" ") || undefined);
    },
  });
}
`;

async function run(w: RpcWorker, message: string): Promise<void> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message }, 30_000)).toMatchObject({ success: true });
  await w.event("agent_settled", 30_000, from);
}

/** Entries as entryShape has them, with what a label names. */
function shape(entries: Line[]): Line[] {
  const at = new Map(entries.map((e, i) => [e.id, i]));
  return entryShape(entries, false).map((s, i) =>
    entries[i].type === "label" ? { ...s, target: at.get(entries[i].targetId), label: entries[i].label } : s,
  );
}

async function side(impl: Implementation, sessions: boolean, extension: string): Promise<Line[]> {
  const { w } = startOracle(impl, server, dirs, { pi: "1.6.0", sessions, args: ["-e", extension] });
  server.enqueue({ text: "one" }, { text: "two" }, { text: "three" });
  await run(w, "first");
  await w.request({ type: "prompt", message: "/mark 0 start" });
  await w.request({ type: "prompt", message: "/mark 0 checkpoint" });
  await run(w, "second");
  await w.request({ type: "prompt", message: "/mark 1 gone" });
  await w.request({ type: "prompt", message: "/mark 1" });
  await run(w, "third");
  const third = ((await w.request({ type: "get_fork_messages" })).data.messages as Line[])[2];
  expect(await w.request({ type: "fork", entryId: third.entryId }, 30_000)).toMatchObject({ success: true });
  const { entries } = (await w.request({ type: "get_entries" })).data as Line;
  w.kill();
  return shape(entries);
}

describe.skipIf(!UPSTREAM["1.6.0"].installed)("fork of a labelled session, as pi 1.6.0's createBranchedSession", () => {
  for (const sessions of [true, false])
    it(`${sessions ? "a session file" : "--no-session"}: labels left out of the path and written again after it`, async () => {
      const extension = join(dir("pi-fork-labels-"), "mark.ts");
      writeFileSync(extension, MARK);
      const sides = {} as Record<Implementation, Line[]>;
      for (const impl of IMPLS) sides[impl] = await side(impl, sessions, extension);
      expect(sides.ours).toEqual(sides.upstream);
    }, 120_000);
});
