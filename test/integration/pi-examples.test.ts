/**
 * pi 0.73.1's own example extensions, loaded unchanged from the npm package that
 * `npm test`'s e2e setup installs into test/upstream/, each exercised for its main
 * behaviour through the built worker in RPC mode on the faux model. Run
 * `npm run build` first.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RpcWorker, killAllWorkers, tempDir, waitForExit } from "../support/rpc-worker.js";

const EXAMPLES = resolve(
  import.meta.dirname,
  "../upstream/node_modules/@mariozechner/pi-coding-agent/examples/extensions",
);
const example = (name: string) =>
  existsSync(join(EXAMPLES, name)) ? join(EXAMPLES, name) : join(EXAMPLES, `${name}.ts`);

let home: { path: string; cleanup: () => void };
let project: { path: string; cleanup: () => void };
let src: { path: string; cleanup: () => void };

beforeEach(() => {
  home = tempDir("pi-ex-home-");
  project = tempDir("pi-ex-project-");
  src = tempDir("pi-ex-src-");
});

afterEach(async () => {
  try {
    await killAllWorkers();
  } finally {
    // Each folder is removed even when removing another throws (a worker's git still writing into it).
    const failures = [home, project, src].flatMap((d) => {
      try {
        d.cleanup();
        return [];
      } catch (err) {
        return [err];
      }
    });
    if (failures.length > 0) throw failures[0];
  }
});

type Reply = { text?: string; toolCalls?: { name: string; arguments: Record<string, unknown> }[] };
type Line = Record<string, any>;

/** A git identity for the test's commits and the worker's (auto-commit-on-exit), so a home without one works too. */
const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@t",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@t",
};

/** A worker on the faux model replaying `replies`, loading the named examples. */
function startWorker(replies: Reply[], examples: string[], args: string[] = []): RpcWorker {
  const script = join(src.path, `script-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(script, JSON.stringify(replies));
  return new RpcWorker(
    [
      "--mode",
      "rpc",
      "--provider",
      "faux",
      "--faux-script",
      script,
      ...examples.flatMap((e) => ["-e", example(e)]),
      ...args,
    ],
    { cwd: project.path, env: { PI_ORCH_HOME: home.path, ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "", ...GIT_IDENTITY } },
  );
}

const isRequest = (method: string) => (l: Line) => l.type === "extension_ui_request" && l.method === method;
const notices = (w: RpcWorker, from = 0) =>
  w.received
    .slice(from)
    .filter(isRequest("notify"))
    .map((l) => l.message as string);
const toolResults = (end: Line) => end.messages.filter((m: Line) => m.role === "toolResult");

/** Prompt and wait for the run's `agent_end`. */
async function run(w: RpcWorker, message: string): Promise<Line> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message })).toMatchObject({ success: true });
  return w.event("agent_end", 20_000, from);
}

/** Send a prompt that an extension handles without a run; resolves after the response. */
async function command(w: RpcWorker, message: string): Promise<number> {
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message })).toMatchObject({ success: true });
  return from;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, ...GIT_IDENTITY } });
}

describe("pi's example extensions, unchanged, over RPC", () => {
  it("loads all twenty examples without a load error", async () => {
    const all = [
      "permission-gate",
      "protected-paths",
      "tools",
      "dynamic-tools",
      "todo",
      "session-name",
      "bookmark",
      "input-transform",
      "git-checkpoint",
      "auto-commit-on-exit",
      "custom-compaction",
      "trigger-compact",
      "provider-payload",
      "event-bus",
      "structured-output",
      "summarize",
      "plan-mode",
      "handoff",
      "notify",
      "shutdown-command",
    ];
    const w = startWorker([], all, ["--no-session"]);
    const commands = await w.request({ type: "get_commands" });
    expect(commands.success).toBe(true);
    expect(w.received.filter((l) => l.type === "extension_error")).toEqual([]);
    expect(commands.data.commands.map((c: Line) => c.name)).toEqual(
      expect.arrayContaining([
        "tools",
        "add-echo-tool",
        "todos:1",
        "todos:2",
        "session-name",
        "bookmark",
        "trigger-compact",
        "emit",
        "plan",
        "handoff",
        "quit",
      ]),
    );
  });

  it("loads them from the `pi` bin as installed too (dist/cli/pi.cjs, started from its V8 code cache)", async () => {
    const script = join(src.path, "empty.json");
    writeFileSync(script, "[]");
    const w = new RpcWorker(
      ["--mode", "rpc", "--provider", "faux", "--faux-script", script, "--no-session", "-e", example("dynamic-tools")],
      {
        cwd: project.path,
        env: { PI_ORCH_HOME: home.path },
        bin: [process.execPath, resolve(import.meta.dirname, "../../dist/cli/pi.cjs")],
      },
    );
    expect((await w.request({ type: "get_state" })).data.tools).toContain("echo_session");
    expect(w.received.filter((l) => l.type === "extension_error")).toEqual([]);
  });

  it("permission-gate asks with a select and blocks only what the client declines", async () => {
    const w = startWorker(
      [
        { toolCalls: [{ name: "bash", arguments: { command: "rm -rf build" } }] },
        { toolCalls: [{ name: "bash", arguments: { command: "rm -rf no-such-folder" } }] },
        { text: "done" },
      ],
      ["permission-gate"],
      ["--no-session"],
    );
    const from = w.received.length;
    await w.request({ type: "prompt", message: "clean" });
    const first = await w.waitFor(isRequest("select"), undefined, from);
    expect(first).toMatchObject({ title: expect.stringContaining("rm -rf build"), options: ["Yes", "No"] });
    w.writeRaw(`${JSON.stringify({ type: "extension_ui_response", id: first.id, value: "No" })}\n`);
    const second = await w.waitFor((l) => isRequest("select")(l) && l.id !== first.id, undefined, from);
    w.writeRaw(`${JSON.stringify({ type: "extension_ui_response", id: second.id, value: "Yes" })}\n`);
    const end = await w.event("agent_end", undefined, from);
    const [declined, allowed] = toolResults(end);
    expect(declined).toMatchObject({ isError: true, content: [{ type: "text", text: "Blocked by user" }] });
    expect(allowed.isError).toBe(false);
  });

  it("protected-paths blocks a write to .env and the model sees the reason", async () => {
    const w = startWorker(
      [{ toolCalls: [{ name: "write", arguments: { path: ".env", content: "SECRET=1" } }] }, { text: "ok" }],
      ["protected-paths"],
      ["--no-session"],
    );
    const from = w.received.length;
    const end = await run(w, "write the env file");
    expect(toolResults(end)).toEqual([
      expect.objectContaining({ isError: true, content: [{ type: "text", text: 'Path ".env" is protected' }] }),
    ]);
    expect(existsSync(join(project.path, ".env"))).toBe(false);
    expect(notices(w, from)).toContain("Blocked write to protected path: .env");
  });

  it("dynamic-tools registers a tool at session start and on /add-echo-tool; the model calls it with its arguments", async () => {
    const w = startWorker(
      [
        { toolCalls: [{ name: "echo_session", arguments: { message: "hi there" } }] },
        { text: "echoed" },
        { toolCalls: [{ name: "shout", arguments: { message: "hey" } }] },
        { text: "ok" },
      ],
      ["dynamic-tools"],
      ["--no-session"],
    );
    const state = await w.request({ type: "get_state" });
    expect(state.data.tools).toContain("echo_session");
    const end = await run(w, "echo");
    expect(toolResults(end)[0]).toMatchObject({
      isError: false,
      content: [{ type: "text", text: "[session] hi there" }],
      details: { tool: "echo_session" },
    });
    await command(w, "/add-echo-tool shout");
    expect((await w.request({ type: "get_state" })).data.tools).toContain("shout");
    const end2 = await run(w, "shout");
    expect(toolResults(end2)[0].content).toEqual([{ type: "text", text: "[shout] hey" }]);
  });

  it("todo keeps its list across turns and prompts", async () => {
    const w = startWorker(
      [
        { toolCalls: [{ name: "todo", arguments: { action: "add", text: "write tests" } }] },
        { text: "added" },
        { toolCalls: [{ name: "todo", arguments: { action: "list" } }] },
        { text: "listed" },
      ],
      ["todo"],
    );
    const first = await run(w, "add a todo");
    expect(toolResults(first)[0].content[0].text).toBe("Added todo #1: write tests");
    const second = await run(w, "list the todos");
    expect(toolResults(second)[0].content[0].text).toContain("write tests");
    expect(toolResults(second)[0].details.todos).toEqual([{ id: 1, text: "write tests", done: false }]);
  });

  it("todo rebuilds its list from the branch on session_tree when the session tree is navigated", async () => {
    const w = startWorker(
      [
        { toolCalls: [{ name: "todo", arguments: { action: "add", text: "first" } }] },
        { text: "added first" },
        { toolCalls: [{ name: "todo", arguments: { action: "add", text: "second" } }] },
        { text: "added second" },
        { toolCalls: [{ name: "todo", arguments: { action: "list" } }] },
        { text: "listed" },
      ],
      ["todo"],
    );
    await run(w, "add first");
    const firstAnswer = (await w.request({ type: "get_state" })).data.sessionFile as string;
    const entries = readFileSync(firstAnswer, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const afterFirst = entries.filter((e: Line) => e.type === "message" && e.message.role === "assistant").at(-1);
    await run(w, "add second");
    expect((await w.request({ type: "navigate_tree", targetId: afterFirst.id })).success).toBe(true);
    const end = await run(w, "list");
    expect(toolResults(end)[0].details.todos).toEqual([{ id: 1, text: "first", done: false }]);
  });

  it("session-name names the session and bookmark labels the last assistant entry in the session file", async () => {
    const w = startWorker([{ text: "an answer" }], ["session-name", "bookmark"]);
    await command(w, "/session-name Refactor auth");
    await w.waitFor((l) => isRequest("notify")(l) && l.message === "Session named: Refactor auth");
    expect((await w.request({ type: "get_state" })).data.sessionName).toBe("Refactor auth");
    await run(w, "question");
    const from = await command(w, "/bookmark checkpoint-1");
    await w.waitFor((l) => isRequest("notify")(l) && l.message === "Bookmarked as: checkpoint-1", undefined, from);
    const file = (await w.request({ type: "get_state" })).data.sessionFile as string;
    const entries = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const label = entries.find((e) => e.type === "label");
    const assistant = entries.filter((e: Line) => e.type === "message" && e.message.role === "assistant").at(-1);
    expect(label).toMatchObject({ targetId: assistant.id, label: "checkpoint-1" });
  });

  it("input-transform answers ping without the model and rewrites ?quick", async () => {
    const w = startWorker([{ text: "brief" }], ["input-transform"], ["--no-session"]);
    const from = await command(w, "ping");
    await w.waitFor((l) => isRequest("notify")(l) && l.message === "pong", undefined, from);
    expect(w.eventTypes(from)).not.toContain("agent_start");
    const end = await run(w, "?quick what is TypeScript");
    const prompt = end.messages.find((m: Line) => m.role === "user");
    expect(prompt.content[0].text).toBe("Respond briefly in 1-2 sentences: what is TypeScript");
  });

  it("event-bus delivers events between handlers and from a command", async () => {
    const w = startWorker([], ["event-bus"], ["--no-session"]);
    await w.waitFor((l) => isRequest("notify")(l) && l.message === "Event from event-bus-example: Session started");
    await command(w, "/emit hello");
    await w.waitFor((l) => isRequest("notify")(l) && l.message === "Event from /emit command: hello");
  });

  it("structured-output ends the run with its terminating tool result", async () => {
    const w = startWorker(
      [
        { toolCalls: [{ name: "structured_output", arguments: { headline: "H", summary: "S", actionItems: ["a"] } }] },
        { text: "never asked for" },
      ],
      ["structured-output"],
      ["--no-session"],
    );
    const end = await run(w, "summarize as structured output");
    expect(end.messages.filter((m: Line) => m.role === "assistant")).toHaveLength(1);
    expect(toolResults(end)[0]).toMatchObject({
      content: [{ type: "text", text: "Saved structured output: H" }],
      details: { headline: "H", actionItems: ["a"] },
    });
  });

  it("plan-mode restricts the tools, blocks unsafe bash, and --plan starts in plan mode", async () => {
    const w = startWorker(
      [{ toolCalls: [{ name: "bash", arguments: { command: "rm notes.txt" } }] }, { text: "cannot" }],
      ["plan-mode"],
      ["--no-session"],
    );
    writeFileSync(join(project.path, "notes.txt"), "keep");
    const from = await command(w, "/plan");
    await w.waitFor(
      (l) => isRequest("notify")(l) && String(l.message).startsWith("Plan mode enabled"),
      undefined,
      from,
    );
    expect((await w.request({ type: "get_state" })).data.tools).toEqual(["read", "bash", "grep", "find", "ls"]);
    // As in pi, the run ends (agent_end) once the agent_end handler's "what next?" dialog is answered.
    const running = run(w, "delete the notes");
    const next = await w.waitFor(isRequest("select"), undefined, from);
    expect(next.title).toBe("Plan mode - what next?");
    w.writeRaw(`${JSON.stringify({ type: "extension_ui_response", id: next.id, value: "Stay in plan mode" })}\n`);
    const end = await running;
    expect(toolResults(end)[0].isError).toBe(true);
    expect(toolResults(end)[0].content[0].text).toMatch(/Plan mode: command blocked/);
    expect(readFileSync(join(project.path, "notes.txt"), "utf8")).toBe("keep");

    const flagged = startWorker([], ["plan-mode"], ["--no-session", "--plan"]);
    await flagged.waitFor(
      (l) => isRequest("setStatus")(l) && l.statusKey === "plan-mode" && typeof l.statusText === "string",
    );
    expect((await flagged.request({ type: "get_state" })).data.tools).toEqual(["read", "bash", "grep", "find", "ls"]);
  });

  it("notify's OSC sequence goes to stderr and stdout stays JSON lines", async () => {
    const w = startWorker([{ text: "ready" }], ["notify"], ["--no-session"]);
    await run(w, "hi");
    await w.request({ type: "get_state" });
    expect(w.received.filter((l) => l.type === "__not_json__")).toEqual([]);
    expect(w.stderr.join("")).toContain("\x1b]777;notify;Pi;Ready for input\x07");
  });

  it("shutdown-command's /quit ends the worker cleanly", async () => {
    const w = startWorker([], ["shutdown-command"], ["--no-session"]);
    const exited = new Promise<number | null>((resolveExit) => w.proc.once("exit", (code) => resolveExit(code)));
    await command(w, "/quit");
    expect(await exited).toBe(0);
  });

  it("auto-commit-on-exit commits the agent's changes when the worker shuts down", async () => {
    git(project.path, "init", "-q");
    git(project.path, "commit", "-q", "--allow-empty", "-m", "start");
    const w = startWorker(
      [
        { toolCalls: [{ name: "write", arguments: { path: "hello.txt", content: "hi\n" } }] },
        { text: "Wrote hello.txt\nmore" },
      ],
      ["auto-commit-on-exit"],
    );
    await run(w, "write hello");
    w.closeStdin();
    expect(await waitForExit(w.proc.pid!)).toBe(true);
    expect(git(project.path, "log", "-1", "--format=%s")).toBe("[pi] Wrote hello.txt\n");
    expect(git(project.path, "status", "--porcelain")).toBe("");
  });

  it("trigger-compact compacts on /trigger-compact, and custom-compaction falls back to the default summary headless", async () => {
    const w = startWorker(
      [
        { text: "first answer ".repeat(40) },
        { text: "second answer ".repeat(40) },
        { text: "the summary" },
        { text: "the turn's start" },
      ],
      ["trigger-compact", "custom-compaction"],
      ["--compaction-keep-tokens", "1"],
    );
    await run(w, "one");
    await run(w, "two");
    const from = await command(w, "/trigger-compact");
    const end = await w.event("compaction_end", 20_000, from);
    // The cut falls on the last answer, inside its turn: as in pi, the history and the turn's prefix are summarized apart.
    expect(end).toMatchObject({
      reason: "manual",
      aborted: false,
      result: { summary: "the summary\n\n---\n\n**Turn Context (split turn):**\n\nthe turn's start" },
    });
    await w.waitFor((l) => isRequest("notify")(l) && l.message === "Compaction completed", undefined, from);
    expect(notices(w, from)).toEqual(
      expect.arrayContaining([
        "Compaction started",
        "Custom compaction extension triggered",
        "Could not find Gemini Flash model, using default compaction",
      ]),
    );
  });

  it("auto-commit-on-exit reads the in-memory session with --no-session, as in pi", async () => {
    git(project.path, "init", "-q");
    git(project.path, "commit", "-q", "--allow-empty", "-m", "start");
    const w = startWorker(
      [{ toolCalls: [{ name: "write", arguments: { path: "b.txt", content: "b\n" } }] }, { text: "Added b.txt" }],
      ["auto-commit-on-exit"],
      ["--no-session"],
    );
    await run(w, "write b");
    w.closeStdin();
    expect(await waitForExit(w.proc.pid!)).toBe(true);
    expect(git(project.path, "log", "-1", "--format=%s")).toBe("[pi] Added b.txt\n");
  });

  it("handoff opens the editor (custom UI is undefined over RPC, as in pi) and moves to a new session with the prompt", async () => {
    const w = startWorker([{ text: "we refactored auth" }, { text: "tests written" }], ["handoff"]);
    await run(w, "refactor auth");
    const before = (await w.request({ type: "get_state" })).data.sessionFile as string;
    // As in pi, the prompt of a command is answered once its handler is done: after the editor dialog.
    const from = w.received.length;
    w.writeRaw(`${JSON.stringify({ type: "prompt", id: "handoff", message: "/handoff write the tests" })}\n`);
    const editor = await w.waitFor(isRequest("editor"), undefined, from);
    expect(editor.title).toBe("Edit handoff prompt");
    w.writeRaw(
      JSON.stringify({ type: "extension_ui_response", id: editor.id, value: "Write tests for the auth refactor" }) +
        "\n",
    );
    const text = await w.waitFor(isRequest("set_editor_text"), undefined, from);
    expect(text.text).toBe("Write tests for the auth refactor");
    await w.waitFor(
      (l) => isRequest("notify")(l) && l.message === "Handoff ready. Submit when ready.",
      undefined,
      from,
    );
    expect(await w.waitFor((l) => l.type === "response" && l.id === "handoff", undefined, from)).toMatchObject({
      success: true,
    });
    const state = (await w.request({ type: "get_state" })).data;
    expect(state.sessionFile).not.toBe(before);
    expect(state.messageCount).toBe(0);
    // As in pi, the new session's file is written with its first message, its header naming the parent.
    expect(existsSync(state.sessionFile)).toBe(false);
    await run(w, text.text);
    expect(readFileSync(state.sessionFile, "utf8").split("\n")[0]).toContain(
      `"parentSession":${JSON.stringify(before)}`,
    );
  });

  it("git-checkpoint stashes the working tree at each turn of a real repository without errors", async () => {
    git(project.path, "init", "-q");
    writeFileSync(join(project.path, "a.txt"), "one\n");
    git(project.path, "add", "a.txt");
    git(project.path, "commit", "-q", "-m", "start");
    writeFileSync(join(project.path, "a.txt"), "two\n");
    const w = startWorker(
      [{ toolCalls: [{ name: "read", arguments: { path: "a.txt" } }] }, { text: "read it" }],
      ["git-checkpoint"],
    );
    await run(w, "read a");
    expect(w.received.filter((l) => l.type === "extension_error")).toEqual([]);
    expect(readdirSync(join(project.path, ".git"))).toContain("objects");
    expect(readFileSync(join(project.path, "a.txt"), "utf8")).toBe("two\n");
  });
});
