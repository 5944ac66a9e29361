/**
 * Extensions in-process: real files in temp folders, loaded with jiti, bound to a
 * real session (faux model, no session file), driven through the `ExtensionHooks`
 * the session calls.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isRecursiveForceRm } from "../../examples/extensions/guard.js";
import type { AgentMessage, ToolCall } from "../../shared/schema/messages.js";
import { NO_EXTENSIONS, type ExtensionHooks, type ExtensionUi } from "../../worker/extensions/hooks.js";
import { loadExtensions } from "../../worker/extensions/loader.js";
import type { ExtensionErrorEvent } from "../../worker/extensions/runner.js";
import { projectRoot, recordTrust, recordedTrust, resolveTrust, trustFilePath } from "../../worker/extensions/trust.js";
import { AgentSession } from "../../worker/core/agent-session.js";
import { tempDir } from "../support/rpc-worker.js";

const dirs: { cleanup: () => void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

function temp(prefix: string): string {
  const d = tempDir(prefix);
  dirs.push(d);
  return d.path;
}

function write(path: string, text: string): string {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
  return path;
}

/** A UI that records notices and answers dialogs from a queue (or waits on a gate). */
function recordingUi() {
  const notices: string[] = [];
  const answers: boolean[] = [];
  const ui: ExtensionUi = {
    select: async () => undefined,
    confirm: async () => answers.shift() ?? false,
    input: async () => undefined,
    editor: async (_t, prefill) => prefill,
    notify: (message) => void notices.push(message),
    setStatus: () => undefined,
  };
  return { ui, notices, answers };
}

interface Loaded {
  hooks: ExtensionHooks;
  errors: ExtensionErrorEvent[];
  notices: string[];
  answers: boolean[];
}

async function load(opts: {
  paths?: string[];
  home?: string;
  cwd?: string;
  trusted?: boolean;
  ui?: ExtensionUi;
}): Promise<Loaded> {
  const errors: ExtensionErrorEvent[] = [];
  const recording = recordingUi();
  const cwd = opts.cwd ?? temp("pi-ext-cwd-");
  const home = opts.home ?? temp("pi-ext-home-");
  const hooks = await loadExtensions({
    paths: opts.paths ?? [],
    home,
    cwd,
    trusted: opts.trusted ?? false,
    emit: (e) => void errors.push(e),
  });
  const session = new AgentSession({ cwd, home, provider: "faux", noSession: true, env: {} });
  session.setUi(opts.ui ?? recording.ui, true);
  session.setExtensions(hooks);
  return { hooks, errors, notices: recording.notices, answers: recording.answers };
}

const call = (name: string, args: Record<string, unknown>): ToolCall => ({
  type: "toolCall",
  id: "call-1",
  name,
  arguments: args,
});
const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 1 });

describe("loading", () => {
  it("loads a TypeScript extension from outside the repository, with typebox resolved to the worker's copy", async () => {
    const dir = temp("pi-ext-src-");
    const path = write(
      join(dir, "greet.ts"),
      `import { Type, type Static } from "typebox";
       const Params = Type.Object({ name: Type.String() });
       export default function (pi: any) {
         pi.registerTool({
           name: "greet", label: "Greet", description: "greets",
           parameters: Params,
           async execute(_id: string, args: Static<typeof Params>, _signal: any, _onUpdate: any, ctx: any) {
             ctx.ui.notify("greeting from " + ctx.cwd);
             return { content: [{ type: "text", text: "hello " + args.name + " in " + ctx.sessionManager.getSessionId() }] };
           },
         });
         pi.registerCommand("/wave", { description: "waves", handler: (args: string, ctx: any) => ctx.ui.notify("wave " + args) });
       }`,
    );
    const { hooks, errors, notices } = await load({ paths: [path] });
    expect(errors).toEqual([]);
    const [tool] = hooks.tools();
    expect(tool).toMatchObject({ name: "greet", label: "Greet", description: "greets" });
    const result = await tool.execute(
      { name: "ada" },
      { cwd: "/ignored", toolCallId: "c1", signal: new AbortController().signal },
    );
    expect(result.content).toEqual([{ type: "text", text: expect.stringMatching(/^hello ada in [0-9a-f-]{36}$/) }]);
    expect(hooks.commands()).toEqual([{ name: "wave", description: "waves", source: "extension", path }]);
    expect(await hooks.runCommand("wave", "hi")).toBe(true);
    expect(await hooks.runCommand("nope", "")).toBe(false);
    expect(notices).toEqual([expect.stringMatching(/^greeting from /), "wave hi"]);
  });

  it("returns the empty hooks without importing anything when there are no extensions", async () => {
    const { hooks } = await load({});
    expect(hooks).toBe(NO_EXTENSIONS);
  });

  it("finds $PI_ORCH_HOME/extensions/*.ts and */index.ts after the --extension files", async () => {
    const home = temp("pi-ext-home-");
    const src = temp("pi-ext-src-");
    const tag = (name: string) =>
      `export default (pi: any) => pi.on("before_agent_start", (e: any) => ({ systemPrompt: e.systemPrompt + " ${name}" }));`;
    write(join(home, "extensions", "b.ts"), tag("home-b"));
    write(join(home, "extensions", "a", "index.ts"), tag("home-a"));
    write(join(home, "extensions", "notes.md"), "not an extension");
    const explicit = write(join(src, "z.ts"), tag("explicit"));
    const { hooks } = await load({ home, paths: [explicit] });
    expect((await hooks.beforeAgentStart({ messageType: "user", prompt: "task" }, "base"))?.systemPrompt).toBe(
      "base explicit home-a home-b",
    );
  });

  it("reports a module that fails to load at session start, undoes what it registered and loads the others", async () => {
    const src = temp("pi-ext-src-");
    const broken = write(
      join(src, "broken.ts"),
      `export default (pi: any) => { pi.registerCommand("half", { handler: () => {} }); throw new Error("cannot start"); };`,
    );
    const notAFunction = write(join(src, "object.ts"), `export default { hello: 1 };`);
    const syntax = write(join(src, "syntax.ts"), `export default (pi: any) => {{{`);
    const missing = join(src, "missing.ts");
    const good = write(
      join(src, "good.ts"),
      `export default (pi: any) => pi.registerCommand("good", { handler: () => {} });`,
    );
    const { hooks, errors } = await load({ paths: [broken, notAFunction, syntax, missing, good] });
    expect(hooks.commands().map((c) => c.name)).toEqual(["good"]);
    expect(errors).toEqual([]);
    await hooks.sessionStart("startup");
    expect(errors.map((e) => [e.extensionPath, e.event])).toEqual([
      [broken, "load"],
      [notAFunction, "load"],
      [syntax, "load"],
      [missing, "load"],
    ]);
    expect(errors[0].error).toBe("cannot start");
    expect(errors[1].error).toMatch(/must default-export a function/);
    expect(errors[3].error).toMatch(/no such file/);
  });

  it("rejects a tool without a schema with an error naming the extension", async () => {
    const path = write(
      join(temp("pi-ext-src-"), "bad-tool.ts"),
      `export default (pi: any) => pi.registerTool({ name: "t", label: "t", description: "d", execute: async () => ({ content: [] }) });`,
    );
    const { hooks, errors } = await load({ paths: [path] });
    await hooks.sessionStart("startup");
    expect(errors).toHaveLength(1);
    expect(errors[0].error).toBe(
      `extension ${path}: registerTool "t": parameters must be a TypeBox schema (Type.Object({...}))`,
    );
  });
});

describe("handlers", () => {
  it("run in load order, each seeing the changes of the ones before", async () => {
    const src = temp("pi-ext-src-");
    const first = write(
      join(src, "first.ts"),
      `export default (pi: any) => {
         pi.on("before_agent_start", (e: any) => ({ systemPrompt: e.systemPrompt + " +first(" + e.prompt + ")" }));
         pi.on("tool_result", (e: any) => ({ content: [{ type: "text", text: e.content[0].text + " +first" }] }));
       };`,
    );
    const second = write(
      join(src, "second.ts"),
      `export default (pi: any) => {
         pi.on("before_agent_start", (e: any) => ({ systemPrompt: e.systemPrompt + " +second" }));
         pi.on("tool_result", (e: any) => ({ content: [{ type: "text", text: e.content[0].text + " +second" }], isError: false, details: { seen: e.isError } }));
       };`,
    );
    const { hooks } = await load({ paths: [first, second] });
    expect((await hooks.beforeAgentStart({ messageType: "user", prompt: "go" }, "base"))?.systemPrompt).toBe(
      "base +first(go) +second",
    );
    const changed = await hooks.toolResult(call("read", {}), {}, { content: [{ type: "text", text: "raw" }] }, true);
    expect(changed).toEqual({
      result: { content: [{ type: "text", text: "raw +first +second" }], details: { seen: true } },
      isError: false,
    });
  });

  it("turn a throwing handler into extension_error and still run the next one", async () => {
    const src = temp("pi-ext-src-");
    const thrower = write(
      join(src, "a-thrower.ts"),
      `export default (pi: any) => pi.on("agent_end", () => { throw new Error("boom"); });`,
    );
    const rejecter = write(
      join(src, "b-rejecter.ts"),
      `export default (pi: any) => pi.on("agent_end", async () => Promise.reject("plain string"));`,
    );
    const listener = write(
      join(src, "c-listener.ts"),
      `export default (pi: any) => pi.on("agent_end", (e: any, ctx: any) => ctx.ui.notify("saw " + e.messages.length + " messages"));`,
    );
    const { hooks, errors, notices } = await load({ paths: [thrower, rejecter, listener] });
    await hooks.notify({ type: "agent_end", messages: [user("hi")] });
    expect(errors).toEqual([
      { type: "extension_error", extensionPath: thrower, event: "agent_end", error: "boom" },
      { type: "extension_error", extensionPath: rejecter, event: "agent_end", error: "plain string" },
    ]);
    expect(notices).toEqual(["saw 1 messages"]);
  });

  it("let tool_call block with a reason, stopping the chain", async () => {
    const src = temp("pi-ext-src-");
    const guard = write(
      join(src, "a-guard.ts"),
      `export default (pi: any) => pi.on("tool_call", (e: any) =>
         e.toolName === "bash" && e.input.command.includes("rm -rf") ? { block: true, reason: "no rm -rf here" } : undefined);`,
    );
    const after = write(
      join(src, "b-after.ts"),
      `export default (pi: any) => pi.on("tool_call", (e: any, ctx: any) => ctx.ui.notify("after saw " + e.toolName));`,
    );
    const { hooks, notices } = await load({ paths: [guard, after] });
    expect(await hooks.toolCall(call("bash", { command: "rm -rf /" }), { command: "rm -rf /" })).toEqual({
      block: true,
      reason: "no rm -rf here",
    });
    expect(notices).toEqual([]);
    expect(await hooks.toolCall(call("bash", { command: "ls" }), { command: "ls" })).toEqual({
      args: { command: "ls" },
      revalidate: false,
    });
    expect(notices).toEqual(["after saw bash"]);
  });

  it("let tool_call change the input in place (as pi: returned inputs are ignored, no re-validation)", async () => {
    const src = temp("pi-ext-src-");
    const returns = write(
      join(src, "a.ts"),
      `export default (pi: any) => pi.on("tool_call", (e: any) => ({ input: { ...e.input, timeout: 5 } }));`,
    );
    const mutates = write(
      join(src, "b.ts"),
      `export default (pi: any) => pi.on("tool_call", (e: any) => { e.input.command = "set -e; " + e.input.command; });`,
    );
    const { hooks } = await load({ paths: [returns, mutates] });
    const args = { command: "make" };
    expect(await hooks.toolCall(call("bash", args), args)).toEqual({
      args: { command: "set -e; make" },
      revalidate: false,
    });
    expect(args).toEqual({ command: "make" });
  });

  it("block a tool call when a tool_call handler throws (fail safe), after the other handlers ran", async () => {
    const src = temp("pi-ext-src-");
    const crashing = write(
      join(src, "a.ts"),
      `export default (pi: any) => pi.on("tool_call", () => { throw new Error("guard crashed"); });`,
    );
    const other = write(
      join(src, "b.ts"),
      `export default (pi: any) => pi.on("tool_call", (_e: any, ctx: any) => ctx.ui.notify("b ran"));`,
    );
    const { hooks, errors, notices } = await load({ paths: [crashing, other] });
    const decision = await hooks.toolCall(call("bash", { command: "ls" }), { command: "ls" });
    expect(decision?.block).toBe(true);
    expect(decision?.reason).toContain("guard crashed");
    expect(errors.map((e) => e.event)).toEqual(["tool_call"]);
    expect(notices).toEqual(["b ran"]);
  });

  it("let context replace the messages of one request, on a copy", async () => {
    const path = write(
      join(temp("pi-ext-src-"), "ctx.ts"),
      `export default (pi: any) => pi.on("context", (e: any) => {
         e.messages[0].content = "changed in place";
         return { messages: [...e.messages, { role: "user", content: "injected", timestamp: 2 }] };
       });`,
    );
    const { hooks } = await load({ paths: [path] });
    const messages = [user("original")];
    expect(await hooks.context(messages)).toEqual([
      user("changed in place"),
      { role: "user", content: "injected", timestamp: 2 },
    ]);
    expect(messages).toEqual([user("original")]);
  });

  it("name commands registered by several extensions name:1, name:2 in load order", async () => {
    const src = temp("pi-ext-src-");
    const cmd = (tag: string) =>
      `export default (pi: any) => pi.registerCommand("review", { handler: (_a: string, ctx: any) => ctx.ui.notify("${tag}") });`;
    const a = write(join(src, "a.ts"), cmd("a"));
    const b = write(join(src, "b.ts"), cmd("b"));
    const { hooks, notices } = await load({ paths: [a, b] });
    expect(hooks.commands().map((c) => [c.name, c.path])).toEqual([
      ["review:1", a],
      ["review:2", b],
    ]);
    expect(await hooks.runCommand("review", "")).toBe(false);
    await hooks.runCommand("review:2", "");
    expect(notices).toEqual(["b"]);
  });

  it("answers a command once its handler is done, dialogs included (as pi)", async () => {
    const path = write(
      join(temp("pi-ext-src-"), "ask.ts"),
      `export default (pi: any) => pi.registerCommand("ask", { handler: async (_a: string, ctx: any) => {
         const ok = await ctx.ui.confirm("Really?");
         ctx.ui.notify("answer " + ok);
       } });`,
    );
    const notices: string[] = [];
    let answer!: (value: boolean) => void;
    const ui: ExtensionUi = {
      ...recordingUi().ui,
      confirm: () => new Promise((resolve) => (answer = resolve)),
      notify: (m) => void notices.push(m),
    };
    let asked!: () => void;
    const opened = new Promise<void>((resolve) => (asked = resolve));
    ui.confirm = () => (asked(), new Promise((resolve) => (answer = resolve)));
    const { hooks } = await load({ paths: [path], ui });
    let done = false;
    const ran = hooks.runCommand("ask", "").then((r) => ((done = true), r));
    await opened;
    expect([done, notices]).toEqual([false, []]);
    answer(true);
    expect(await ran).toBe(true);
    expect(notices).toEqual(["answer true"]);
  });
});

describe("project extensions and trust", () => {
  function projectWithExtension(): { project: string; marker: string; path: string } {
    const project = temp("pi-ext-project-");
    mkdirSync(join(project, ".git"));
    const marker = join(project, "imported.txt");
    const path = write(
      join(project, ".pi", "extensions", "project.ts"),
      `import { writeFileSync } from "node:fs";
       writeFileSync(${JSON.stringify(marker)}, "imported");
       export default (pi: any) => pi.registerCommand("project-cmd", { handler: () => {} });`,
    );
    return { project, marker, path };
  }

  it("skips an untrusted project's extensions without importing them", async () => {
    const { project, marker, path } = projectWithExtension();
    const sub = join(project, "src");
    mkdirSync(sub);
    const { hooks } = await load({ cwd: sub, trusted: false });
    expect(hooks.skipped()).toEqual([path]);
    expect(hooks.commands()).toEqual([]);
    expect(existsSync(marker)).toBe(false);
  });

  it("loads a trusted project's extensions after the others", async () => {
    const { project, marker } = projectWithExtension();
    const explicit = write(
      join(temp("pi-ext-src-"), "x.ts"),
      `export default (pi: any) => pi.registerCommand("explicit", { handler: () => {} });`,
    );
    const { hooks } = await load({ cwd: project, trusted: true, paths: [explicit] });
    expect(hooks.skipped()).toEqual([]);
    expect(hooks.commands().map((c) => c.name)).toEqual(["explicit", "project-cmd"]);
    expect(readFileSync(marker, "utf8")).toBe("imported");
  });

  it("records trust per project root in trust.json in pi 1.6.0's shape, replacing the file atomically", () => {
    const home = temp("pi-ext-home-");
    const { project } = projectWithExtension();
    const other = temp("pi-ext-other-");
    mkdirSync(join(project, "deep", "er"), { recursive: true });

    expect(recordedTrust(home, project)).toBeUndefined();
    recordTrust(home, join(project, "deep", "er"), true);
    recordTrust(home, other, false);
    expect(recordedTrust(home, project)).toBe(true);
    expect(recordedTrust(home, join(project, "deep"))).toBe(true);
    expect(recordedTrust(home, other)).toBe(false);
    expect(projectRoot(join(project, "deep", "er"))).toBe(projectRoot(project));
    expect(JSON.parse(readFileSync(trustFilePath(home), "utf8"))).toEqual({
      [projectRoot(project)]: true,
      [projectRoot(other)]: false,
    });
    expect(readdirSync(home)).toEqual(["trust.json"]);

    recordTrust(home, project, false);
    expect(recordedTrust(home, project)).toBe(false);
  });

  it("reads pi's decisions (the nearest folder's, null is none) and our older nested file, rewriting it in pi's shape", () => {
    const home = temp("pi-ext-home-");
    const parent = temp("pi-ext-parent-");
    const child = join(parent, "child");
    const grandchild = join(child, "deeper");
    mkdirSync(grandchild, { recursive: true });
    const key = (p: string) => realpathSync(p);
    writeFileSync(trustFilePath(home), JSON.stringify({ [key(parent)]: true, [key(child)]: null }));
    expect(recordedTrust(home, grandchild)).toBe(true);
    writeFileSync(trustFilePath(home), JSON.stringify({ [key(parent)]: true, [key(child)]: false }));
    expect(recordedTrust(home, grandchild)).toBe(false);

    const old = temp("pi-ext-old-");
    writeFileSync(trustFilePath(home), JSON.stringify({ trusted: { [key(old)]: true } }));
    expect(recordedTrust(home, old)).toBe(true);
    recordTrust(home, parent, false);
    expect(JSON.parse(readFileSync(trustFilePath(home), "utf8"))).toEqual({ [key(old)]: true, [key(parent)]: false });
  });

  it("decides as pi 1.6.0: --approve / --no-approve for this run, --trust records, else the record, else whether .pi/ needs trust", async () => {
    const home = temp("pi-ext-home-");
    const project = temp("pi-ext-project-");
    const warnings: string[] = [];
    const warn = (m: string) => void warnings.push(m);
    // Nothing in .pi/ to trust: trusted, as pi counts it.
    expect(await resolveTrust(home, project, {}, warn)).toBe(true);
    mkdirSync(join(project, ".pi"));
    writeFileSync(join(project, ".pi", "settings.json"), "{}");
    expect(await resolveTrust(home, project, {}, warn)).toBe(false);
    expect(await resolveTrust(home, project, { approve: true }, warn)).toBe(true);
    expect(existsSync(trustFilePath(home)), "--approve records nothing").toBe(false);
    expect(await resolveTrust(home, project, { trust: true }, warn)).toBe(true);
    expect(await resolveTrust(home, project, {}, warn)).toBe(true);
    expect(await resolveTrust(home, project, { approve: false }, warn)).toBe(false);
    expect(await resolveTrust(home, project, { trust: true, approve: false }, warn)).toBe(false);
    expect(warnings).toEqual([]);
  });

  it("asks the project_trust handlers before the record, and defaultProjectTrust last", async () => {
    const home = temp("pi-ext-home-");
    const project = temp("pi-ext-project-");
    mkdirSync(join(project, ".pi"));
    writeFileSync(join(project, ".pi", "settings.json"), "{}");
    const warn = () => undefined;
    let asked = 0;
    const say = (d: { trusted: boolean; remember: boolean } | undefined) => async () => {
      asked++;
      return d;
    };
    // No decision anywhere: defaultProjectTrust decides ("ask" has no terminal to ask on).
    expect(await resolveTrust(home, project, {}, warn, { defaultProjectTrust: "always" })).toBe(true);
    expect(await resolveTrust(home, project, {}, warn, { defaultProjectTrust: "ask" })).toBe(false);
    expect(await resolveTrust(home, project, {}, warn, { defaultProjectTrust: "never" })).toBe(false);
    // A handler's yes for this process only: nothing recorded.
    expect(
      await resolveTrust(home, project, {}, warn, { askExtensions: say({ trusted: true, remember: false }) }),
    ).toBe(true);
    expect(recordedTrust(home, project)).toBeUndefined();
    // Its no, remembered: recorded, and it wins over defaultProjectTrust.
    expect(
      await resolveTrust(home, project, {}, warn, {
        askExtensions: say({ trusted: false, remember: true }),
        defaultProjectTrust: "always",
      }),
    ).toBe(false);
    expect(recordedTrust(home, project)).toBe(false);
    // Undecided handlers: the record applies, before defaultProjectTrust.
    expect(
      await resolveTrust(home, project, {}, warn, { askExtensions: say(undefined), defaultProjectTrust: "always" }),
    ).toBe(false);
    // A handler's yes wins over the record too.
    expect(
      await resolveTrust(home, project, {}, warn, { askExtensions: say({ trusted: true, remember: false }) }),
    ).toBe(true);
    // The flags come first: no handler is asked.
    const before = asked;
    expect(await resolveTrust(home, project, { approve: false }, warn, { askExtensions: say(undefined) })).toBe(false);
    expect(asked).toBe(before);
  });

  it("treats a damaged trust.json as no decision and refuses to overwrite it", () => {
    const home = temp("pi-ext-home-");
    const project = temp("pi-ext-project-");
    writeFileSync(trustFilePath(home), "{ not json");
    expect(recordedTrust(home, project)).toBeUndefined();
    expect(() => recordTrust(home, project, true)).toThrow(/trust\.json is not valid JSON .*fix it or delete it/);
  });
});

describe("in the runtime", () => {
  it("lets an extension tool named like a built-in replace it", async () => {
    const home = temp("pi-ext-home-");
    const cwd = temp("pi-ext-cwd-");
    const path = write(
      join(temp("pi-ext-src-"), "read.ts"),
      `import { Type } from "typebox";
       export default (pi: any) => pi.registerTool({
         name: "read", label: "Read (audited)", description: "reads, audited",
         parameters: Type.Object({ path: Type.String() }),
         execute: async () => ({ content: [{ type: "text", text: "audited" }] }),
       });`,
    );
    const runtime = new AgentSession({ cwd, home, provider: "faux", noSession: true, env: {} });
    const { hooks } = await load({ paths: [path], home, cwd });
    runtime.setExtensions(hooks);
    const reads = runtime.activeTools().filter((t) => t.name === "read");
    expect(reads.map((t) => t.label)).toEqual(["Read (audited)"]);
    expect(runtime.systemPrompt).not.toContain("- read:");
  });

  it("lists an extension tool in the system prompt only with a promptSnippet (one line), as pi does; guidelines stay", async () => {
    const home = temp("pi-ext-home-");
    const cwd = temp("pi-ext-cwd-");
    const path = write(
      join(temp("pi-ext-src-"), "tools.ts"),
      `import { Type } from "typebox";
       const run = async () => ({ content: [{ type: "text", text: "ok" }] });
       export default (pi: any) => {
         pi.registerTool({ name: "shown", label: "s", description: "d1", promptSnippet: "  counts\\n  words  ",
           parameters: Type.Object({}), execute: run });
         pi.registerTool({ name: "hidden", label: "h", description: "d2", promptGuidelines: ["Call hidden last"],
           parameters: Type.Object({}), execute: run });
         pi.registerTool({ name: "blank", label: "b", description: "d3", promptSnippet: " \\n ",
           parameters: Type.Object({}), execute: run });
       };`,
    );
    const runtime = new AgentSession({ cwd, home, provider: "faux", noSession: true, env: {} });
    const { hooks, errors } = await load({ paths: [path], home, cwd });
    expect(errors).toEqual([]);
    runtime.setExtensions(hooks);
    runtime.setActiveTools(["shown", "hidden", "blank"]);
    expect(runtime.activeTools().map((t) => t.name)).toEqual(["shown", "hidden", "blank"]);
    expect(runtime.systemPrompt).toContain("Available tools:\n- shown: counts words\n</tools>");
    expect(runtime.systemPrompt).not.toMatch(/- (hidden|blank):/);
    expect(runtime.systemPrompt).toContain("- Call hidden last");
  });
});

describe("the guard example", () => {
  it.each([
    ["rm -rf /tmp/x", true],
    ["rm -fr build", true],
    ["rm -r -f build", true],
    ["sudo rm -Rf /", true],
    ["/bin/rm --recursive --force dist", true],
    ["make && rm -rfv out", true],
    ["rm -r build", false],
    ["rm -f file.txt", false],
    ["grep -rf patterns.txt src", false],
    ["echo done", false],
  ])("treats %j as recursive-force rm: %s", (command, expected) => {
    expect(isRecursiveForceRm(command)).toBe(expected);
  });
});
