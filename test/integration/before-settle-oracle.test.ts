/**
 * pi 1.6's `agent_before_settle`, with upstream pi 1.6.0 as the oracle: the review-reminder
 * handler of its docs (docs/extensions.md) appends a hidden custom message once and asks
 * to continue. Both sides run the same prompt on the same mock model and must send the same
 * two requests, write the same entries, and send the same events in the same order (the
 * run, `entry_appended`, one more run, then a single `agent_settled`). Skipped when
 * test/upstream is not installed.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { PI_BIN } from "../support/rpc-worker.js";
import { startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";

type Line = Record<string, any>;

const { server, dirs, dir } = useOracleFixture();
const IMPLS: Implementation[] = ["ours", "upstream"];

const REVIEW_REMINDER = `let added = false;
export default function (pi) {
  pi.on("agent_before_settle", async (event) => {
    if (added) return;
    added = true;
    return {
      entries: [...event.entries, { type: "custom_message", customType: "review-reminder", content: "Review the final diff before replying.", display: false }],
      continue: true,
    };
  });
}
`;

/** A bad proposal: an edit of an entry that is not there. Reported; nothing is written; the run settles. */
const BAD_EDIT = `export default function (pi) {
  pi.on("agent_before_settle", async (event) => ({
    entries: [...event.entries, { type: "context_edit", targetId: "nope", replacement: null }],
    continue: true,
  }));
}
`;

const sent = (body: Line): string[] =>
  (body.messages as Line[])
    .filter((m) => m.role !== "system" && m.role !== "developer")
    .map((m) => `${m.role}:${typeof m.content === "string" ? m.content : m.content.map((c: Line) => c.text).join("")}`);

const entryTypes = (home: string): string[] => {
  const folder = join(home, "sessions");
  const file = join(folder, readdirSync(folder).find((f) => f.endsWith(".jsonl"))!);
  return readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line)
    .filter((e) => e.type !== "session")
    .map((e) => (e.type === "message" ? e.message.role : e.type));
};

const runEvents = (received: Line[]): string[] =>
  received
    .filter((l) => l.type !== "response" && l.type !== "message_update" && l.type !== "extension_ui_request")
    .map((l) => (l.type === "entry_appended" ? `entry_appended(${l.entry.type})` : l.type));

describe.skipIf(!UPSTREAM["1.6.0"].installed)("agent_before_settle", () => {
  it("appends the handler's message and runs once more, as pi 1.6.0 does", async () => {
    const extension = join(dir("pi-settle-ext-"), "review-reminder.ts");
    writeFileSync(extension, REVIEW_REMINDER);
    const seen: Partial<Record<Implementation, unknown>> = {};
    for (const impl of IMPLS) {
      const { w, home } = startOracle(impl, server, dirs, { pi: "1.6.0", sessions: true, args: ["-e", extension] });
      const at = server.requests.length;
      server.enqueue({ text: "done" }, { text: "reviewed: fine" });
      expect(await w.request({ type: "prompt", message: "change it" }, 30_000)).toMatchObject({ success: true });
      await w.event("agent_settled", 30_000);
      const requests = server.requests.slice(at).map((r) => sent(r.body));
      seen[impl] = { requests, entries: entryTypes(home), events: runEvents(w.received) };
      expect(
        w.received.filter((l) => l.type === "agent_settled"),
        impl,
      ).toHaveLength(1);
      w.kill();
    }
    expect(seen.ours).toEqual(seen.upstream);
    expect((seen.upstream as Line).requests).toEqual([
      ["user:change it"],
      ["user:change it", "assistant:done", "user:Review the final diff before replying."],
    ]);
  }, 90_000);

  it("reports entries it cannot write, writes none, and settles without another run", async () => {
    const extension = join(dir("pi-settle-bad-"), "bad-edit.ts");
    writeFileSync(extension, BAD_EDIT);
    const seen: Partial<Record<Implementation, unknown>> = {};
    for (const impl of IMPLS) {
      const { w } = startOracle(impl, server, dirs, { pi: "1.6.0", sessions: true, args: ["-e", extension] });
      const at = server.requests.length;
      server.enqueue({ text: "done" });
      await w.request({ type: "prompt", message: "change it" }, 30_000);
      await w.event("agent_settled", 30_000);
      const errors = w.received.filter((l) => l.type === "extension_error");
      seen[impl] = {
        requests: server.requests.length - at,
        events: runEvents(w.received).filter((t) => t !== "extension_error"),
        errors: errors.map((e) => e.event),
      };
      expect(errors[0]?.error, impl).toMatch(/^Invalid boundary entries: /);
      w.kill();
    }
    expect(seen.ours).toEqual(seen.upstream);
  }, 90_000);

  it("pi -p prints the reply of the run the handler asked for, then exits", async () => {
    const folder = dir("pi-settle-print-");
    const extension = join(folder, "review-reminder.ts");
    writeFileSync(extension, REVIEW_REMINDER);
    const script = join(folder, "replies.json");
    writeFileSync(script, JSON.stringify([{ text: "done" }, { text: "reviewed: fine" }]));
    const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [PI_BIN, "-p", "--provider", "faux", "--faux-script", script, "--no-session", "-e", extension, "change it"],
        { cwd: folder, env: { ...process.env, PI_ORCH_HOME: join(folder, "home") }, timeout: 30_000 },
        (error, out) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout: String(out) }),
      );
      child.stdin?.end();
    });
    expect({ code, stdout }).toEqual({ code: 0, stdout: "reviewed: fine\n" });
  });
});
