/**
 * A dialog its extension dismisses through its AbortSignal (`ctx.ui.confirm(..., {signal})`
 * then `controller.abort()`). On the wire, our worker and upstream pi 0.73.1 run the same
 * script: neither tells the client anything when the signal fires (the extension gets the
 * default answer), and our `get_state` no longer lists the dialog open. Through a real
 * supervisor: the stream gets `dialog_closed` (dismissed) and the dialog stops counting
 * as open, so a command past its timeout is refused instead of held for a dialog that is gone.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runSupervisorServer, type RunningServer } from "../../cli/serve/supervisor-server.js";
import { IpcClient } from "../../ipc/client.js";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import { PI_BIN } from "../support/rpc-worker.js";
import { startOracle, upstreamInstalled, type Implementation } from "../support/upstream-oracle.js";
import { useOracleFixture } from "../support/oracle-fixture.js";

/** `/ask` opens a confirm and returns at once; `/dismiss` aborts its signal; the extension's answer is told by a notice. */
const EXTENSION = `export default function (pi) {
  let controller;
  pi.registerCommand("ask", { description: "open a confirm that /dismiss aborts", handler: async (_args, ctx) => {
    controller = new AbortController();
    void ctx.ui.confirm("Go on?", "asked by the test", { signal: controller.signal }).then((answer) => ctx.ui.notify("answered: " + answer, "info"));
  } });
  pi.registerCommand("dismiss", { description: "abort the open confirm", handler: async () => controller?.abort() });
}
`;

const { server, dirs, dir } = useOracleFixture();

function writeExtension(): string {
  const path = join(dir("pi-dialog-ext-"), "dismiss.ts");
  writeFileSync(path, EXTENSION);
  return path;
}

type Line = Record<string, any>;

/** Open the confirm, dismiss it, and return every line from the dialog's request on, with the dialog's id. */
async function dismissOn(impl: Implementation): Promise<{ id: string; after: Line[]; state: Line }> {
  const { w } = startOracle(impl, server, dirs, { args: ["-e", writeExtension()] });
  expect(await w.request({ type: "prompt", message: "/ask" }, 30_000)).toMatchObject({ success: true });
  const request = await w.waitFor((l) => l.type === "extension_ui_request" && l.method === "confirm", 30_000);
  const from = w.received.indexOf(request) + 1;
  expect(await w.request({ type: "prompt", message: "/dismiss" })).toMatchObject({ success: true });
  await w.waitFor((l) => l.type === "extension_ui_request" && l.method === "notify", 20_000, from);
  const state = await w.request({ type: "get_state" });
  return { id: request.id as string, after: w.received.slice(from), state };
}

describe.skipIf(!upstreamInstalled)(
  "a dialog dismissed through its signal, on the wire: our worker and upstream pi",
  () => {
    it("neither tells the client; the extension gets the default answer; our get_state lists no open dialog", async () => {
      const upstream = await dismissOn("upstream");
      const ours = await dismissOn("ours");
      // Sorted: the order of a command's answer and the extension's notice is either side's own.
      const shape = (r: { id: string; after: Line[] }) =>
        r.after
          .map((l) =>
            l.type === "response"
              ? `response ${l.command}`
              : l.type === "extension_ui_request"
                ? `${l.method} ${l.message ?? ""}`
                : l.type,
          )
          .sort();
      // After the request: /ask and /dismiss answered, the extension's notice, get_state answered; nothing names the dialog.
      expect(shape(upstream)).toEqual([
        "notify answered: false",
        "response get_state",
        "response prompt",
        "response prompt",
      ]);
      expect(shape(ours)).toEqual(shape(upstream));
      for (const r of [upstream, ours]) expect(r.after.filter((l) => l.id === r.id)).toEqual([]);
      expect(upstream.state.data.openDialogs).toBeUndefined();
      expect(ours.state.data.openDialogs).toEqual([]);
    }, 90_000);
  },
);

const homes: string[] = [];
const servers: RunningServer[] = [];
const clients: IpcClient[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  await Promise.allSettled(servers.splice(0).map((s) => s.close()));
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

type Ev = Extract<IpcStreamMessage, { type: "event" }>;

describe("a dialog dismissed through its signal, through the supervisor", () => {
  it("is told closed on the stream and stops counting as open: a command past its timeout afterwards is refused, not held for it", async () => {
    const home = mkdtempSync(join(tmpdir(), "po-dismiss-"));
    homes.push(home);
    const running = await runSupervisorServer({
      home,
      handleSignals: false,
      defaultWorkerCommand: [process.execPath, PI_BIN, "--mode", "rpc"],
      // 3 s: /ask and /dismiss are prompts too, and a loaded machine stretched them past 1 s.
      timings: { rpcTimeoutMs: 3_000, pingIntervalMs: 100 },
    });
    servers.push(running);
    const client = await IpcClient.connect({ home });
    clients.push(client);
    await client.spawn({ name: "asker", provider: "faux", extraArgs: ["--extension", writeExtension()] });
    const events: Ev[] = [];
    const waiters: { test: (e: Ev) => boolean; resolve: () => void }[] = [];
    const seen = (test: (e: Ev) => boolean, what: string): Promise<void> =>
      events.some(test)
        ? Promise.resolve()
        : new Promise((resolve, reject) => {
            const timer = setTimeout(
              () =>
                reject(new Error(`timed out waiting for ${what}; got ${events.map((e) => e.event.type).join(", ")}`)),
              20_000,
            );
            waiters.push({ test, resolve: () => (clearTimeout(timer), resolve()) });
          });
    await client.subscribe({ agents: ["asker"] }, (m) => {
      if (m.type !== "event") return;
      events.push(m);
      for (const w of waiters.splice(0))
        if (w.test(m)) w.resolve();
        else waiters.push(w);
    });
    const ui = (method: string, message?: string) => (e: Ev) =>
      e.event.type === "extension_ui_request" &&
      e.event.method === method &&
      (message === undefined || e.event.message === message);

    await client.rpc("asker", { type: "prompt", message: "/ask" });
    await seen(ui("confirm"), "the confirm");
    const confirm = events.find(ui("confirm"))!.event;
    await client.rpc("asker", { type: "prompt", message: "/dismiss" });
    await seen(ui("notify", "answered: false"), "the extension's default answer");
    // The stream says so, for clients showing the dialog (the TUI drops it, attach prints it).
    await seen(
      (e) => e.event.type === "dialog_closed" && e.event.id === confirm.id && e.event.reason === "dismissed",
      "dialog_closed (dismissed)",
    );
    // A bash command outlasting the supervisor's timeout: with the dismissed dialog still
    // counted open it would be held (rpc_waiting) until the worker ends.
    const answered = client.rpc("asker", { type: "bash", command: "exec sleep 600" }).then(
      (r) => ({ ok: true as const, r }),
      (err: Error & { code?: string }) => ({ ok: false as const, code: err.code, message: err.message }),
    );
    let guard: NodeJS.Timeout | undefined;
    const held = new Promise<{ ok: false; code: string; message: string }>((resolve) => {
      guard = setTimeout(
        () =>
          resolve({
            ok: false,
            code: "held",
            message: `bash was neither answered nor refused in 30 s; events: ${events.map((e) => e.event.type).join(", ")}`,
          }),
        30_000,
      );
    });
    const outcome = await Promise.race([answered, held]).finally(() => clearTimeout(guard));
    expect(outcome).toMatchObject({
      ok: false,
      code: "timeout",
      message: expect.stringMatching(/did not answer bash within/),
    });
  }, 60_000);
});
