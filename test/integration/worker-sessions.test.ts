/**
 * Sessions, resume after a crash, fork/clone, compaction and the precise edit tool,
 * through the built `pi --mode rpc` against the mock model server.
 */
import { copyFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { useMockWorkerEnv } from "../support/mock-worker-env.js";
import { RpcWorker, waitForExit } from "../support/rpc-worker.js";

const ctx = useMockWorkerEnv();

function writeModels(contextWindow = 128000): void {
  ctx.writeModels({ contextWindow });
}

function startWorker(args: string[] = []): RpcWorker {
  return new RpcWorker(["--mode", "rpc", "--provider", "mock", "--model", "mock-1", ...args], {
    cwd: ctx.project,
    env: { PI_ORCH_HOME: ctx.home },
  });
}

function sessionFiles(): string[] {
  const root = join(ctx.home, "sessions");
  if (!existsSync(root)) return [];
  return readdirSync(root).flatMap((d) => readdirSync(join(root, d)).map((f) => join(root, d, f)));
}

const roles = (messages: { role: string }[]) => messages.map((m) => m.role);

describe("sessions", () => {
  it("resumes the conversation after the worker is killed during a streaming reply", async () => {
    writeModels();
    ctx.server.enqueue(
      { text: "first answer" },
      { text: Array.from({ length: 40 }, (_, i) => `w${i} `), chunkDelayMs: 100 },
    );
    const w1 = startWorker();
    await w1.request({ type: "prompt", message: "one" });
    await w1.event("agent_end");
    const from = w1.received.length;
    await w1.request({ type: "prompt", message: "two" });
    await w1.waitFor((l) => l.type === "message_update", 10_000, from);
    const state = await w1.request({ type: "get_state" });
    const file = state.data.sessionFile as string;
    expect(file).toMatch(/\.jsonl$/);
    w1.kill("SIGKILL");
    await w1.exited;

    ctx.server.enqueue({ text: "resumed answer" });
    const w2 = startWorker(["--session", file]);
    const messages = await w2.request({ type: "get_messages" });
    expect(roles(messages.data.messages)).toEqual(["system", "user", "assistant", "user"]);
    expect(messages.data.messages[2].content[0].text).toBe("first answer");
    await w2.request({ type: "prompt", message: "three" });
    const end = await w2.event("agent_end");
    expect(end.messages.at(-1).content[0].text).toBe("resumed answer");
    const body = ctx.server.requests.at(-1)!.body;
    const sent = JSON.stringify(body.messages);
    expect(sent).toContain("first answer");
    expect(sent).toContain("two");
  });

  it("resumes after a kill during a bash tool call; the killed worker's command dies too", async () => {
    writeModels();
    ctx.server.enqueue({ toolCalls: [{ name: "bash", arguments: { command: "sleep 30 & echo SLEEP=$!; wait" } }] });
    const w1 = startWorker();
    await w1.request({ type: "prompt", message: "do it" });
    const update = await w1.waitFor(
      (l) => l.type === "tool_execution_update" && /SLEEP=\d+/.test(JSON.stringify(l.partialResult)),
    );
    const sleepPid = Number(/SLEEP=(\d+)/.exec(JSON.stringify(update.partialResult))![1]);
    const file = (await w1.request({ type: "get_state" })).data.sessionFile;
    w1.kill("SIGKILL");
    await w1.exited;
    // No one could clean up after a SIGKILL; the command's watchdog sees the pipe close.
    expect(await waitForExit(sleepPid)).toBe(true);

    ctx.server.enqueue({ text: "picked up again" });
    const w2 = startWorker(["--session", file]);
    const messages = await w2.request({ type: "get_messages" });
    expect(roles(messages.data.messages)).toEqual(["system", "user", "assistant"]);
    expect(messages.data.messages[2].content[0].name).toBe("bash");
    await w2.request({ type: "prompt", message: "continue" });
    await w2.event("agent_end");
    const sent = ctx.server.requests.at(-1)!.body.messages as any[];
    const toolMsg = sent.find((m) => m.role === "tool");
    expect(toolMsg.content).toMatch(/interrupted/);
  });

  it("continues a session written by pi 0.73.1", async () => {
    writeModels();
    const recorded = resolve(import.meta.dirname, "../fixtures/pi-0.73.1-session-file.jsonl");
    const copy = join(ctx.project, "pi-session.jsonl");
    copyFileSync(recorded, copy);
    const before = readFileSync(copy, "utf8");
    ctx.server.enqueue({ text: "continuing pi's session" });
    const w = startWorker(["--session", copy]);
    const messages = await w.request({ type: "get_messages" });
    expect(roles(messages.data.messages)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    await w.request({ type: "prompt", message: "and now?" });
    await w.event("agent_end");
    const after = readFileSync(copy, "utf8");
    expect(after.startsWith(before)).toBe(true);
    expect(after.length).toBeGreaterThan(before.length);
    expect(JSON.stringify(ctx.server.requests[0].body.messages)).toContain("alpha.txt");
  });

  it("loads a session with a missing parent as pi does (the orphan is a root) and warns naming the entry", async () => {
    writeModels();
    const broken = join(ctx.project, "broken.jsonl");
    writeFileSync(
      broken,
      `${[
        JSON.stringify({
          type: "session",
          version: 3,
          id: "s1",
          timestamp: new Date().toISOString(),
          cwd: ctx.project,
        }),
        JSON.stringify({
          type: "message",
          id: "aaaa1111",
          parentId: "ffff0000",
          timestamp: new Date().toISOString(),
          message: { role: "user", content: "hi", timestamp: 1 },
        }),
      ].join("\n")}\n`,
    );
    const w = startWorker(["--session", broken]);
    const messages = await w.request({ type: "get_messages" });
    expect(messages.success).toBe(true);
    expect(messages.data.messages.map((m: { content: unknown }) => m.content)).toEqual(["hi"]);
    w.closeStdin();
    expect((await w.exited).code).toBe(0);
    expect(w.stderr.join("")).toMatch(
      /line 2: entry "aaaa1111" has parentId "ffff0000", which is not in this file; it is treated as a root/,
    );
  });

  it("fork and clone write new files and leave the original untouched", async () => {
    writeModels();
    ctx.server.enqueue({ text: "a1" }, { text: "a2" });
    const w = startWorker();
    await w.request({ type: "prompt", message: "first question" });
    await w.event("agent_end");
    const from = w.received.length;
    await w.request({ type: "prompt", message: "second question" });
    await w.waitFor((l) => l.type === "agent_end", 10_000, from);
    const original = (await w.request({ type: "get_state" })).data.sessionFile as string;
    const originalBytes = readFileSync(original);

    const forkable = await w.request({ type: "get_fork_messages" });
    expect(forkable.data.messages.map((m: any) => m.text)).toEqual(["first question", "second question"]);
    const fork = await w.request({ type: "fork", entryId: forkable.data.messages[1].entryId });
    expect(fork.data).toEqual({ text: "second question", cancelled: false });
    const forkedState = await w.request({ type: "get_state" });
    expect(forkedState.data.sessionFile).not.toBe(original);
    expect(roles((await w.request({ type: "get_messages" })).data.messages)).toEqual(["system", "user", "assistant"]);

    const clone = await w.request({ type: "clone" });
    expect(clone.data).toEqual({ cancelled: false });
    const cloneState = await w.request({ type: "get_state" });
    expect(cloneState.data.sessionFile).not.toBe(forkedState.data.sessionFile);
    expect(readFileSync(original).equals(originalBytes)).toBe(true);
    expect(sessionFiles()).toHaveLength(3);
    const header = JSON.parse(readFileSync(forkedState.data.sessionFile, "utf8").split("\n")[0]);
    expect(header.parentSession).toBe(original);

    const fresh = await w.request({ type: "new_session" });
    expect(fresh.data).toEqual({ cancelled: false });
    expect((await w.request({ type: "get_messages" })).data.messages).toEqual([]);
    await w.request({ type: "switch_session", sessionPath: original });
    expect((await w.request({ type: "get_messages" })).data.messages).toHaveLength(5);
  });

  it("starts a new session in an empty file, at --session and at switch_session (a first write the disk refused)", async () => {
    writeModels();
    const first = join(ctx.project, "empty-1.jsonl");
    const second = join(ctx.project, "empty-2.jsonl");
    writeFileSync(first, "");
    writeFileSync(second, "");
    const w = startWorker(["--session", first]);
    expect((await w.request({ type: "get_state" })).data.sessionFile).toBe(first);
    expect(await w.request({ type: "switch_session", sessionPath: second })).toMatchObject({ success: true });
    expect((await w.request({ type: "get_state" })).data.sessionFile).toBe(second);
    const from = w.received.length;
    await w.request({ type: "prompt", message: "hello" });
    await w.event("agent_end", undefined, from);
    const lines = readFileSync(second, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ type: "session", version: 3 });
    expect(lines.filter((l) => l.type === "message").map((l) => l.message.role)).toEqual([
      "system",
      "user",
      "assistant",
    ]);
  });

  it("names a session and reports it in get_state", async () => {
    writeModels();
    const w = startWorker();
    await w.request({ type: "set_session_name", name: "fix-login" });
    const state = await w.request({ type: "get_state" });
    expect(state.data.sessionName).toBe("fix-login");
    // As in pi, the file is written with the first message, the name's entry with it.
    expect(existsSync(state.data.sessionFile)).toBe(false);
    const from = w.received.length;
    await w.request({ type: "prompt", message: "hello" });
    await w.event("agent_end", undefined, from);
    expect(readFileSync(state.data.sessionFile, "utf8")).toContain('"name":"fix-login"');
  });
});

describe("compaction", () => {
  it("compacts at the threshold; the next request carries the summary and the kept tail", async () => {
    writeModels(2000);
    const long = (tag: string) => Array.from({ length: 150 }, (_, i) => `${tag}${i}`).join(" ");
    ctx.server.enqueue(
      { toolCalls: [{ name: "bash", arguments: { command: "echo tool-output" } }], usage: { input: 300, output: 20 } },
      { text: long("alpha"), usage: { input: 330, output: 300 } },
      { text: long("beta"), usage: { input: 650, output: 450 } },
      { text: "SUMMARY: the user asked twice; bash printed tool-output." },
      { text: "after compaction" },
    );
    const w = startWorker(["--compaction-reserve-tokens", "1000", "--compaction-keep-tokens", "300"]);
    await w.request({ type: "prompt", message: "first" });
    await w.event("agent_settled");
    let from = w.received.length;
    await w.request({ type: "prompt", message: "second" });
    // As pi 1.6, a compaction after a run's last turn comes after its agent_end, before agent_settled.
    await w.waitFor((l) => l.type === "agent_settled", 10_000, from);
    const start = w.received.find((l) => l.type === "compaction_start");
    const end = w.received.find((l) => l.type === "compaction_end");
    expect(start).toEqual({ type: "compaction_start", reason: "threshold" });
    // The cut falls on the first turn's answer: as in pi, that turn's start (the prompt and
    // its tool call) is summarized on its own, and there is no history before it.
    expect(end?.result.summary).toBe(
      "No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nSUMMARY: the user asked twice; bash printed tool-output.",
    );
    expect(end?.aborted).toBe(false);
    const summaryRequest = ctx.server.requests[3].body;
    expect(summaryRequest.tools ?? []).toHaveLength(0);
    // The oldest part (the first prompt and its tool call) is summarized; the recent
    // tokens are kept verbatim.
    expect(JSON.stringify(summaryRequest.messages)).toContain("[User]: first");
    expect(JSON.stringify(summaryRequest.messages)).toContain("echo tool-output");

    from = w.received.length;
    await w.request({ type: "prompt", message: "third" });
    await w.waitFor((l) => l.type === "agent_end", 10_000, from);
    const next = ctx.server.requests[4].body.messages as any[];
    const text = JSON.stringify(next);
    expect(text).toContain("SUMMARY: the user asked twice");
    expect(text).toContain("third");
    expect(text).not.toContain("echo tool-output");
    expect(text).toContain("beta149");
    // Every tool message still follows the assistant message that called it.
    next.forEach((m, i) => {
      if (m.role === "tool")
        expect(next.slice(0, i).some((p) => p.tool_calls?.some((c: any) => c.id === m.tool_call_id))).toBe(true);
    });
    const file = (await w.request({ type: "get_state" })).data.sessionFile;
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.some((l) => l.type === "compaction")).toBe(true);
    expect(lines.filter((l) => l.type === "message" && l.message.role === "user")).toHaveLength(3);
  });

  it("compacts on request with custom instructions", async () => {
    writeModels();
    ctx.server.enqueue({ text: "x ".repeat(2000) }, { text: "y ".repeat(2000) }, { text: "MANUAL SUMMARY" });
    // The second answer is 1000 tokens: keeping 1001 puts the cut on its prompt, so one summary request.
    const w = startWorker(["--compaction-keep-tokens", "1001"]);
    await w.request({ type: "prompt", message: "one" });
    await w.event("agent_end");
    const from = w.received.length;
    await w.request({ type: "prompt", message: "two" });
    await w.waitFor((l) => l.type === "agent_end", 10_000, from);
    const r = await w.request({ type: "compact", customInstructions: "Focus on y" });
    expect(r.success).toBe(true);
    expect(r.data.summary).toBe("MANUAL SUMMARY");
    expect(JSON.stringify(ctx.server.requests[2].body.messages)).toContain("Focus on y");
    expect(w.received.find((l) => l.type === "compaction_start")).toEqual({
      type: "compaction_start",
      reason: "manual",
    });
  });
});

describe("tools through rpc", () => {
  it("finds an oldText with smart quotes where the file has ASCII quotes, and writes newText as the model gave it", async () => {
    writeModels();
    const file = join(ctx.project, "greet.js");
    const original = 'const a = 1;\nconsole.log("hello world");\nconst b = 2;\n';
    writeFileSync(file, original);
    ctx.server.enqueue(
      {
        toolCalls: [
          {
            name: "edit",
            arguments: {
              path: "greet.js",
              edits: [
                { oldText: "console.log(\u201chello world\u201d);", newText: "console.log(\u201chello there\u201d);" },
              ],
            },
          },
        ],
      },
      { text: "edited" },
    );
    const w = startWorker();
    await w.request({ type: "prompt", message: "change the greeting" });
    await w.event("agent_end");
    const end = w.received.find((l) => l.type === "tool_execution_end")!;
    expect(end.isError).toBe(false);
    expect(readFileSync(file, "utf8")).toBe("const a = 1;\nconsole.log(\u201chello there\u201d);\nconst b = 2;\n");
    const text = end.result.content[0].text as string;
    expect(text).toContain('-console.log("hello world");');
    expect(text).toContain("+console.log(\u201chello there\u201d);");
    expect(end.result.details.firstChangedLine).toBe(2);
  });

  it("reports the active tool set in get_state and follows --tools", async () => {
    writeModels();
    const w = startWorker(["--tools", "+grep,-write"]);
    const state = await w.request({ type: "get_state" });
    expect(state.data.tools).toEqual(["read", "bash", "edit", "grep"]);
    ctx.server.enqueue({ text: "ok" });
    await w.request({ type: "prompt", message: "hi" });
    await w.event("agent_end");
    const tools = ctx.server.requests[0].body.tools.map((t: any) => t.function.name);
    expect(tools).toEqual(["read", "bash", "edit", "grep"]);
    expect(ctx.server.requests[0].body.messages[0].content).toContain("- grep:");
    expect(ctx.server.requests[0].body.messages[0].content).not.toContain("- write:");
  });
});
