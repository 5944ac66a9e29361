/**
 * The codemode sandbox's worker thread: one QuickJS VM (WebAssembly, quickjs-wasi) per
 * script, with pi 1.6.0's memory limit. Its own thread, so a script that computes
 * forever never holds up the worker's RPC loop; the parent ends the thread at the
 * deadline or on abort. The script reaches the outside only through `bridge` messages.
 * Built as its own file (dist/cli/codemode-thread.mjs) and loaded only when a script runs.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";
import { type JSValueHandle, QuickJS } from "quickjs-wasi";
import { PRELUDE, SCRIPT_FILE } from "./prelude.js";
import type { FromThread, ThreadStart, ToThread } from "./thread-protocol.js";

const start = workerData as ThreadStart;
const port = parentPort;
if (!port) throw new Error("codemode-thread runs as a worker thread of the pi worker");
const post = (message: FromThread) => port.postMessage(message);

// The parent's timer ends the thread at the deadline; this is the backstop for a loop
// that catches the interrupt, a second later so the parent's word comes first.
const interruptAt = start.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + start.timeoutMs + 1000;
const wasm = readFileSync(createRequire(import.meta.url).resolve("quickjs-wasi/quickjs.wasm"));
const vm = await QuickJS.create({
  wasm,
  memoryLimit: start.memoryLimitBytes,
  interruptHandler: () => Date.now() > interruptAt,
});

let finished = false;
const bridge = vm.newFunction("bridge", (...args: JSValueHandle[]) => {
  const [kind, a, b, c] = args.map((h) => vm.dump(h));
  if (kind === "call" || kind === "global")
    post({
      type: "call",
      kind,
      id: a as number,
      name: b as string,
      args: typeof c === "string" ? c : undefined,
    });
  else if (kind === "output")
    post({
      type: "output",
      kind: a as "text" | "console" | "image",
      data: b as string,
      mimeType: c as string | undefined,
    });
  else if (kind === "done") {
    finished = true;
    post({
      type: "done",
      ok: a === true,
      payload: typeof b === "string" ? b : undefined,
      writes: typeof c === "string" ? c : undefined,
    });
  }
  return vm.undefined;
});

const key = (name: string) => vm.newString(name);
const api = vm.callFunction(
  vm.evalCode(PRELUDE, "codemode-prelude.js"),
  vm.undefined,
  bridge,
  vm.newString(start.toolsJson),
  vm.newString(start.globalsJson),
  vm.newString(start.storeJson),
);
const settle = vm.getProp(api, key("settle"));
const stalled = vm.getProp(api, key("stalled"));

/** Run what the VM has queued, then fail the script if it waits on nothing. */
const pump = () => {
  vm.executePendingJobs();
  if (!finished) vm.callFunction(stalled, api);
};

try {
  // On the script's first line, so its line numbers in errors are the model's.
  const fn = vm.evalCode(`(async (tools, console) => {${start.code}\n})`, SCRIPT_FILE);
  vm.callFunction(vm.getProp(api, key("run")), api, fn);
  pump();
} catch (err) {
  // A syntax error, or the VM out of memory before the script ran.
  const e = err as { name?: string; message?: string; stack?: string };
  const head = `${e.name ?? "Error"}: ${e.message ?? String(err)}`;
  post({ type: "done", ok: false, payload: JSON.stringify({ name: e.name, message: e.message, stack: head }) });
  finished = true;
}

port.on("message", (message: ToThread) => {
  if (finished) return;
  try {
    vm.callFunction(
      settle,
      api,
      vm.newNumber(message.id),
      message.ok ? vm.true : vm.false,
      message.payload === undefined ? vm.undefined : vm.newString(message.payload),
    );
    pump();
  } catch (err) {
    finished = true;
    post({ type: "crash", message: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
  }
});
