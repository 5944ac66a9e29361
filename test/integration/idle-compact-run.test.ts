/**
 * The RPC worker's one memory-reducing collection waits for the worker to be idle: not
 * merely quiet on the wire (a run waiting for the model's first token writes nothing),
 * but with no run, retry wait or compaction going. V8's GC trace (node --trace-gc, on
 * stdout beside the RPC lines) shows where the collection ran.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, expect, it } from "vitest";
import { killAllWorkers, RpcWorker } from "../support/rpc-worker.js";

const PI_CJS = resolve(import.meta.dirname, "../../dist/cli/pi.cjs");
const dirs: string[] = [];
afterEach(async () => {
  await killAllWorkers();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A GC trace line of the memory-reducing collection (CollectAllAvailableGarbage). */
const isReducingGc = (l: Record<string, unknown>): boolean =>
  l.type === "__not_json__" && /Mark-Compact \(reduce\)/.test(String(l.line));

it("runs the collection after the run ends, not while the model is silent", async () => {
  const home = mkdtempSync(join(tmpdir(), "pi-idle-gc-"));
  dirs.push(home);
  const script = join(home, "faux.json");
  // The reply comes 600 ms after the request: six quiet periods with the run going.
  writeFileSync(script, JSON.stringify([{ text: "done", delayMs: 600 }]));
  const w = new RpcWorker(["--mode", "rpc", "--provider", "faux", "--no-session", "--faux-script", script], {
    cwd: home,
    env: { PI_ORCH_HOME: home },
    bin: [process.execPath, "--trace-gc", PI_CJS],
  });
  const answer = await w.request({ type: "prompt", message: "hi" });
  expect(answer.success).toBe(true);
  const end = await w.event("agent_end");
  await w.waitFor(isReducingGc, 20_000);
  const at = (l: unknown) => w.received.indexOf(l as never);
  const firstReducing = w.received.findIndex(isReducingGc);
  expect(firstReducing).toBeGreaterThan(at(end));
  w.closeStdin();
  expect((await w.exited).code).toBe(0);
});
