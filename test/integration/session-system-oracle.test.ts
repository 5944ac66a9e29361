/**
 * pi 1.6's system messages, with upstream pi 1.6.0 as the oracle: the session records the
 * prompt and tools at the first request, and a later tool change as a patch (not a new
 * start). Both sides run the same script on the same mock model: a prompt, an extension
 * command that leaves only `read` active, another prompt. Their files must hold the same
 * entries in the same order, with the same tool declarations added and removed; and each
 * side, resuming the other's file without the extension, must send only `read`, as the
 * branch recorded. Skipped when test/upstream is not installed.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import type { RpcWorker } from "../support/rpc-worker.js";
import { startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";

type Line = Record<string, any>;

const { server, dirs, dir } = useOracleFixture();
const IMPLS: Implementation[] = ["ours", "upstream"];

const ONLY_READ = `export default function (pi) {
  pi.registerCommand("only-read", { description: "leave only read active", handler: async () => pi.setActiveTools(["read"]) });
}
`;

/** The session's entries in brief: types, message roles, and the tools each system message adds and removes. */
function brief(file: string): string[] {
  return readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line)
    .filter((e) => e.type !== "session")
    .map((e) => {
      if (e.type !== "message") return e.type;
      const m = e.message;
      if (m.role !== "system") return m.role;
      const added = (m.toolsAdded ?? []).map((t: Line) => t.name).join(",");
      const removed = (m.toolsRemoved ?? []).map((t: Line) => t.name).join(",");
      return `system(+${added} -${removed})`;
    });
}

const toolNames = (body: Line): string[] => ((body.tools ?? []) as Line[]).map((t) => t.function?.name ?? t.name);

async function run(w: RpcWorker, message: string): Promise<void> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message }, 30_000)).toMatchObject({ success: true });
  await w.event("agent_settled", 30_000, from);
}

describe.skipIf(!UPSTREAM["1.6.0"].installed)("the system prompt and tools recorded in the session", () => {
  it("records them as pi 1.6.0 does, and a resumed branch brings back its tools on either side", async () => {
    const extension = join(dir("pi-system-ext-"), "only-read.ts");
    writeFileSync(extension, ONLY_READ);
    const files: Partial<Record<Implementation, string>> = {};
    for (const impl of IMPLS) {
      const { w, home } = startOracle(impl, server, dirs, { pi: "1.6.0", sessions: true, args: ["-e", extension] });
      server.enqueue({ text: "one" }, { text: "two" });
      const at = server.requests.length;
      await run(w, "first");
      expect(await w.request({ type: "prompt", message: "/only-read" }, 30_000)).toMatchObject({ success: true });
      await run(w, "second");
      expect(toolNames(server.requests[at].body), impl).toEqual(["read", "bash", "edit", "write"]);
      expect(toolNames(server.requests[at + 1].body), impl).toEqual(["read"]);
      const sessions = join(home, "sessions");
      files[impl] = join(sessions, readdirSync(sessions).find((f) => f.endsWith(".jsonl"))!);
      w.kill();
    }
    const expected = [
      "model_change",
      "thinking_level_change",
      "system(+read,bash,edit,write -)",
      "user",
      "assistant",
      "system(+ -bash,edit,write)",
      "user",
      "assistant",
    ];
    expect(brief(files.upstream!)).toEqual(expected);
    expect(brief(files.ours!)).toEqual(expected);

    for (const impl of IMPLS) {
      const other = files[impl === "ours" ? "upstream" : "ours"]!;
      const { w } = startOracle(impl, server, dirs, { pi: "1.6.0", args: ["--session", other] });
      const at = server.requests.length;
      server.enqueue({ text: "three" });
      await run(w, "third");
      expect(toolNames(server.requests[at].body), `${impl} resuming the other's file`).toEqual(["read"]);
      w.kill();
    }
  }, 120_000);
});
