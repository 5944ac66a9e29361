/**
 * An extension command that opens dialogs (`/ask`: a confirm, then an input, then a
 * notice), driven over RPC with the same script on upstream pi 0.73.1 and on ours: the
 * `prompt` is answered once the handler is done (after its dialogs and its notice), a
 * `get_state` sent while a dialog is open is answered at once, and a command without
 * dialogs is answered after its notice. The two sequences of lines must be the same.
 * Then the same command through the supervisor: `pi-orch prompt` returns once the
 * dialogs, answered with `pi-orch rpc`, let the handler end, and `list` is answered meanwhile.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PI, World } from "../support/orch-cli.js";
import { RpcWorker, killAllWorkers, tempDir } from "../support/rpc-worker.js";

type Json = Record<string, any>;
const UPSTREAM = resolve(import.meta.dirname, "../upstream/node_modules/@mariozechner/pi-coding-agent/dist/cli.js");
const dirs: { cleanup: () => void }[] = [];
let world: World | undefined;
afterEach(async () => {
  await world?.cleanup();
  world = undefined;
  await killAllWorkers();
  for (const d of dirs.splice(0)) d.cleanup();
});

const EXTENSION = `export default function (pi) {
  pi.registerCommand("ask", {
    description: "asks twice",
    handler: async (args, ctx) => {
      const ok = await ctx.ui.confirm("Sure?", "args " + args);
      const name = await ctx.ui.input("Name?", "placeholder");
      ctx.ui.notify("ok=" + ok + " name=" + name, "info");
    },
  });
  pi.registerCommand("quiet", { description: "no dialog", handler: async (_args, ctx) => ctx.ui.notify("quiet done", "info") });
}
`;

/** A line as the script compares it: responses by id, dialogs by method (notices with their text). */
function label(l: Json): string {
  if (l.type === "response") return `response ${l.id} ${l.success}`;
  if (l.type === "extension_ui_request") return l.method === "notify" ? `notify ${l.message}` : `dialog ${l.method}`;
  return l.type;
}

async function script(impl: "ours" | "upstream"): Promise<string[]> {
  const root = tempDir(`pi-cmd-dialog-${impl}-`);
  dirs.push(root);
  const ext = join(root.path, "ask.js");
  writeFileSync(ext, EXTENSION);
  const env =
    impl === "ours"
      ? { PI_ORCH_HOME: root.path, HOME: root.path }
      : { PI_CODING_AGENT_DIR: root.path, PI_OFFLINE: "1", HOME: root.path };
  const args = ["--mode", "rpc", "--no-session", "-e", ext, ...(impl === "ours" ? ["--provider", "faux"] : [])];
  const w = new RpcWorker(args, {
    cwd: root.path,
    env: { ...env, ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" },
    ...(impl === "upstream" ? { bin: [process.execPath, UPSTREAM] } : {}),
  });
  await w.request({ type: "get_state", id: "ready" });
  const from = w.received.length;
  const send = (o: Json) => w.writeRaw(`${JSON.stringify(o)}\n`);
  const ui = (method: string) =>
    w.waitFor((l) => l.type === "extension_ui_request" && l.method === method, 20_000, from);

  send({ type: "prompt", id: "p1", message: "/ask hello" });
  const confirm = await ui("confirm");
  // A client (the supervisor's presence ping) is answered while a person thinks.
  await w.request({ type: "get_state", id: "g1" });
  send({ type: "extension_ui_response", id: confirm.id, confirmed: true });
  const input = await ui("input");
  send({ type: "extension_ui_response", id: input.id, value: "Ada" });
  await w.waitFor((l) => l.type === "response" && l.id === "p1", 20_000, from);
  await w.request({ type: "prompt", id: "p2", message: "/quiet" });
  const lines = w.received.slice(from).filter((l) => l.type === "response" || l.type === "extension_ui_request");
  w.closeStdin();
  await w.exited;
  return lines.map(label);
}

describe.skipIf(!existsSync(UPSTREAM))("an extension command with dialogs over RPC, as upstream pi 0.73.1", () => {
  it("answers the prompt when the handler is done, and other commands while its dialog is open", async () => {
    const ours = await script("ours");
    const theirs = await script("upstream");
    expect(ours).toEqual(theirs);
    expect(ours).toEqual([
      "dialog confirm",
      "response g1 true",
      "dialog input",
      "notify ok=true name=Ada",
      "response p1 true",
      "notify quiet done",
      "response p2 true",
    ]);
  }, 60_000);
});

describe("an extension command with dialogs through the supervisor", () => {
  it("pi-orch prompt returns when the handler is done; list answers while the dialog is open", async () => {
    world = new World();
    const ext = join(world.cwd.path, "ask.js");
    writeFileSync(ext, EXTENSION);
    await world.serve();
    await world.ok([
      "spawn",
      "--name",
      "asker",
      "--worker-command",
      `${process.execPath} ${PI} --mode rpc --provider faux --no-session -e ${ext}`,
    ]);
    const prompt = world.start(["prompt", "asker", "/ask hi"]);
    const dialog = async (method: string) => {
      await world!.until(
        `a ${method} dialog`,
        () => JSON.stringify(world!.events("asker")),
        (t) => t.includes(`"method":"${method}"`),
      );
      return world!.events("asker").find((e) => e.event?.type === "extension_ui_request" && e.event.method === method)!
        .event as Json;
    };
    const confirm = await dialog("confirm");
    // The worker answers get_state while the dialog waits: list shows the model it runs.
    expect(await world.ok(["list"])).toMatch(/asker\s+idle\s.*faux\/faux-1/);
    await world.ok([
      "rpc",
      "asker",
      JSON.stringify({ type: "extension_ui_response", id: confirm.id, confirmed: true }),
    ]);
    const input = await dialog("input");
    expect(prompt.proc.exitCode).toBeNull();
    await world.ok(["rpc", "asker", JSON.stringify({ type: "extension_ui_response", id: input.id, value: "Ada" })]);
    expect(await prompt.exited).toBe(0);
    expect(prompt.stdout()).toBe("prompt sent to asker\n");
    expect(
      world.events("asker").some((e) => e.event?.method === "notify" && e.event.message === "ok=true name=Ada"),
    ).toBe(true);
  }, 60_000);
});
