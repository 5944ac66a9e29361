/**
 * pi 1.6's retried failure, with upstream pi 1.6.0 as the oracle: the failed reply stays in
 * the session file and leaves the model's context through a `context_edit` entry written
 * after `auto_retry_start`. Both sides run the same prompt on the same mock model (a 503,
 * then an answer); their files must hold the same conversation entries in the same order,
 * and each side, resuming the other's file, must send the same conversation to the model.
 * Skipped when test/upstream is not installed.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import type { RpcWorker } from "../support/rpc-worker.js";
import { startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";

type Line = Record<string, any>;

const { server, dirs } = useOracleFixture();
const IMPLS: Implementation[] = ["ours", "upstream"];

/** Both read pi's retry settings from settings.json: a 10 ms first delay keeps the test short. */
const fastRetry = (home: string) =>
  writeFileSync(join(home, "settings.json"), JSON.stringify({ retry: { baseDelayMs: 10 } }));

const entriesOf = (file: string): Line[] =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);

/** The conversation entries in brief: message roles (system aside), stop reasons, and context edits by target. */
function conversation(entries: Line[]): string[] {
  const index = new Map<string, string>();
  const out: string[] = [];
  for (const e of entries) {
    if (e.type === "message" && e.message.role !== "system") {
      const name = `${e.message.role}${e.message.stopReason ? `(${e.message.stopReason})` : ""}`;
      index.set(e.id, name);
      out.push(name);
    } else if (e.type === "context_edit") {
      out.push(`context_edit(${index.get(e.targetId) ?? "?"}, ${JSON.stringify(e.replacement)})`);
    }
  }
  return out;
}

/** What the model was sent, system and developer messages aside: role and text. */
const sent = (body: Line): string[] =>
  (body.messages as Line[])
    .filter((m) => m.role !== "system" && m.role !== "developer")
    .map((m) => `${m.role}:${typeof m.content === "string" ? m.content : m.content.map((c: Line) => c.text).join("")}`);

async function run(w: RpcWorker, message: string): Promise<void> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message }, 30_000)).toMatchObject({ success: true });
  await w.event("agent_settled", 30_000, from);
}

describe.skipIf(!UPSTREAM["1.6.0"].installed)("a retried failure leaves the context through a context_edit", () => {
  it("writes the same entries as pi 1.6.0, and each side resuming the other's file sends the same conversation", async () => {
    const files: Partial<Record<Implementation, string>> = {};
    for (const impl of IMPLS) {
      const { w, home } = startOracle(impl, server, dirs, { pi: "1.6.0", sessions: true, prepare: fastRetry });
      server.enqueue({ error: { status: 503, message: "Service Unavailable" } }, { text: "recovered" });
      await run(w, "hello");
      const retry = w.received.findIndex((l) => l.type === "auto_retry_start");
      const edit = w.received.findIndex((l) => l.type === "entry_appended" && l.entry.type === "context_edit");
      expect(retry, impl).toBeGreaterThan(-1);
      // pi's order: auto_retry_start, then the edit, then the retry's run.
      expect(edit, impl).toBeGreaterThan(retry);
      expect(w.received.findIndex((l, i) => i > retry && l.type === "agent_start")).toBeGreaterThan(edit);
      const messages = (await w.request({ type: "get_messages" })).data.messages as Line[];
      expect(
        messages.filter((m) => m.role !== "system").map((m) => `${m.role}:${m.stopReason ?? ""}`),
        impl,
      ).toEqual(["user:", "assistant:stop"]);
      const dir = join(home, "sessions");
      files[impl] = join(dir, readdirSync(dir).find((f) => f.endsWith(".jsonl"))!);
      w.kill();
    }
    const expected = ["user", "assistant(error)", "context_edit(assistant(error), null)", "assistant(stop)"];
    expect(conversation(entriesOf(files.ours!))).toEqual(expected);
    expect(conversation(entriesOf(files.upstream!))).toEqual(expected);

    // Each side resumes the other's file: the failed reply stays out of what the model is sent.
    const requests: Partial<Record<Implementation, string[]>> = {};
    for (const impl of IMPLS) {
      const other = files[impl === "ours" ? "upstream" : "ours"]!;
      const { w } = startOracle(impl, server, dirs, { pi: "1.6.0", args: ["--session", other], prepare: fastRetry });
      const at = server.requests.length;
      server.enqueue({ text: "again to you" });
      await run(w, "again");
      requests[impl] = sent(server.requests[at].body);
      w.kill();
    }
    expect(requests.ours).toEqual(["user:hello", "assistant:recovered", "user:again"]);
    expect(requests.upstream).toEqual(requests.ours);
  }, 90_000);
});
