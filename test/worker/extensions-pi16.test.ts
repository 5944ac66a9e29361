/**
 * The extension API of pi 1.6.0 in-process: an extension written for it (its module
 * names, `pi.on` of any event, `ctx.mode` and the other 1.x members of `ctx` and `pi`)
 * loads and runs on a real session (faux model, no session file). What upstream 1.6.0
 * does with the same extensions is pinned by the example oracle tests.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AgentSession } from "../../worker/core/agent-session.js";
import type { WorkerOptions } from "../../worker/core/worker-options.js";
import type { ExtensionUi } from "../../worker/extensions/hooks.js";
import { loadExtensions } from "../../worker/extensions/loader.js";
import type { ExtensionErrorEvent } from "../../worker/extensions/runner.js";
import { PI_AI_SUBPATHS, PI_SCOPES } from "../../worker/extensions/modules/index.js";
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

/** Load `source` as an extension into a faux session; `notices` collects `ctx.ui.notify`. */
async function load(source: string, options: Partial<WorkerOptions> = {}, trusted = false) {
  const src = temp("pi16-ext-src-");
  const path = join(src, "ext.ts");
  writeFileSync(path, source);
  const cwd = temp("pi16-ext-cwd-");
  const home = temp("pi16-ext-home-");
  const errors: ExtensionErrorEvent[] = [];
  const notices: string[] = [];
  const ui: ExtensionUi = {
    select: async () => undefined,
    confirm: async () => false,
    input: async () => undefined,
    editor: async () => undefined,
    notify: (message) => void notices.push(message),
    setStatus: () => undefined,
  };
  const hooks = await loadExtensions({ paths: [path], home, cwd, trusted, emit: (e) => void errors.push(e) });
  const session = new AgentSession({ cwd, home, provider: "faux", noSession: true, env: {}, trusted, ...options });
  session.setUi(ui, true, "rpc");
  session.setExtensions(hooks);
  return { hooks, errors, notices, path, home, session };
}

describe("pi 1.6.0's module names", () => {
  it("resolve under both scopes, pi-ai's subpaths included, to the same module objects", async () => {
    const names = PI_SCOPES.flatMap((scope) => [
      `${scope}/pi-coding-agent`,
      `${scope}/pi-ai`,
      ...PI_AI_SUBPATHS.map((sub) => `${scope}/pi-ai/${sub}`),
      `${scope}/pi-agent-core`,
      `${scope}/pi-tui`,
    ]);
    const imports = names.map((n, i) => `import * as m${i} from ${JSON.stringify(n)};`).join("\n");
    const { hooks, errors, notices } = await load(
      `${imports}
       import { CONFIG_DIR_NAME, VERSION, truncateLine } from "@earendil-works/pi-coding-agent";
       import { uuidv7, getCurrentSystemPrompt, getCurrentTools, StringEnum } from "@earendil-works/pi-ai";
       import { StringEnum as OldStringEnum } from "@mariozechner/pi-ai";
       import { streamSimple } from "@earendil-works/pi-ai/compat";
       import { visibleWidth } from "@earendil-works/pi-tui";
       const all = [${names.map((_, i) => `m${i}`).join(", ")}];
       export default (pi: any) => {
         pi.registerCommand("check", { handler: (_a: string, ctx: any) => {
           const transcript = [
             { role: "system", content: "base", toolsAdded: [{ name: "t", description: "d", parameters: {} }], timestamp: 0 },
             { role: "user", content: "hi", timestamp: 1 },
             { role: "system", content: "", sections: { rules: "be brief" }, timestamp: 2 },
           ];
           ctx.ui.notify(JSON.stringify({
             loaded: all.every((m) => typeof m === "object"),
             CONFIG_DIR_NAME, VERSION,
             truncated: truncateLine("x".repeat(600)).wasTruncated,
             uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(uuidv7()),
             ordered: (() => { const a = uuidv7(), b = uuidv7(); return a < b; })(),
             prompt: getCurrentSystemPrompt(transcript),
             tools: getCurrentTools(transcript).map((t: any) => t.name),
             sameAcrossScopes: StringEnum === OldStringEnum,
             streamSimple: typeof streamSimple,
             width: visibleWidth("\\x1b[31mab\\x1b[0m"),
           }));
         } });
       };`,
    );
    expect(errors).toEqual([]);
    expect(await hooks.runCommand("check", "")).toBe(true);
    expect(JSON.parse(notices[0]!)).toEqual({
      loaded: true,
      CONFIG_DIR_NAME: ".pi",
      VERSION: "1.6.0",
      truncated: true,
      uuid: true,
      ordered: true,
      prompt: "base\n\nbe brief",
      tools: ["t"],
      sameAcrossScopes: true,
      streamSimple: "function",
      width: 2,
    });
  });
});

describe("pi 1.6.0's extension API", () => {
  it("accepts pi.on of an event the worker never emits; the handler never fires, the others do", async () => {
    const { hooks, errors } = await load(
      `export default (pi: any) => {
         pi.on("project_trust", () => { throw new Error("fired"); });
         pi.on("some_event_of_pi_2", () => { throw new Error("fired"); });
         pi.on("input", (e: any) => ({ action: "transform", text: e.text + "!" }));
       };`,
    );
    expect(errors).toEqual([]);
    expect(hooks.has("project_trust")).toBe(true);
    expect(await hooks.input("hi", undefined, "rpc")).toMatchObject({ action: "transform", text: "hi!" });
    await hooks.sessionStart("startup");
    expect(errors).toEqual([]);
  });

  it("refuses pi.on without an event name or a handler, naming the extension", async () => {
    const { hooks, errors, path } = await load(`export default (pi: any) => { pi.on("", () => undefined); };`);
    await hooks.sessionStart("startup");
    expect(errors).toEqual([
      expect.objectContaining({ extensionPath: path, event: "load", error: expect.stringContaining("event name") }),
    ]);
  });

  it("gives ctx.mode, ctx.thinkingLevel, ctx.isProjectTrusted() and ctx.scopedModels", async () => {
    const source = `export default (pi: any) => {
      pi.registerCommand("ctx", { handler: (_a: string, ctx: any) => ctx.ui.notify(JSON.stringify({
        mode: ctx.mode, thinkingLevel: ctx.thinkingLevel, trusted: ctx.isProjectTrusted(),
        scoped: ctx.scopedModels.map((s: any) => [s.model.provider + "/" + s.model.id, s.thinkingLevel ?? null]),
      })) });
    };`;
    const plain = await load(source);
    expect(await plain.hooks.runCommand("ctx", "")).toBe(true);
    expect(JSON.parse(plain.notices[0]!)).toEqual({ mode: "rpc", thinkingLevel: "off", trusted: false, scoped: [] });

    const scoped = await load(source, { scopedModels: ["faux/*:high"] }, true);
    scoped.session.setUi(
      {
        select: async () => undefined,
        confirm: async () => false,
        input: async () => undefined,
        editor: async () => undefined,
        notify: (m) => void scoped.notices.push(m),
        setStatus: () => undefined,
      },
      false,
      "json",
    );
    expect(await scoped.hooks.runCommand("ctx", "")).toBe(true);
    const seen = JSON.parse(scoped.notices[0]!);
    expect(seen).toMatchObject({ mode: "json", trusted: true });
    expect(seen.scoped.length).toBeGreaterThan(0);
    for (const [name, level] of seen.scoped) {
      expect(name).toMatch(/^faux\//);
      expect(level).toBe("high");
    }
  });

  it("gives pi.getSettings() a copy of the effective settings", async () => {
    const src = `export default (pi: any) => {
      pi.registerCommand("settings", { handler: (_a: string, ctx: any) => {
        const s = pi.getSettings(); s.defaultThinkingLevel = "changed";
        ctx.ui.notify(JSON.stringify([s.theme, pi.getSettings().defaultThinkingLevel]));
      } });
    };`;
    const home = temp("pi16-settings-home-");
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, "settings.json"), JSON.stringify({ theme: "light", defaultThinkingLevel: "low" }));
    const { hooks, notices, errors } = await load(src, { home });
    expect(errors).toEqual([]);
    expect(await hooks.runCommand("settings", "")).toBe(true);
    expect(JSON.parse(notices[0]!)).toEqual(["light", "low"]);
  });

  it("accepts the terminal's renderers and transformers headless, and checks their arguments", async () => {
    const ok = await load(
      `export default (pi: any) => {
         pi.registerEntryRenderer("card", () => undefined);
         pi.registerToolRenderer((_name: string, next: () => unknown) => next());
         pi.registerMarkdownTransformer((md: string) => md, { messageTypes: ["changelog"] });
       };`,
    );
    expect(ok.errors).toEqual([]);
    const bad = await load(`export default (pi: any) => { pi.registerEntryRenderer("card", "not a function"); };`);
    await bad.hooks.sessionStart("startup");
    expect(bad.errors).toEqual([
      expect.objectContaining({ event: "load", error: expect.stringContaining(`extension ${bad.path}`) }),
    ]);
  });

  it("lets ctx.modelRegistry.complete call the session's model with a pi 1.x transcript", async () => {
    const { hooks, notices, errors } = await load(
      `export default (pi: any) => {
         pi.registerCommand("ask", { handler: async (_a: string, ctx: any) => {
           const reply = await ctx.modelRegistry.complete(ctx.model, {
             messages: [
               { role: "system", content: "You are terse.", timestamp: 0 },
               { role: "user", content: [{ type: "text", text: "hello" }], timestamp: 1 },
             ],
           });
           ctx.ui.notify(JSON.stringify({ role: reply.role, stopReason: reply.stopReason, text: reply.content.some((c: any) => c.type === "text") }));
         } });
       };`,
    );
    expect(errors).toEqual([]);
    expect(await hooks.runCommand("ask", "")).toBe(true);
    expect(JSON.parse(notices[0]!)).toEqual({ role: "assistant", stopReason: "stop", text: true });
  });

  it("shows tool_result handlers the result's structuredContent; new content without it drops the old", async () => {
    const { hooks, notices } = await load(
      `export default (pi: any) => {
         pi.on("tool_result", (e: any, ctx: any) => {
           ctx.ui.notify(JSON.stringify(e.structuredContent));
           if (e.toolName === "read") return { content: [{ type: "text", text: "replaced" }] };
           if (e.toolName === "bash") return { structuredContent: { exit_code: 9 } };
         });
       };`,
    );
    const call = (name: string) => ({ type: "toolCall" as const, id: "c1", name, arguments: {} });
    const read = await hooks.toolResult(
      call("read"),
      {},
      { content: [{ type: "text", text: "a" }], structuredContent: "a" },
      false,
    );
    expect(read?.result).toEqual({ content: [{ type: "text", text: "replaced" }] });
    const bash = await hooks.toolResult(
      call("bash"),
      {},
      { content: [{ type: "text", text: "x" }], structuredContent: { exit_code: 1 }, isError: true },
      true,
    );
    expect(bash).toEqual({
      result: { content: [{ type: "text", text: "x" }], structuredContent: { exit_code: 9 }, isError: true },
      isError: true,
    });
    expect(notices).toEqual(['"a"', '{"exit_code":1}']);
  });
});
