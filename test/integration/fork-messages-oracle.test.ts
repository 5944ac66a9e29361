/**
 * `get_fork_messages`, `fork` and `clone` with upstream pi (1.6.0 for `--no-session`, 0.73.1 for a
 * branched 0.73 file) as the oracle: the same
 * RPC script on our worker and on upstream `pi --mode rpc` against the same mock model
 * server. With `--no-session` pi keeps the session in memory, so it lists, forks and
 * clones it there; with a session file it lists the user messages of every branch and
 * forks at any of them. Skipped when test/upstream is not installed.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { killAllWorkers, type RpcWorker } from "../support/rpc-worker.js";
import { startOracle, upstreamInstalled as installed, type Implementation } from "../support/upstream-oracle.js";
import { useOracleFixture } from "../support/oracle-fixture.js";

type Line = Record<string, any>;

const { server, dirs } = useOracleFixture();

const FIXTURE = join(import.meta.dirname, "../fixtures/pi-0.73.1-session-file.jsonl");

async function turn(w: RpcWorker, message: string): Promise<void> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message }, 30_000)).toMatchObject({ success: true });
  await w.event("agent_end", 30_000, from);
}

const text = (m: Line): string =>
  typeof m.content === "string" ? m.content : m.content.map((c: Line) => c.text ?? "").join("");
/** The conversation as role and text (ids, timestamps and usage differ between the two). */
const conversation = async (w: RpcWorker): Promise<string[]> =>
  ((await w.request({ type: "get_messages" })).data.messages as Line[]).map((m) => `${m.role}: ${text(m)}`);
const forkTexts = async (w: RpcWorker): Promise<string[]> =>
  ((await w.request({ type: "get_fork_messages" })).data.messages as Line[]).map((m) => m.text);
/** What the model was sent last, without the system prompt (each side words its own). */
const lastRequest = (): string[] =>
  ((server.requests.at(-1)!.body as Line).messages as Line[])
    .filter((m) => m.role !== "system")
    .map((m) => `${m.role}: ${text(m)}`);

const IMPLS: Implementation[] = ["ours", "upstream"];

describe.skipIf(!installed)("get_fork_messages, fork and clone: our worker and upstream pi answer the same", () => {
  it("--no-session: the in-memory conversation is listed, forked and cloned as pi does", async () => {
    const seen: Record<string, unknown> = {};
    for (const impl of IMPLS) {
      const { w } = startOracle(impl, server, dirs, { pi: "1.6.0" });
      const steps: unknown[] = [];
      // Nothing to clone yet: both refuse, with pi's words.
      steps.push(await w.request({ type: "clone" }, 30_000));
      server.enqueue({ text: "one" }, { text: "two" }, { text: "three" });
      await turn(w, "first");
      await turn(w, "second");
      const listed = (await w.request({ type: "get_fork_messages" })).data.messages as Line[];
      steps.push(listed.map((m) => m.text));
      expect(new Set(listed.map((m) => m.entryId)).size).toBe(2);
      const bad = await w.request({ type: "fork", entryId: "nope" }, 30_000);
      steps.push(bad.success);
      const fork = await w.request({ type: "fork", entryId: listed[1]!.entryId }, 30_000);
      steps.push({ success: fork.success, data: fork.data });
      steps.push(await conversation(w));
      steps.push(await forkTexts(w));
      await turn(w, "third");
      steps.push(lastRequest());
      steps.push(await forkTexts(w));
      const clone = await w.request({ type: "clone" }, 30_000);
      steps.push({ success: clone.success, data: clone.data });
      steps.push(await conversation(w));
      // The ids the listing gave still fork after the clone.
      const again = (await w.request({ type: "get_fork_messages" })).data.messages as Line[];
      steps.push((await w.request({ type: "fork", entryId: again[0]!.entryId }, 30_000)).data);
      steps.push(await conversation(w));
      seen[impl] = steps.map((s) =>
        s && typeof s === "object" && "type" in (s as Line)
          ? { success: (s as Line).success, error: (s as Line).error }
          : s,
      );
      await killAllWorkers();
      server.requests.length = 0;
    }
    expect(seen.ours).toEqual(seen.upstream);
    expect((seen.upstream as unknown[])[1]).toEqual(["first", "second"]);
    expect((seen.upstream as unknown[])[3]).toEqual({ success: true, data: { text: "second", cancelled: false } });
    expect((seen.upstream as unknown[])[6]).toEqual(["user: first", "assistant: one", "user: third"]);
  });

  it("--no-session: new_session starts an empty session in memory and writes nothing", async () => {
    const seen: Record<string, unknown> = {};
    for (const impl of IMPLS) {
      const { w, home } = startOracle(impl, server, dirs, { pi: "1.6.0" });
      server.enqueue({ text: "one" }, { text: "two" });
      await turn(w, "first");
      const before = (await w.request({ type: "get_state" })).data as Line;
      const fresh = await w.request({ type: "new_session" }, 30_000);
      const after = (await w.request({ type: "get_state" })).data as Line;
      // No file: pi 1.6's in-memory session names none (0.73 named one it never wrote), nor does ours.
      const named = after.sessionFile === undefined || !existsSync(String(after.sessionFile));
      const steps: unknown[] = [
        { success: fresh.success, data: fresh.data },
        named,
        after.messageCount,
        after.sessionId !== before.sessionId,
      ];
      steps.push(await conversation(w));
      await turn(w, "second");
      steps.push(lastRequest());
      steps.push(await forkTexts(w));
      steps.push(readdirSync(home, { recursive: true }).filter((f) => String(f).endsWith(".jsonl")));
      seen[impl] = steps;
      await killAllWorkers();
    }
    expect(seen.ours).toEqual(seen.upstream);
    expect(seen.upstream).toEqual([
      { success: true, data: { cancelled: false } },
      true,
      0,
      true,
      [],
      ["user: second"],
      ["second"],
      [],
    ]);
  });

  it("a session file with two branches: every branch's user messages are listed, and a fork at the other branch keeps its path", async () => {
    // pi's own file for a "list files" run, with two answers to its last reply: an
    // abandoned user message, then the current branch (the last entry is the leaf).
    const lines = readFileSync(FIXTURE, "utf8").trimEnd().split("\n");
    const at = JSON.parse(lines.at(-1)!).id as string;
    const user = (id: string, parentId: string, t: string) =>
      JSON.stringify({
        type: "message",
        id,
        parentId,
        timestamp: "2026-11-30T17:50:00.000Z",
        message: { role: "user", content: [{ type: "text", text: t }], timestamp: 1796061000000 },
      });
    const answer = JSON.parse(lines.at(-1)!);
    const reply = JSON.stringify({
      ...answer,
      id: "b2000002",
      parentId: "b2000001",
      message: { ...answer.message, content: [{ type: "text", text: "second answer" }] },
    });
    const branched = `${[...lines, user("b1000001", at, "abandoned"), user("b2000001", at, "second question"), reply].join("\n")}\n`;

    const seen: Record<string, unknown> = {};
    for (const impl of IMPLS) {
      // The file goes into the fresh home, which prepare is the first to know.
      const args = ["--session", ""];
      const { w } = startOracle(impl, server, dirs, {
        prepare: (home) => {
          // In a folder of its own: pi moves *.jsonl files at its home's top level away (an old layout).
          mkdirSync(join(home, "kept"));
          args[1] = join(home, "kept", "branched.jsonl");
          // pi refuses a session file whose cwd does not exist.
          writeFileSync(args[1], branched.replace('"cwd":"/home/user/project"', `"cwd":${JSON.stringify(home)}`));
        },
        args,
      });
      const steps: unknown[] = [];
      const listed = (await w.request({ type: "get_fork_messages" })).data.messages as Line[];
      steps.push(listed);
      steps.push(await conversation(w));
      const fork = await w.request({ type: "fork", entryId: "b1000001" }, 30_000);
      steps.push({ success: fork.success, data: fork.data });
      steps.push(await conversation(w));
      steps.push(await forkTexts(w));
      seen[impl] = steps;
      await killAllWorkers();
    }
    expect(seen.ours).toEqual(seen.upstream);
    expect((seen.upstream as Line[])[0].map((m: Line) => m.text)).toEqual([
      "list files",
      "abandoned",
      "second question",
    ]);
  });
});
