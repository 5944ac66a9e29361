/**
 * More of pi's example extensions with upstream pi 1.6.0 as the oracle (see
 * pi-examples-oracle.test.ts): the same RPC script on our worker and on upstream
 * `pi --mode rpc`, the same mock model server, and the same observable end.
 * Skipped when test/upstream is not installed (the e2e project's setup, test/support/e2e-setup.ts, installs it).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type RpcWorker, killAllWorkers } from "../support/rpc-worker.js";
import { startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";
import { useOracleFixture } from "../support/oracle-fixture.js";

type Line = Record<string, any>;

/** The oracle: pi 1.6.0, whose examples both sides load. */
const PI = "1.6.0";
const installed = UPSTREAM[PI].installed;
const { server, dirs } = useOracleFixture();

/** `sessions`: a session file in the temp home instead of --no-session. */
function start(impl: Implementation, examples: string[], sessions = false): { w: RpcWorker; project: string } {
  return startOracle(impl, server, dirs, { pi: PI, examples, sessions });
}

async function prompt(w: RpcWorker, message: string): Promise<number> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message }, 30_000)).toMatchObject({ success: true });
  return from;
}

const send = (w: RpcWorker, line: Line) => w.proc.stdin!.write(`${JSON.stringify(line)}\n`);
const notify = (text: string) => (l: Line) =>
  l.type === "extension_ui_request" && l.method === "notify" && l.message === text;
const lastContent = (body: Line): string => {
  const content = body.messages.at(-1).content;
  return typeof content === "string" ? content : content.map((c: Line) => c.text ?? "").join("");
};
const IMPLS: Implementation[] = ["ours", "upstream"];

describe.skipIf(!installed)("more of pi's examples: our worker and upstream pi end the same way", () => {
  it.each(IMPLS)(
    "permission-gate on %s: a dangerous bash asks with a select; No blocks it, Yes runs it",
    async (impl) => {
      const { w, project } = start(impl, ["permission-gate"]);
      server.enqueue(
        { toolCalls: [{ id: "call_1", name: "bash", arguments: { command: "rm -rf victim" } }] },
        { text: "blocked" },
        { toolCalls: [{ id: "call_2", name: "bash", arguments: { command: "rm -rf victim" } }] },
        { text: "removed" },
      );
      mkdirSync(join(project, "victim"));
      const from = await prompt(w, "clean up");
      const ask = await w.waitFor((l) => l.type === "extension_ui_request" && l.method === "select", 30_000, from);
      expect(ask.options).toEqual(["Yes", "No"]);
      expect(ask.title).toContain("rm -rf victim");
      send(w, { type: "extension_ui_response", id: ask.id, value: "No" });
      await w.event("agent_end", 30_000, from);
      expect(lastContent(server.requests[1]!.body as Line)).toBe("Blocked by user");
      expect(existsSync(join(project, "victim"))).toBe(true);

      const again = await prompt(w, "clean up, really");
      const ask2 = await w.waitFor((l) => l.type === "extension_ui_request" && l.method === "select", 30_000, again);
      send(w, { type: "extension_ui_response", id: ask2.id, value: "Yes" });
      await w.event("agent_end", 30_000, again);
      expect(existsSync(join(project, "victim"))).toBe(false);
      expect(server.requests).toHaveLength(4);
    },
  );

  it.each(IMPLS)("session-name on %s: /session-name sets the name get_state reports, and shows it", async (impl) => {
    const { w } = start(impl, ["session-name"]);
    let from = await prompt(w, "/session-name");
    await w.waitFor(notify("No session name set"), 30_000, from);
    from = await prompt(w, "/session-name Refactor auth");
    await w.waitFor(notify("Session named: Refactor auth"), 30_000, from);
    expect((await w.request({ type: "get_state" })).data.sessionName).toBe("Refactor auth");
    from = await prompt(w, "/session-name");
    await w.waitFor(notify("Session: Refactor auth"), 30_000, from);
    expect(server.requests).toHaveLength(0);
  });

  // A difference, kept on purpose: pi's RPC mode looks at a shutdown request only after it
  // answered a command, so after a run it exits on the client's next command; ours exits
  // once the run is over (agent_end), which is what ctx.shutdown() documents ("deferred
  // until the agent is idle") and what a supervisor waiting for the exit needs.
  it.each(IMPLS)(
    "shutdown-command on %s: the model's finish_and_exit ends the worker after the run, exit 0",
    async (impl) => {
      const { w } = start(impl, ["shutdown-command"]);
      server.enqueue({ toolCalls: [{ id: "call_1", name: "finish_and_exit", arguments: {} }] }, { text: "bye" });
      const from = await prompt(w, "finish up");
      const end = await w.event("agent_end", 30_000, from);
      expect(end.messages.find((m: Line) => m.role === "toolResult")).toMatchObject({
        toolName: "finish_and_exit",
        content: [{ type: "text", text: "Shutdown requested. Exiting after this response." }],
      });
      if (impl === "upstream") {
        expect(w.proc.exitCode).toBeNull();
        send(w, { type: "get_state", id: "after" });
      }
      expect(await w.exited).toEqual({ code: 0, signal: null });
      expect(server.requests).toHaveLength(2);
    },
  );

  it.each(IMPLS)("shutdown-command on %s: /quit ends the worker, exit 0", async (impl) => {
    const { w } = start(impl, ["shutdown-command"]);
    w.proc.stdin!.write(`${JSON.stringify({ type: "prompt", message: "/quit", id: "q" })}\n`);
    expect(await w.exited).toEqual({ code: 0, signal: null });
    expect(server.requests).toHaveLength(0);
  });

  it.each(IMPLS)("event-bus on %s: session_start and /emit reach the bus listener, which notifies", async (impl) => {
    const { w } = start(impl, ["event-bus"]);
    await w.waitFor(notify("Event from event-bus-example: Session started"), 30_000);
    const from = await prompt(w, "/emit hi there");
    await w.waitFor(notify("Event from /emit command: hi there"), 30_000, from);
    expect(server.requests).toHaveLength(0);
  });

  it("todo: the tool's schema sent to the model and its results across turns are the same on both", async () => {
    const seen: Record<string, { schema: unknown; results: string[] }> = {};
    for (const impl of IMPLS) {
      const { w } = start(impl, ["todo"]);
      const at = server.requests.length;
      const results: string[] = [];
      const turns: [string, Record<string, unknown>][] = [
        ["add one", { action: "add", text: "write tests" }],
        ["add another", { action: "add", text: "land them" }],
        ["tick the first", { action: "toggle", id: 1 }],
        ["show them", { action: "list" }],
      ];
      for (const [message, args] of turns) {
        server.enqueue(
          { toolCalls: [{ id: `call_${results.length}`, name: "todo", arguments: args }] },
          { text: "ok" },
        );
        const from = await prompt(w, message);
        const end = await w.event("agent_end", 30_000, from);
        const result = end.messages.find((m: Line) => m.role === "toolResult");
        results.push(result.content.map((c: Line) => c.text).join(""));
      }
      const tools = (server.requests[at]!.body as Line).tools as Line[];
      seen[impl] = { schema: tools.find((t) => t.function.name === "todo")?.function, results };
      await killAllWorkers();
    }
    expect(seen.ours!.results[2]).toBe("Todo #1 completed");
    expect(seen.ours).toEqual(seen.upstream);
  });

  // The example keeps its checkpoints only while a run lasts (agent_end clears them), so a
  // fork from an idle worker restores nothing and asks nothing: the same on both.
  it.each(IMPLS)(
    "git-checkpoint on %s: a real repository, a fork after the run keeps the code and asks nothing",
    async (impl) => {
      const { w, project } = start(impl, ["git-checkpoint"], true);
      const git = (...args: string[]) => execFileSync("git", ["-C", project, ...args], { encoding: "utf8" });
      git("init", "-q");
      git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "start");
      writeFileSync(join(project, "a.txt"), "one\n");
      server.enqueue(
        { toolCalls: [{ id: "call_1", name: "write", arguments: { path: "a.txt", content: "two\n" } }] },
        { text: "written" },
      );
      const from = await prompt(w, "change a");
      await w.event("agent_end", 30_000, from);
      expect(readFileSync(join(project, "a.txt"), "utf8")).toBe("two\n");
      const forks = (await w.request({ type: "get_fork_messages" })).data.messages as Line[];
      expect(forks.map((m) => m.text)).toEqual(["change a"]);
      const at = w.received.length;
      expect(await w.request({ type: "fork", entryId: forks[0]!.entryId }, 30_000)).toMatchObject({
        success: true,
        data: { text: "change a", cancelled: false },
      });
      expect(w.received.slice(at).filter((l) => l.type === "extension_ui_request")).toEqual([]);
      expect(readFileSync(join(project, "a.txt"), "utf8")).toBe("two\n");
      expect(git("stash", "list")).toBe("");
    },
  );

  it.each(IMPLS)(
    "bookmark on %s: labels the last assistant entry in the session file, and removes it",
    async (impl) => {
      const { w } = start(impl, ["bookmark"], true);
      let from = await prompt(w, "/bookmark early");
      await w.waitFor(notify("No assistant message to bookmark"), 30_000, from);
      server.enqueue({ text: "an answer" });
      from = await prompt(w, "answer me");
      await w.event("agent_end", 30_000, from);
      from = await prompt(w, "/bookmark v1");
      await w.waitFor(notify("Bookmarked as: v1"), 30_000, from);
      from = await prompt(w, "/unbookmark");
      await w.waitFor(notify("Removed bookmark: v1"), 30_000, from);
      from = await prompt(w, "/unbookmark");
      await w.waitFor(notify("No bookmarked entry found"), 30_000, from);
      const file = (await w.request({ type: "get_state" })).data.sessionFile as string;
      const entries = readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Line);
      const assistant = entries.find((e) => e.type === "message" && e.message.role === "assistant")!;
      expect(entries.filter((e) => e.type === "label").map((e) => ({ targetId: e.targetId, label: e.label }))).toEqual([
        { targetId: assistant.id, label: "v1" },
        { targetId: assistant.id, label: undefined },
      ]);
    },
  );
});
