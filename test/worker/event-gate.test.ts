/**
 * The event gate (worker/core/event-gate.ts) in-process, on a real session with the faux
 * model and real extensions: one case per fix the gate had, each named by its commit, pinning
 * the order in which agent events, extension dialogs and notices leave the worker, and what
 * the run does while a handler waits. The same behaviours against upstream pi run in
 * test/integration/agent-event-handlers-oracle.test.ts and pi-examples-oracle-commands.test.ts.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { WorkerEvent } from "../../shared/schema/events.js";
import { AgentSession } from "../../worker/core/agent-session.js";
import type { ExtensionUi } from "../../worker/extensions/hooks.js";
import { loadExtensions } from "../../worker/extensions/loader.js";
import type { FauxReply } from "../../worker/providers/faux.js";
import { tempDir } from "../support/rpc-worker.js";

const dirs: { cleanup: () => void }[] = [];
const sessions: AgentSession[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) await s.shutdown();
  for (const d of dirs.splice(0)) d.cleanup();
});

function temp(prefix: string): string {
  const d = tempDir(prefix);
  dirs.push(d);
  return d.path;
}

/** A session with `extension` loaded, the faux model answering `replies`, and one log of what leaves it. */
async function harness(extension: string, replies: FauxReply[]) {
  const dir = temp("pi-gate-");
  writeFileSync(join(dir, "ext.ts"), extension);
  writeFileSync(join(dir, "script.json"), JSON.stringify(replies));
  /** Events by type, dialogs and notices as `ui:<method>:<text>`, warnings as `warn:<text>`, in the order they happened. */
  const log: string[] = [];
  const events: WorkerEvent[] = [];
  const waiters: { test: (entry: string) => boolean; resolve: () => void }[] = [];
  const push = (entry: string) => {
    log.push(entry);
    for (const w of [...waiters]) if (w.test(entry)) waiters.splice(waiters.indexOf(w), 1) && w.resolve();
  };
  const answers = new Map<string, (value: unknown) => void>();
  const dialog =
    <T>(method: string) =>
    (title: string) =>
      new Promise<T>((resolve) => {
        answers.set(title, resolve as (value: unknown) => void);
        push(`ui:${method}:${title}`);
      });
  const ui: ExtensionUi = {
    select: dialog("select"),
    confirm: dialog("confirm"),
    input: dialog("input"),
    editor: dialog("editor"),
    notify: (message) => push(`ui:notify:${message}`),
    setStatus: () => undefined,
  };
  const hooks = await loadExtensions({
    paths: [join(dir, "ext.ts")],
    home: dir,
    cwd: dir,
    trusted: false,
    emit: (e) => push(`extension_error:${e.error}`),
  });
  const session = new AgentSession({
    cwd: dir,
    home: dir,
    provider: "faux",
    fauxScript: join(dir, "script.json"),
    noSession: true,
    retryDelayMs: 1,
    env: {},
    warn: (message) => push(`warn:${message}`),
  });
  sessions.push(session);
  session.setUi(ui, true, "rpc");
  session.setExtensions(hooks);
  session.onShutdownRequest = () => push("shutdown");
  session.subscribe((event) => {
    events.push(event);
    push(event.type);
  });
  await session.start();
  return {
    session,
    log,
    events,
    /** Resolves once `entry` (or `count` of them) is in the log. */
    until(entry: string, count = 1): Promise<void> {
      const seen = () => log.filter((e) => e === entry).length >= count;
      if (seen()) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ test: () => seen(), resolve }));
    },
    /** Answer the open dialog titled `title`. */
    answer(title: string, value: unknown): void {
      const resolve = answers.get(title);
      if (!resolve) throw new Error(`no dialog "${title}" is open; the log has ${log.join(", ")}`);
      answers.delete(title);
      resolve(value);
    },
    /** The log from the first `from` entry on, without the streaming noise (message updates). */
    order(from = 0): string[] {
      return log.slice(from).filter((e) => e !== "message_update" && e !== "queue_update");
    },
  };
}

type Harness = Awaited<ReturnType<typeof harness>>;

/** What the first run of one text reply sends, in pi 1.6's order (the system message, the prompt, the reply). */
const ONE_TURN = [
  "agent_start",
  "turn_start",
  "message_start",
  "message_end",
  "message_start",
  "message_end",
  "message_start",
  "message_end",
  "turn_end",
  "agent_end",
  "agent_settled",
];

interface GateCase {
  /** The commit whose fix the case pins. */
  fix: string;
  name: string;
  extension: string;
  replies: FauxReply[];
  drive: (h: Harness) => Promise<void>;
}

const CASES: GateCase[] = [
  {
    fix: "a6447e7",
    name: "an event an extension handles goes out after its handlers, and the events behind it wait",
    extension: `export default (pi: any) => {
      pi.on("agent_start", async (_e: any, ctx: any) => {
        ctx.ui.notify("starting");
        await ctx.ui.confirm("start?");
        ctx.ui.notify("started");
      });
    };`,
    replies: [{ text: "done" }],
    drive: async (h) => {
      await h.session.prompt("hello");
      await h.until("ui:confirm:start?");
      // The run goes on (the faux reply streams) while its events wait behind the dialog.
      await h.session.agent.waitForIdle();
      expect(h.order()).toEqual(["ui:notify:starting", "ui:confirm:start?"]);
      h.answer("start?", true);
      await h.until("agent_settled");
      expect(h.order()).toEqual(["ui:notify:starting", "ui:confirm:start?", "ui:notify:started", ...ONE_TURN]);
    },
  },
  {
    fix: "a6447e7",
    name: "agent_end goes out once its handler's dialog is answered (plan-mode's what next?)",
    extension: `export default (pi: any) => {
      pi.on("agent_end", async (_e: any, ctx: any) => {
        const choice = await ctx.ui.select("what next?", ["stay", "go"]);
        ctx.ui.notify("chose " + choice);
      });
    };`,
    replies: [{ text: "done" }],
    drive: async (h) => {
      await h.session.prompt("hello");
      await h.until("ui:select:what next?");
      expect(h.order()).toEqual([...ONE_TURN.slice(0, -2), "ui:select:what next?"]);
      h.answer("what next?", "stay");
      await h.until("agent_settled");
      expect(h.order().slice(-4)).toEqual([
        "ui:select:what next?",
        "ui:notify:chose stay",
        "agent_end",
        "agent_settled",
      ]);
    },
  },
  {
    fix: "a26e061",
    name: "an agent_start handler awaiting ctx.waitForIdle() lets the run end: abort is answered, the events follow",
    extension: `let saved: any;
    export default (pi: any) => {
      pi.registerCommand("keep", { handler: async (_a: string, ctx: any) => { saved = ctx; } });
      pi.on("agent_start", async () => { if (saved) await saved.waitForIdle(); });
    };`,
    replies: [{ text: "done" }],
    drive: async (h) => {
      expect((await h.session.prompt("/keep")).disposition).toBe("handled");
      await h.session.prompt("hello");
      await h.session.abort();
      expect(h.session.state().isStreaming).toBe(false);
      await h.until("agent_settled");
      expect(h.order()).toEqual(ONE_TURN);
    },
  },
  {
    fix: "a26e061",
    // pi 1.6 made turn_end an actionable boundary the run waits for (test/integration/turn-end-boundary-oracle.test.ts):
    // the open dialog keeps the agent streaming, and abort is answered once the run ended.
    name: "a turn_end handler's open confirm holds the run (pi 1.6's boundary); agent_end follows its answer",
    extension: `export default (pi: any) => {
      pi.on("turn_end", async (_e: any, ctx: any) => { await ctx.ui.confirm("keep going?"); });
    };`,
    replies: [{ text: "done" }],
    drive: async (h) => {
      await h.session.prompt("hello");
      await h.until("ui:confirm:keep going?");
      const aborted = h.session.abort();
      expect(h.session.state().isStreaming).toBe(true);
      expect(h.log).not.toContain("agent_end");
      h.answer("keep going?", true);
      await aborted;
      await h.until("agent_settled");
      expect(h.order().slice(-4)).toEqual(["ui:confirm:keep going?", "turn_end", "agent_end", "agent_settled"]);
    },
  },
  {
    fix: "a26e061",
    name: "the retry is decided at agent_end: willRetry is set and the session stays at work while its handler waits",
    extension: `let ends = 0;
    export default (pi: any) => {
      pi.on("agent_end", async (_e: any, ctx: any) => { if (++ends === 1) await ctx.ui.confirm("retry?"); });
    };`,
    replies: [{ error: { message: "overloaded", retryable: true } }, { text: "recovered" }],
    drive: async (h) => {
      const { done } = await h.session.prompt("hello");
      await h.until("ui:confirm:retry?");
      await h.session.agent.waitForIdle();
      expect(h.session.isWorking).toBe(true);
      expect(h.log).not.toContain("auto_retry_start");
      h.answer("retry?", true);
      await done;
      const ends = h.events.filter((e) => e.type === "agent_end");
      expect(ends.map((e) => (e as { willRetry?: boolean }).willRetry)).toEqual([true, false]);
      expect(h.order().filter((e) => e === "agent_end" || e.startsWith("auto_retry"))).toEqual([
        "agent_end",
        "auto_retry_start",
        "auto_retry_end",
        "agent_end",
      ]);
    },
  },
  {
    fix: "a26e061",
    name: "a held event that cannot be sent is reported, and the events behind it still go out",
    extension: `export default (pi: any) => { pi.on("turn_start", async () => {}); };`,
    replies: [{ text: "done" }],
    drive: async (h) => {
      h.session.subscribe((event) => {
        if (event.type === "turn_start") throw new Error("cannot serialize");
      });
      await h.session.prompt("hello");
      await h.until("agent_settled");
      expect(h.log).toContain("warn:could not send the turn_start event: cannot serialize");
      expect(h.order().filter((e) => !e.startsWith("warn:"))).toEqual(ONE_TURN);
    },
  },
  {
    fix: "5e81ea8",
    name: "an event that cannot be sent with no handler of it and nothing held is reported too; the run ends",
    extension: `export default (pi: any) => { pi.on("session_start", () => {}); };`,
    replies: [{ text: "done" }],
    drive: async (h) => {
      h.session.subscribe((event) => {
        if (event.type === "turn_end") throw new Error("cannot serialize");
      });
      const { done } = await h.session.prompt("hello");
      await done;
      await h.until("agent_settled");
      expect(h.log).toContain("warn:could not send the turn_end event: cannot serialize");
      expect(h.order().filter((e) => !e.startsWith("warn:"))).toEqual(ONE_TURN);
    },
  },
  {
    fix: "5e81ea8",
    name: "a before_agent_start handler awaiting its own send on a later prompt does not hold that run",
    extension: `let prompts = 0;
    export default (pi: any) => {
      pi.on("before_agent_start", async () => {
        if (++prompts === 2) await pi.sendUserMessage("steered in", { deliverAs: "steer" });
      });
    };`,
    replies: [{ text: "first" }, { text: "second" }, { text: "third" }],
    drive: async (h) => {
      await (await h.session.prompt("one")).done;
      await h.until("agent_settled");
      const { done } = await h.session.prompt("two");
      await done;
      await h.session.abort();
      expect(h.session.state().isStreaming).toBe(false);
      expect(h.session.messages().map((m) => m.role)).toEqual([
        "system",
        "user",
        "assistant",
        "user",
        "user",
        "assistant",
      ]);
      // The steered message joined the second run; the third reply was never asked for.
      expect(h.session.lastAssistantText()).toBe("second");
    },
  },
  {
    fix: "6285bc3",
    name: "what an agent_end handler sends after its first wait starts the next run (plan-mode's execute)",
    extension: `let ends = 0;
    export default (pi: any) => {
      pi.on("agent_end", async (_e: any, ctx: any) => {
        if (++ends > 1) return;
        if ((await ctx.ui.select("what next?", ["stay", "execute"])) === "execute") pi.sendUserMessage("execute the plan");
      });
    };`,
    replies: [{ text: "plan" }, { text: "executed" }],
    drive: async (h) => {
      await h.session.prompt("plan it");
      await h.until("ui:select:what next?");
      h.answer("what next?", "execute");
      await h.until("agent_end", 2);
      await h.until("agent_settled");
      // One agent_settled: the first run did not settle while the run its handler started was going.
      expect(h.order().filter((e) => e.startsWith("agent_"))).toEqual([
        "agent_start",
        "agent_end",
        "agent_start",
        "agent_end",
        "agent_settled",
      ]);
      expect(h.session.lastAssistantText()).toBe("executed");
      expect(h.session.state().pendingMessageCount).toBe(0);
    },
  },
  {
    fix: "6285bc3",
    name: "what the first agent_end handler sends before its first wait is queued in the ended run",
    extension: `let ends = 0;
    export default (pi: any) => {
      pi.on("agent_end", async (_e: any, ctx: any) => {
        if (++ends > 1) return;
        pi.sendMessage({ customType: "note", content: "queued", display: true }, { triggerTurn: true });
        await ctx.ui.confirm("done?");
      });
    };`,
    replies: [{ text: "done" }],
    drive: async (h) => {
      await h.session.prompt("hello");
      await h.until("ui:confirm:done?");
      expect(h.session.state().pendingMessageCount).toBe(1);
      h.answer("done?", true);
      await h.until("agent_settled");
      expect(h.order().filter((e) => e.startsWith("agent_"))).toEqual(["agent_start", "agent_end", "agent_settled"]);
      expect(h.session.state().pendingMessageCount).toBe(1);
    },
  },
  {
    fix: "6285bc3",
    name: "a run is over for its caller once its agent_end went out, after the handlers",
    extension: `export default (pi: any) => {
      pi.on("agent_end", async (_e: any, ctx: any) => { await ctx.ui.confirm("end?"); });
    };`,
    replies: [{ text: "done" }],
    drive: async (h) => {
      const { done } = await h.session.prompt("hello");
      let over = false;
      void done?.then(() => {
        over = true;
      });
      await h.until("ui:confirm:end?");
      await h.session.agent.waitForIdle();
      expect(over).toBe(false);
      h.answer("end?", true);
      await done;
      expect(h.log).toContain("agent_end");
    },
  },
  {
    fix: "6285bc3",
    name: "a shutdown an agent_end handler asks for comes after agent_end went out",
    extension: `export default (pi: any) => {
      pi.on("agent_end", async (_e: any, ctx: any) => {
        await ctx.ui.confirm("quit?");
        ctx.shutdown();
      });
    };`,
    replies: [{ text: "done" }],
    drive: async (h) => {
      await h.session.prompt("hello");
      await h.until("ui:confirm:quit?");
      h.answer("quit?", true);
      await h.until("shutdown");
      expect(h.order().slice(-3)).toEqual(["ui:confirm:quit?", "agent_end", "shutdown"]);
    },
  },
  {
    fix: "7a67734",
    name: "agent_settled goes out after its handlers (what they show comes first)",
    extension: `export default (pi: any) => {
      pi.on("agent_settled", async (e: any, ctx: any) => {
        await ctx.ui.confirm("settled?");
        ctx.ui.notify("aborted " + e.aborted);
      });
    };`,
    replies: [{ text: "done" }],
    drive: async (h) => {
      await h.session.prompt("hello");
      await h.until("ui:confirm:settled?");
      expect(h.log).not.toContain("agent_settled");
      h.answer("settled?", true);
      await h.until("agent_settled");
      expect(h.order().slice(-4)).toEqual([
        "agent_end",
        "ui:confirm:settled?",
        "ui:notify:aborted false",
        "agent_settled",
      ]);
    },
  },
];

describe("the event gate: agent events behind the extensions' handlers", () => {
  it.each(CASES)("$fix: $name", async ({ extension, replies, drive }) => {
    const h = await harness(extension, replies);
    await drive(h);
    expect(h.log.filter((e) => e.startsWith("extension_error:"))).toEqual([]);
  });
});
