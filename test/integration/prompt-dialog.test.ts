/**
 * An extension command that waits on a dialog, against the supervisor's request
 * timeout: a real `pi --mode rpc` worker runs pi's own rpc-demo extension, whose
 * `/rpc-input` asks `ctx.ui.input` and is answered (as pi answers it) only when its
 * handler ends. The supervisor's rpc timeout and the client's wait are made short, so
 * both pass while the dialog is open; the command must still succeed once the dialog
 * is answered, through the client and through the `pi-orch prompt` CLI.
 */
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runSupervisorServer, type RunningServer } from "../../cli/serve/supervisor-server.js";
import { IpcClient } from "../../ipc/client.js";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import { CliProcess } from "../support/cli-process.js";
import { PI_BIN } from "../support/rpc-worker.js";

const RPC_DEMO = resolve(
  import.meta.dirname,
  "../upstream/node_modules/@mariozechner/pi-coding-agent/examples/extensions/rpc-demo.ts",
);
const PI = [process.execPath, PI_BIN, "--mode", "rpc"];

const dirs: string[] = [];
const servers: RunningServer[] = [];
const clients: IpcClient[] = [];
const clis: CliProcess[] = [];
afterEach(async () => {
  for (const c of clis.splice(0)) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill("SIGKILL");
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  await Promise.allSettled(servers.splice(0).map((s) => s.close()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

type Ev = Extract<IpcStreamMessage, { type: "event" }>;

/** A stream of one agent's events, with a wait for the first one that matches. */
class Events {
  readonly all: Ev[] = [];
  private waiters: { test: (e: Ev) => boolean; resolve: (e: Ev) => void }[] = [];
  feed = (m: IpcStreamMessage) => {
    if (m.type !== "event") return;
    this.all.push(m);
    this.waiters = this.waiters.filter((w) => (w.test(m) ? (w.resolve(m), false) : true));
  };
  next(test: (e: Ev) => boolean, what: string, timeoutMs = 20_000): Promise<Ev> {
    const seen = this.all.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((res, rej) => {
      const timer = setTimeout(
        () => rej(new Error(`timed out waiting for ${what}; got ${this.all.map((e) => e.event.type).join(", ")}`)),
        timeoutMs,
      );
      this.waiters.push({ test, resolve: (e) => (clearTimeout(timer), res(e)) });
    });
  }
}

const isType =
  (type: string, extra: (e: Record<string, unknown>) => boolean = () => true) =>
  (m: Ev) =>
    m.event.type === type && extra(m.event);

/** A supervisor whose rpc timeout is `rpcTimeoutMs`, an agent running rpc-demo, and a subscriber to its events. */
async function setup(rpcTimeoutMs: number): Promise<{ home: string; events: Events; watcher: IpcClient }> {
  const home = mkdtempSync(join(tmpdir(), "po-dialog-"));
  dirs.push(home);
  const server = await runSupervisorServer({
    home,
    handleSignals: false,
    defaultWorkerCommand: PI,
    timings: { rpcTimeoutMs },
  });
  servers.push(server);
  const watcher = await IpcClient.connect({ home });
  clients.push(watcher);
  await watcher.spawn({ name: "ask", provider: "faux", extraArgs: ["--extension", RPC_DEMO] });
  const events = new Events();
  await watcher.subscribe({ agents: ["ask"] }, events.feed);
  return { home, events, watcher };
}

describe("a command waiting on a dialog outlasts the request timeouts", () => {
  it("through the client: the supervisor holds the prompt past its timeout while the dialog is open, the client waits on while it serves", async () => {
    // 1.5 s: the dialog must open within the supervisor's timeout, which a loaded CI machine
    // stretched past 400 ms (the command timed out before it asked).
    const { home, events, watcher } = await setup(1500);
    // The client's own wait (100 ms) passes many times, the supervisor's (1.5 s) once, before the answer.
    const asker = await IpcClient.connect({ home, requestTimeoutMs: 100 });
    clients.push(asker);
    const answered = asker.rpc("ask", { type: "prompt", message: "/rpc-input" });
    const outcome = answered.then(
      (r) => ({ ok: true as const, r }),
      (err: Error) => ({ ok: false as const, err }),
    );
    const dialog = await events.next(
      isType("extension_ui_request", (e) => e.method === "input"),
      "the input dialog",
    );
    const waiting = await events.next(isType("rpc_waiting"), "the supervisor holding the prompt");
    expect(waiting.event).toEqual({ type: "rpc_waiting", command: "prompt", timeoutMs: 1500, dialogs: 1 });
    await watcher.rpc("ask", { type: "extension_ui_response", id: dialog.event.id as string, value: "forty-two" });
    const got = await outcome;
    expect(got.ok ? got.r : got.err.message).toMatchObject({ type: "response", command: "prompt", success: true });
    await events.next(
      isType("extension_ui_request", (e) => e.method === "notify" && e.message === "You entered: forty-two"),
      "the command's own notice",
    );
  }, 60_000);

  it("through pi-orch prompt: it says who asks and how to answer, the answer it names works, and the prompt succeeds", async () => {
    const { home, events } = await setup(1500);
    const prompt = CliProcess.start(["prompt", "ask", "/rpc-input"], home, { PI_ORCH_HOME: home });
    clis.push(prompt);
    const hint = await prompt.waitFor(/pi-orch rpc ask '(\{"type":"extension_ui_response"[^']*\})'/);
    expect(prompt.stderr).toContain('ask asks (input) "Enter a value"');
    await events.next(isType("rpc_waiting"), "the supervisor holding the prompt");
    const answer = JSON.parse(hint[1]!) as Record<string, unknown>;
    expect(answer).toMatchObject({ type: "extension_ui_response", value: "TEXT" });
    const reply = CliProcess.start(["rpc", "ask", JSON.stringify({ ...answer, value: "from the cli" })], home, {
      PI_ORCH_HOME: home,
    });
    clis.push(reply);
    expect((await reply.exited).code).toBe(0);
    expect(await prompt.exited).toEqual({ code: 0, signal: null });
    expect(prompt.stdout).toBe("prompt sent to ask\n");
    await events.next(
      isType("extension_ui_request", (e) => e.message === "You entered: from the cli"),
      "the command's own notice",
    );
  }, 60_000);
});
