/**
 * The session is the context, side by side with upstream pi 1.6.0 on one script that has
 * all of it: a tool change (an extension leaves only `read` active), a retried 503, a
 * manual compaction, a fork, and a branch switch with a summary back to before the tool
 * change. Both sides run it on the same mock model; their session files (the one forked
 * from and the fork) must hold the same entries in the same order and linked the same way
 * (ids, times and our own wording aside), and the model must have been sent the same
 * conversation and the same summary requests. Then each side resumes the other's fork and sends one more prompt: the
 * request bodies at the mock must be the same. Skipped when test/upstream is not installed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import type { RpcWorker } from "../support/rpc-worker.js";
import {
  contentText as text,
  entryShape as shape,
  isSummaryRequest,
  requestShape as request,
  summaryRequestShape as summary,
} from "../support/session-shape.js";
import { startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";
import { checkSessionEntry, SessionHeader } from "../../shared/schema/session.js";
import { checker } from "../../shared/validate.js";

type Line = Record<string, any>;

const { server, dirs, dir } = useOracleFixture();
const IMPLS: Implementation[] = ["ours", "upstream"];

const COMMANDS = `export default function (pi) {
  pi.registerCommand("only-read", { description: "leave only read active", handler: async () => pi.setActiveTools(["read"]) });
  pi.registerCommand("goto", {
    description: "go to an entry, summarizing the branch left",
    handler: async (args, ctx) => { await ctx.navigateTree(args.trim(), { summarize: true }); },
  });
}
`;

/** A 10 ms first retry delay keeps the test short; a 10-token budget makes the compaction keep only the last turn. */
const settings = (home: string) =>
  writeFileSync(
    join(home, "settings.json"),
    JSON.stringify({ retry: { baseDelayMs: 10 }, compaction: { keepRecentTokens: 10 } }),
  );

/**
 * The lines of a session file that are not pi 1.6.0's format as shared/schema/session.ts
 * has it (a header, then entries of known types each matching its schema), one message each.
 */
function offFormat(lines: Line[]): string[] {
  const header = checker(SessionHeader)(lines[0]);
  const problems = header.ok ? [] : [`line 1 (header): ${header.errors.join("; ")}`];
  lines.slice(1).forEach((entry, i) => {
    const checked = checkSessionEntry(entry);
    if (!checked.ok) problems.push(`line ${i + 2} (${entry.type}): ${checked.errors.join("; ")}`);
  });
  return problems;
}

const entriesOf = (file: string): Line[] =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);

async function run(w: RpcWorker, message: string): Promise<void> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message }, 30_000)).toMatchObject({ success: true });
  await w.event("agent_settled", 30_000, from);
}

interface Side {
  forkedFrom: Line[];
  fork: Line[];
  forkPath: string;
  requests: Line[];
}

/** The script: tool change, retry, compaction, fork at "third", a prompt, a branch switch back to "one", a prompt. */
async function script(impl: Implementation, extension: string): Promise<Side> {
  const { w } = startOracle(impl, server, dirs, {
    pi: "1.6.0",
    sessions: true,
    args: ["-e", extension],
    prepare: settings,
  });
  const at = server.requests.length;
  server.enqueue({ text: "one" });
  await run(w, "first");
  expect(await w.request({ type: "prompt", message: "/only-read" }, 30_000)).toMatchObject({ success: true });
  server.enqueue({ error: { status: 503, message: "Service Unavailable" } }, { text: "two" });
  await run(w, "second");
  server.enqueue({ text: "## Summary\nfirst and second" });
  const compact = await w.request({ type: "compact" }, 30_000);
  expect(compact, `${impl}: ${JSON.stringify(compact)}`).toMatchObject({ success: true });
  server.enqueue({ text: "three" });
  await run(w, "third");
  const forkedFrom = (await w.request({ type: "get_state" })).data.sessionFile as string;
  const forks = (await w.request({ type: "get_fork_messages" })).data.messages as Line[];
  const fork = await w.request({ type: "fork", entryId: forks.find((m) => m.text === "third")!.entryId }, 30_000);
  expect(fork, impl).toMatchObject({ success: true, data: { text: "third", cancelled: false } });
  server.enqueue({ text: "four" });
  await run(w, "fourth");
  const forkPath = (await w.request({ type: "get_state" })).data.sessionFile as string;
  expect(forkPath, impl).not.toBe(forkedFrom);
  const one = entriesOf(forkPath).find((e) => e.type === "message" && e.message.role === "assistant")!;
  server.enqueue({ text: "## Branch\nleft the fork" });
  // The command's answer comes once its handler, the navigation with its summary, is done.
  const goto = await w.request({ type: "prompt", message: `/goto ${one.id}` }, 30_000);
  expect(goto, impl).toMatchObject({ success: true });
  server.enqueue({ text: "five" });
  await run(w, "fifth");
  w.kill();
  return {
    forkedFrom: entriesOf(forkedFrom),
    fork: entriesOf(forkPath),
    forkPath,
    requests: server.requests.slice(at).map((r) => r.body as Line),
  };
}

describe.skipIf(!UPSTREAM["1.6.0"].installed)("the session is the context, side by side with pi 1.6.0", () => {
  it("a tool change, a retry, a compaction, a fork and a branch switch: same files, same requests, either side resuming the other's", async () => {
    const extension = join(dir("pi-scenario-ext-"), "commands.ts");
    writeFileSync(extension, COMMANDS);
    const sides = {} as Record<Implementation, Side>;
    for (const impl of IMPLS) sides[impl] = await script(impl, extension);
    const { ours, upstream } = sides;
    // Both sides' files hold only entries of pi 1.6.0's format, each matching its schema.
    for (const impl of IMPLS)
      for (const file of ["forkedFrom", "fork"] as const)
        expect(offFormat(sides[impl][file]), `${impl} ${file}`).toEqual([]);

    const kinds = (entries: Line[]) =>
      shape(entries).map((e) => (e.role ? `${e.role}${e.stopReason ? `(${e.stopReason})` : ""}` : e.type));
    const common = [
      "model_change",
      "thinking_level_change",
      "system",
      "user",
      "assistant(stop)",
      "system",
      "user",
      "assistant(error)",
      "context_edit",
      "assistant(stop)",
      "compaction",
    ];
    expect(kinds(upstream.forkedFrom)).toEqual([...common, "user", "assistant(stop)"]);
    expect(kinds(upstream.fork)).toEqual([
      ...common,
      "user",
      "assistant(stop)",
      "branch_summary",
      "user",
      "assistant(stop)",
    ]);
    expect(shape(ours.forkedFrom)).toEqual(shape(upstream.forkedFrom));
    expect(shape(ours.fork)).toEqual(shape(upstream.fork));
    // What pi 1.6 records: the patch removes bash, edit and write; the compaction keeps from
    // "second" with the read-only tools as its checkpoint; the branch summary hangs from "one",
    // names the leaf it left ("four"), and the tools of that point (all four) come back.
    const fork = shape(upstream.fork);
    expect(fork[5]).toMatchObject({ toolsAdded: [], toolsRemoved: ["bash", "edit", "write"] });
    expect(fork[10]).toMatchObject({ firstKept: 7, checkpointTools: ["read"] });
    expect(fork[13]).toMatchObject({ parent: 5, from: 13 });
    expect(request(upstream.requests.at(-1)!).tools).toEqual(["read", "bash", "edit", "write"]);

    // The same requests in the same order; the conversation's ones the same to the byte (asides above).
    expect(ours.requests.map(isSummaryRequest)).toEqual(upstream.requests.map(isSummaryRequest));
    expect(ours.requests.filter((b) => !isSummaryRequest(b)).map(request)).toEqual(
      upstream.requests.filter((b) => !isSummaryRequest(b)).map(request),
    );
    // The summary requests (the compaction's, the branch's) are pi's to the byte, output budget
    // aside: what the model saw (the failed reply the retry omitted is not in either), in pi's words.
    expect(ours.requests.filter(isSummaryRequest).map(summary)).toEqual(
      upstream.requests.filter(isSummaryRequest).map(summary),
    );
    const branch = upstream.requests.filter(isSummaryRequest)[1]!;
    expect(text(branch.messages.at(-1).content)).toContain("[Assistant]: four");
    expect(text(branch.messages.at(-1).content)).not.toContain("Service Unavailable");

    // Each side resumes the other's fork and sends one more prompt.
    const resumed = {} as Record<Implementation, Line>;
    for (const impl of IMPLS) {
      const other = sides[impl === "ours" ? "upstream" : "ours"].forkPath;
      const { w } = startOracle(impl, server, dirs, { pi: "1.6.0", args: ["--session", other], prepare: settings });
      const at = server.requests.length;
      server.enqueue({ text: "six" });
      await run(w, "sixth");
      expect(server.requests.length - at, impl).toBe(1);
      resumed[impl] = request(server.requests[at]!.body as Line);
      w.kill();
    }
    expect(resumed.ours).toEqual(resumed.upstream);
    expect(
      resumed.upstream.messages.map(
        (m: Line) => `${m.role}:${m.role === "system" ? "" : text(m.content).slice(0, 20)}`,
      ),
    ).toEqual([
      "system:",
      "user:first",
      "assistant:one",
      "user:The following is a s",
      "user:fifth",
      "assistant:five",
      "user:sixth",
    ]);
  }, 180_000);

  it("every entry type a session file holds matches shared/schema/session.ts, on both sides", async () => {
    const extension = join(dir("pi-entries-ext-"), "entries.ts");
    writeFileSync(
      extension,
      `export default function (pi) {
  pi.registerCommand("entries", {
    description: "append an extension's entry, message and label",
    handler: async (_args, ctx) => {
      pi.appendEntry("counter", { count: 1 });
      pi.sendMessage({ customType: "note", content: "a note", display: true, details: { from: "test" } });
      const first = ctx.sessionManager.getEntries().find((e) => e.type === "message");
      pi.setLabel(first.id, "start");
    },
  });
}
`,
    );
    const types = {} as Record<Implementation, string[]>;
    for (const impl of IMPLS) {
      const { w } = startOracle(impl, server, dirs, { pi: "1.6.0", sessions: true, args: ["-e", extension] });
      server.enqueue({ toolCalls: [{ name: "ls", arguments: { path: "." } }] }, { text: "listed" });
      await run(w, "list the files");
      expect(await w.request({ type: "prompt", message: "/entries" }, 30_000)).toMatchObject({ success: true });
      expect(await w.request({ type: "set_session_name", name: "typed entries" })).toMatchObject({ success: true });
      expect(await w.request({ type: "set_thinking_level", level: "off" })).toMatchObject({ success: true });
      const file = (await w.request({ type: "get_state" })).data.sessionFile as string;
      w.kill();
      const lines = entriesOf(file);
      expect(offFormat(lines), impl).toEqual([]);
      types[impl] = [
        ...new Set(lines.slice(1).map((e) => (e.type === "message" ? `message:${e.message.role}` : e.type))),
      ].sort();
    }
    expect(types.upstream).toEqual([
      "custom",
      "custom_message",
      "label",
      "message:assistant",
      "message:system",
      "message:toolResult",
      "message:user",
      "model_change",
      "session_info",
      "thinking_level_change",
    ]);
    expect(types.ours).toEqual(types.upstream);
  }, 120_000);
});
