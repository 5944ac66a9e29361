/**
 * Which prompts start a run, on the wire, on upstream pi 1.6.0 and on our worker with the
 * same script: an extension command's prompt is answered once its handler is done (after
 * its dialog is answered, after an error it threw); a command that does nothing, shows a
 * message or throws starts no run, one that calls `pi.sendUserMessage` starts one after
 * the answer, and prompt templates and skills expand into a run like plain text. Both answer
 * `data.disposition` (a command is `handled` whatever it did); ours adds `data.running`
 * (shared/prompt-answer.ts). That no
 * run started is read from the stream: the next run after the answer is the one a marker
 * prompt starts. Skipped when test/upstream is not installed.
 */
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PI_BIN, type RpcWorker } from "../support/rpc-worker.js";
import { mockModelsJson, startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";
import { useOracleFixture } from "../support/oracle-fixture.js";

type Line = Record<string, any>;

const { server, dirs, dir } = useOracleFixture();

/** Commands of every kind a `/name` prompt may reach. */
const COMMANDS = `
export default function (pi) {
  pi.on("input", (event) => (event.text === "swallowed" ? { action: "handled" } : { action: "continue" }));
  pi.registerCommand("noop", { description: "does nothing", handler: async () => {} });
  pi.registerCommand("note", { description: "shows a message", handler: async () => pi.sendMessage({ customType: "note", content: "a note", display: true }) });
  pi.registerCommand("boom", { description: "throws", handler: async () => { throw new Error("the command broke"); } });
  pi.registerCommand("swallow", { description: "sends what an input handler takes", handler: async () => pi.sendUserMessage("swallowed") });
  pi.registerCommand("send", { description: "sends a message", handler: async (args) => pi.sendUserMessage(args || "hello from send") });
  pi.registerCommand("fresh", {
    description: "sends a message from a new session, not awaited",
    handler: async (_args, ctx) => { await ctx.newSession({ withSession: async (next) => { next.sendUserMessage("in the new session"); } }); },
  });
  pi.registerCommand("ask", {
    description: "asks first",
    handler: async (_args, ctx) => {
      if (await ctx.ui.confirm("Send it?", "The command sends a message when confirmed")) pi.sendUserMessage("confirmed");
    },
  });
}
`;

function start(impl: Implementation, args: string[] = [], env: NodeJS.ProcessEnv = {}): RpcWorker {
  const extDir = dir("pi-cmd-runs-ext-");
  writeFileSync(join(extDir, "commands.ts"), COMMANDS);
  const { w } = startOracle(impl, server, dirs, {
    pi: "1.6.0",
    args: ["-e", join(extDir, "commands.ts"), ...args],
    env,
    prepare: (home) => {
      mkdirSync(join(home, "prompts"), { recursive: true });
      writeFileSync(join(home, "prompts", "greet.md"), "---\ndescription: Greets\n---\nSay hello to $1");
      mkdirSync(join(home, "skills", "deploy"), { recursive: true });
      writeFileSync(
        join(home, "skills", "deploy", "SKILL.md"),
        "---\nname: deploy\ndescription: How to deploy\n---\nRun make deploy.\n",
      );
    },
  });
  return w;
}

/**
 * A /command's prompt answer: pi 1.6.0 says `disposition: "handled"` whatever the handler
 * did; ours says the same and adds whether a run started (`running`, shared/prompt-answer.ts).
 */
function expectHandled(answer: Line, impl: Implementation, running: boolean): void {
  expect(answer.data).toEqual(impl === "upstream" ? { disposition: "handled" } : { disposition: "handled", running });
}

/** The text of a user message's content. */
const textOf = (m: Line): string =>
  typeof m.content === "string" ? m.content : m.content.map((c: Line) => c.text ?? "").join("");

/** Send a prompt; its answer (the events before it stay in `w.received`). */
async function prompt(w: RpcWorker, message: string): Promise<{ answer: Line; at: number; from: number }> {
  const from = w.received.length;
  const answer = await w.request({ type: "prompt", message }, 30_000);
  return { answer, at: w.received.indexOf(answer), from };
}

/** The user text of the next run to start after index `from`, once it settled. */
async function nextRunUserText(w: RpcWorker, from: number): Promise<string> {
  const start = await w.event("agent_start", 30_000, from);
  const at = w.received.indexOf(start);
  const end = await w.event("agent_end", 30_000, at);
  // pi 1.6 settles a run after its agent_end: wait for it, so the next prompt's events start after.
  await w.event("agent_settled", 30_000, w.received.indexOf(end));
  const user = w.received
    .slice(at)
    .find((l) => l.type === "message_end" && (l.message.role === "user" || l.message.role === "custom"));
  return textOf(user!.message);
}

/** Prove no run started after `from`: the next run is the one a marker prompt starts. */
async function expectNoRunAfter(w: RpcWorker, from: number): Promise<void> {
  server.enqueue({ text: "marker reply" });
  await prompt(w, "marker");
  expect(await nextRunUserText(w, from)).toBe("marker");
}

const types = (lines: Line[]) =>
  lines
    .filter((l) => l.type !== "message_update")
    .map((l) =>
      l.type === "response"
        ? `response:${l.command}`
        : l.type === "message_end"
          ? `message_end:${l.message.role}`
          : l.type,
    );

describe.skipIf(!UPSTREAM["1.6.0"].installed)(
  "prompts of extension commands, templates and skills: which start a run",
  () => {
    it.each<Implementation>(["upstream", "ours"])(
      "%s: commands that start no run are answered after their handler, and no run follows",
      async (impl) => {
        const w = start(impl);

        const noop = await prompt(w, "/noop");
        expect(types(w.received.slice(noop.from, noop.at + 1))).toEqual(["response:prompt"]);
        expectHandled(noop.answer, impl, false);
        await expectNoRunAfter(w, noop.at);

        // sendMessage without triggerTurn: the message is in the conversation before the answer.
        const note = await prompt(w, "/note");
        expect(types(w.received.slice(note.from, note.at + 1))).toEqual([
          "message_start",
          "message_end:custom",
          "response:prompt",
        ]);
        expect(note.answer).toMatchObject({ success: true });
        expectHandled(note.answer, impl, false);
        await expectNoRunAfter(w, note.at);

        // A handler that throws: an extension_error, then a successful answer.
        const boom = await prompt(w, "/boom");
        const before = w.received.slice(boom.from, boom.at);
        expect(types(before)).toEqual(["extension_error"]);
        expect(before[0]).toEqual({
          type: "extension_error",
          extensionPath: "command:boom",
          event: "command",
          error: "the command broke",
        });
        expect(boom.answer).toMatchObject({ success: true });
        expectHandled(boom.answer, impl, false);
        await expectNoRunAfter(w, boom.at);

        // sendUserMessage of a text an input handler takes: no run.
        const swallow = await prompt(w, "/swallow");
        expectHandled(swallow.answer, impl, false);
        await expectNoRunAfter(w, swallow.at);
      },
      90_000,
    );

    it.each<Implementation>(["upstream", "ours"])(
      "%s: sendUserMessage in a command, a template and a skill each start a run after the answer",
      async (impl) => {
        const w = start(impl);
        // A command is "handled" though its handler started a run; text a template, a skill or
        // no command expands is a prompt like any other, "started".
        for (const [message, user, command] of [
          ["/send", "hello from send", true],
          ["/greet world", "Say hello to world", false],
          ["/skill:deploy", "Run make deploy.", false],
          ["/no-such-command", "/no-such-command", false],
        ] as const) {
          server.enqueue({ text: `reply to ${message}` });
          const p = await prompt(w, message);
          // The run's events all come after the answer.
          expect(types(w.received.slice(p.from, p.at + 1))).toEqual(["response:prompt"]);
          if (command) expectHandled(p.answer, impl, true);
          else
            expect(p.answer.data).toEqual(
              impl === "upstream" ? { disposition: "started" } : { disposition: "started", running: true },
            );
          expect(await nextRunUserText(w, p.at)).toContain(user);
        }
      },
      90_000,
    );

    it.each<Implementation>(["upstream", "ours"])(
      "%s: a command's dialog is answered before the prompt is; confirmed it starts a run, declined none",
      async (impl) => {
        const w = start(impl);
        for (const confirmed of [true, false]) {
          server.enqueue({ text: "after the dialog" });
          const from = w.received.length;
          const answering = w.request({ type: "prompt", message: "/ask" }, 30_000);
          const dialog = await w.waitFor(
            (l) => l.type === "extension_ui_request" && l.method === "confirm",
            30_000,
            from,
          );
          expect(w.received.slice(from).some((l) => l.type === "response")).toBe(false);
          w.proc.stdin!.write(`${JSON.stringify({ type: "extension_ui_response", id: dialog.id, confirmed })}\n`);
          const answer = await answering;
          const at = w.received.indexOf(answer);
          expectHandled(answer, impl, confirmed);
          if (confirmed) expect(await nextRunUserText(w, at)).toBe("confirmed");
          else await expectNoRunAfter(w, at);
        }
      },
      90_000,
    );

    it.each<Implementation>(["upstream", "ours"])(
      "%s: a sendUserMessage that cannot be sent (no API key) is an extension_error and starts no run; the worker lives",
      async (impl) => {
        const w = start(impl, ["--provider", "anthropic", "--model", "claude-sonnet-4-5"], { ANTHROPIC_API_KEY: "" });
        const send = await prompt(w, "/send");
        // Ours answers once the message was refused; pi's answer races the refusal.
        const error = await w.event("extension_error", 30_000, send.from);
        if (impl === "ours") expect(types(w.received.slice(send.from, send.at))).toEqual(["extension_error"]);
        expect(error).toMatchObject({ extensionPath: "<runtime>", event: "send_user_message" });
        expect(error.error).toMatch(/API key/i);
        expect(send.answer).toMatchObject({ success: true });
        expectHandled(send.answer, impl, false);
        // The worker is still there (an unawaited rejection would have ended ours).
        expect(await w.request({ type: "get_state" })).toMatchObject({ success: true, data: { isStreaming: false } });
      },
      60_000,
    );

    it("ours: an unawaited sendUserMessage from a new session's ctx that cannot be sent is reported the same way; the worker lives", async () => {
      const w = start("ours", ["--provider", "anthropic", "--model", "claude-sonnet-4-5"], { ANTHROPIC_API_KEY: "" });
      const fresh = await prompt(w, "/fresh");
      const error = await w.event("extension_error", 30_000, fresh.from);
      expect(error).toMatchObject({ extensionPath: "<runtime>", event: "send_user_message" });
      expect(await w.request({ type: "get_state" })).toMatchObject({ success: true, data: { isStreaming: false } });
    }, 60_000);
  },
);

describe("pi -p with an extension command (ours)", () => {
  /** Run our `pi -p TEXT` on the mock model with the commands; its exit code and output. */
  function print(text: string): Promise<{ code: number; stdout: string; stderr: string }> {
    const home = dir("pi-cmd-print-home-");
    writeFileSync(join(home, "models.json"), JSON.stringify(mockModelsJson(server)));
    const extDir = dir("pi-cmd-print-ext-");
    writeFileSync(join(extDir, "commands.ts"), COMMANDS);
    const args = [
      PI_BIN,
      "-p",
      "--no-session",
      "--provider",
      "mock",
      "--model",
      "mock-1",
      "-e",
      join(extDir, "commands.ts"),
      text,
    ];
    return new Promise((resolve) => {
      const child = execFile(
        process.execPath,
        args,
        { cwd: home, env: { ...process.env, PI_ORCH_HOME: home } },
        (err, stdout, stderr) => resolve({ code: typeof err?.code === "number" ? err.code : 0, stdout, stderr }),
      );
      child.stdin?.end();
    });
  }

  // pi 0.73.1 returns as soon as the handler did, so the run its message started is cut
  // off and nothing is printed; ours waits for that run and prints its reply.
  it("a command that sends a message prints the reply of the run it started; one that does nothing prints nothing, exit 0", async () => {
    server.enqueue({ text: "the reply to the command's message" });
    expect(await print("/send")).toMatchObject({ code: 0, stdout: "the reply to the command's message\n" });
    expect(textOf((server.requests[0]!.body as Line).messages.at(-1))).toBe("hello from send");
    expect(await print("/noop")).toMatchObject({ code: 0, stdout: "" });
    expect(server.requests).toHaveLength(1);
  }, 60_000);
});
