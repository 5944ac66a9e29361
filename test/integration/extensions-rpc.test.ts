/**
 * Extensions in the built worker (`dist/cli/pi.js --mode rpc`, faux model): tools,
 * a blocking `tool_call` guard, a `confirm` dialog over RPC, `extension_error`,
 * and project extensions that need trust. Run `npm run build` first.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RpcWorker, killAllWorkers, tempDir } from "../support/rpc-worker.js";

const GUARD_EXAMPLE = resolve(import.meta.dirname, "../../examples/extensions/guard.ts");

let home: { path: string; cleanup: () => void };
let project: { path: string; cleanup: () => void };
let src: { path: string; cleanup: () => void };

beforeEach(() => {
  home = tempDir("pi-ext-home-");
  project = tempDir("pi-ext-project-");
  src = tempDir("pi-ext-src-");
});

afterEach(async () => {
  await killAllWorkers();
  home.cleanup();
  project.cleanup();
  src.cleanup();
});

type Reply = { text?: string; toolCalls?: { name: string; arguments: Record<string, unknown> }[] };

/** A worker on the faux model replaying `replies`, with the given extra flags. */
function startWorker(replies: Reply[], args: string[] = []): RpcWorker {
  const script = join(src.path, `script-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(script, JSON.stringify(replies));
  return new RpcWorker(["--mode", "rpc", "--provider", "faux", "--faux-script", script, ...args], {
    cwd: project.path,
    env: { PI_ORCH_HOME: home.path, ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" },
  });
}

function extension(name: string, code: string): string {
  const path = join(src.path, name);
  writeFileSync(path, code);
  return path;
}

/** Resolve once the worker's stderr contains `text`. */
function stderrContains(w: RpcWorker, text: string, timeoutMs = 10_000): Promise<void> {
  if (w.stderr.join("").includes(text)) return Promise.resolve();
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      w.proc.stderr!.off("data", onData);
      reject(new Error(`stderr never contained ${JSON.stringify(text)}; it was: ${w.stderr.join("")}`));
    }, timeoutMs);
    const onData = () => {
      if (!w.stderr.join("").includes(text)) return;
      clearTimeout(timer);
      w.proc.stderr!.off("data", onData);
      resolvePromise();
    };
    // Registered after RpcWorker's own listener, so `w.stderr` already holds the chunk.
    w.proc.stderr!.on("data", onData);
  });
}

/** The final `toolResult` messages of a run, from its `agent_end`. */
function toolResults(agentEnd: Record<string, any>): Record<string, any>[] {
  return agentEnd.messages.filter((m: { role: string }) => m.role === "toolResult");
}

describe("extensions over RPC", () => {
  it("lets the model call a tool registered by an extension and returns its result", async () => {
    const w = startWorker(
      [{ toolCalls: [{ name: "word_count", arguments: { text: "one two three" } }] }, { text: "three words" }],
      ["--extension", GUARD_EXAMPLE],
    );
    const state = await w.request({ type: "get_state" });
    expect(state.data.tools).toContain("word_count");

    const from = w.received.length;
    expect(await w.request({ type: "prompt", message: "count the words" })).toMatchObject({ success: true });
    const end = await w.event("agent_end", undefined, from);
    const executed = w.received.slice(from).find((l) => l.type === "tool_execution_end");
    expect(executed).toMatchObject({
      toolName: "word_count",
      isError: false,
      result: { content: [{ type: "text", text: "3 words, 1 lines, 13 characters" }], details: { words: 3 } },
    });
    expect(toolResults(end)).toEqual([expect.objectContaining({ toolName: "word_count", isError: false })]);
    expect(end.messages.at(-1)).toMatchObject({ role: "assistant", content: [{ type: "text", text: "three words" }] });
  });

  it("runs the example's /hello command and lists it in get_commands", async () => {
    const w = startWorker([], ["-e", GUARD_EXAMPLE]);
    const commands = await w.request({ type: "get_commands" });
    expect(commands.data.commands).toEqual([
      {
        name: "hello",
        description: "Say hello (usage: /hello [name])",
        source: "extension",
        sourceInfo: {
          path: GUARD_EXAMPLE,
          source: "local",
          scope: "temporary",
          origin: "top-level",
          baseDir: dirname(GUARD_EXAMPLE),
        },
      },
    ]);
    const from = w.received.length;
    expect(await w.request({ type: "prompt", message: "/hello Ada" })).toMatchObject({ success: true });
    const notice = await w.waitFor((l) => l.type === "extension_ui_request" && l.method === "notify", undefined, from);
    expect(notice.message).toMatch(/^Hello, Ada!/);
    expect(w.eventTypes(from)).not.toContain("agent_start");
  });

  it("blocks rm -rf with the guard example, and the model receives the reason as an error result", async () => {
    const victim = join(project.path, "x");
    mkdirSync(victim);
    writeFileSync(join(victim, "keep.txt"), "still here");
    const command = `rm -rf ${victim}`;
    const w = startWorker(
      [{ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "I will not delete it" }],
      ["--extension", GUARD_EXAMPLE],
    );
    const from = w.received.length;
    await w.request({ type: "prompt", message: "clean up" });
    const end = await w.event("agent_end", undefined, from);
    const [result] = toolResults(end);
    expect(result).toMatchObject({ toolName: "bash", isError: true });
    expect(result.content[0].text).toMatch(/^Blocked by guard\.ts: .*deletes recursively/);
    expect(readFileSync(join(victim, "keep.txt"), "utf8")).toBe("still here");
  });

  it("round-trips a confirm dialog: extension_ui_request out, extension_ui_response in, the extension sees the answer", async () => {
    const ask = extension(
      "ask.ts",
      `export default (pi: any) => pi.on("tool_call", async (event: any, ctx: any) => {
         if (event.toolName !== "bash") return;
         const ok = await ctx.ui.confirm("Run this command?", event.input.command, { timeout: 20000 });
         if (!ok) return { block: true, reason: "The user declined: " + event.input.command };
       });`,
    );
    const w = startWorker(
      [
        { toolCalls: [{ name: "bash", arguments: { command: "echo first" } }] },
        { toolCalls: [{ name: "bash", arguments: { command: "echo second" } }] },
        { text: "done" },
      ],
      ["--extension", ask],
    );
    const from = w.received.length;
    await w.request({ type: "prompt", message: "run two commands" });

    const isConfirm = (l: Record<string, any>) => l.type === "extension_ui_request" && l.method === "confirm";
    const first = await w.waitFor(isConfirm, undefined, from);
    expect(first).toMatchObject({ title: "Run this command?", message: "echo first", timeout: 20000 });
    w.writeRaw(`${JSON.stringify({ type: "extension_ui_response", id: first.id, confirmed: false })}\n`);

    const second = await w.waitFor((l) => isConfirm(l) && l.id !== first.id, undefined, from);
    expect(second.message).toBe("echo second");
    w.writeRaw(`${JSON.stringify({ type: "extension_ui_response", id: second.id, confirmed: true })}\n`);

    const end = await w.event("agent_end", undefined, from);
    const [declined, accepted] = toolResults(end);
    expect(declined).toMatchObject({
      isError: true,
      content: [{ type: "text", text: "The user declined: echo first" }],
    });
    expect(accepted).toMatchObject({ isError: false });
    expect(accepted.content[0].text).toContain("second");
  });

  it("reports a throwing handler and a module that fails to load as extension_error, and the run completes", async () => {
    const thrower = extension(
      "thrower.ts",
      `export default (pi: any) => {
         pi.on("before_agent_start", () => { throw new Error("boom in before_agent_start"); });
         pi.on("tool_result", () => { throw new Error("boom in tool_result"); });
       };`,
    );
    const broken = extension("broken.ts", `throw new Error("broken at import");`);
    writeFileSync(join(project.path, "notes.txt"), "some notes\n");
    const w = startWorker(
      [{ toolCalls: [{ name: "read", arguments: { path: "notes.txt" } }] }, { text: "finished anyway" }],
      ["--extension", thrower, "--extension", broken],
    );

    const loadError = await w.waitFor((l) => l.type === "extension_error" && l.event === "load");
    expect(loadError).toEqual({
      type: "extension_error",
      extensionPath: broken,
      event: "load",
      error: "broken at import",
    });

    const from = w.received.length;
    await w.request({ type: "prompt", message: "read the notes" });
    const end = await w.event("agent_end", undefined, from);
    const errors = w.received.slice(from).filter((l) => l.type === "extension_error");
    expect(errors).toEqual([
      {
        type: "extension_error",
        extensionPath: thrower,
        event: "before_agent_start",
        error: "boom in before_agent_start",
      },
      { type: "extension_error", extensionPath: thrower, event: "tool_result", error: "boom in tool_result" },
    ]);
    expect(toolResults(end)).toEqual([expect.objectContaining({ toolName: "read", isError: false })]);
    expect(end.messages.at(-1)).toMatchObject({
      role: "assistant",
      stopReason: "stop",
      content: [{ type: "text", text: "finished anyway" }],
    });
    await stderrContains(w, `extension ${thrower} failed (before_agent_start): boom in before_agent_start`);
  });

  it("does not load a project's .pi/extensions/ until the project is trusted, then remembers the decision", async () => {
    const marker = join(project.path, "project-extension-ran.txt");
    mkdirSync(join(project.path, ".pi", "extensions"), { recursive: true });
    const projectExtension = join(project.path, ".pi", "extensions", "project.ts");
    writeFileSync(
      projectExtension,
      `import { writeFileSync } from "node:fs";
       writeFileSync(${JSON.stringify(marker)}, "ran");
       export default (pi: any) => pi.registerCommand("from-project", { description: "project command", handler: () => {} });`,
    );
    const names = async (w: RpcWorker) =>
      (await w.request({ type: "get_commands" })).data.commands.map((c: { name: string }) => c.name);

    const untrusted = startWorker([]);
    expect(await names(untrusted)).toEqual([]);
    await stderrContains(
      untrusted,
      `skipped the project extension ${projectExtension}: the project is not trusted (run with --trust to allow it, or --approve for this run only)`,
    );
    expect(existsSync(marker)).toBe(false);
    untrusted.closeStdin();
    await untrusted.exited;

    const trusted = startWorker([], ["--trust"]);
    expect(await names(trusted)).toEqual(["from-project"]);
    expect(existsSync(marker)).toBe(true);
    trusted.closeStdin();
    await trusted.exited;
    const recorded = JSON.parse(readFileSync(join(home.path, "trust.json"), "utf8"));
    expect(Object.values(recorded)).toEqual([true]);

    const remembered = startWorker([]);
    expect(await names(remembered)).toEqual(["from-project"]);
  });
});
