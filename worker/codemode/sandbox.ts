/**
 * Runs one codemode script in its own worker thread (sandbox-thread.ts) and answers the
 * calls it makes. The deadline and an abort end the thread at once, whatever the script
 * is doing; calls still running when the script ends are cancelled. At most
 * `PI_CODEMODE_MAX_WORKERS` (default 2) threads live at once; a script waits for a free one
 * in arrival order, at most 60 s or its deadline (pi 1.6.0's rules).
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { FromThread, ThreadStart, ToThread } from "./thread-protocol.js";

/** pi 1.6.0's heap of a script's VM: past it the script gets `InternalError: out of memory`. */
export const MEMORY_LIMIT_BYTES = 256 * 1024 * 1024;
const DEFAULT_MAX_WORKERS = 2;
const WORKER_WAIT_MS = 60_000;
const THREAD_FILE = "codemode-thread.mjs";

/** One item of a script's output, in order. */
export type OutputItem =
  | { type: "text"; text: string; console?: boolean }
  | { type: "image"; data: string; mimeType: string };

/** Why a script did not complete. */
export type ScriptFailure =
  | { kind: "script"; name?: string; message: string; stack?: string }
  | { kind: "timeout" | "aborted" | "sandbox" | "no-worker"; message: string };

/** How a script ended, with everything it printed before. */
export type SandboxResult =
  | { ok: true; output: OutputItem[]; value?: unknown; writes: [string, string?][] }
  | { ok: false; output: OutputItem[]; error: ScriptFailure };

/** What a script needs from its host. */
export interface SandboxRun {
  code: string;
  tools: { name: string; jsName: string; description: string }[];
  /** Host globals by name; each gets the call's arguments as an array. */
  globals: Record<string, (args: unknown[]) => unknown>;
  /** Run a tool call; resolves to the script's value, rejects with the error the script sees. */
  callTool(name: string, args: unknown, signal: AbortSignal): Promise<unknown>;
  store: Record<string, unknown>;
  timeoutMs?: number;
  signal?: AbortSignal;
}

let active = 0;
const waiting: (() => void)[] = [];

function maxWorkers(): number {
  const value = Number(process.env.PI_CODEMODE_MAX_WORKERS);
  return Number.isInteger(value) && value > 0 ? value : DEFAULT_MAX_WORKERS;
}

/** Wait for a worker slot; resolves with what stopped the wait, if anything did. */
function reserve(signal: AbortSignal | undefined, waitMs: number): Promise<"reserved" | "aborted" | "timeout"> {
  if (signal?.aborted) return Promise.resolve("aborted");
  return new Promise((resolve) => {
    const settle = (outcome: "reserved" | "aborted" | "timeout") => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      const i = waiting.indexOf(grant);
      if (i >= 0) waiting.splice(i, 1);
      resolve(outcome);
    };
    const grant = () => settle("reserved");
    const onAbort = () => settle("aborted");
    const timer = setTimeout(() => settle("timeout"), waitMs);
    waiting.push(grant);
    signal?.addEventListener("abort", onAbort, { once: true });
    admit();
  });
}

function admit(): void {
  while (waiting.length > 0 && active < maxWorkers()) {
    active++;
    waiting.shift()?.();
  }
}

/** The thread's file: beside this bundle (dist/cli/), one folder up (a chunk), or in dist/ (from the sources). */
function threadFile(): string {
  const here = import.meta.url;
  const candidates = [`./${THREAD_FILE}`, `../${THREAD_FILE}`, `../../dist/cli/${THREAD_FILE}`].map((c) =>
    fileURLToPath(new URL(c, here)),
  );
  const found = candidates.find((c) => existsSync(c));
  if (!found)
    throw new Error(`the codemode sandbox (${THREAD_FILE}) is missing next to ${here}; rebuild with npm run build`);
  return found;
}

/** Run `run.code` to its end: never rejects, every failure is a result. */
export async function runSandbox(run: SandboxRun): Promise<SandboxResult> {
  const started = performance.now();
  const deadline = run.timeoutMs ?? Number.POSITIVE_INFINITY;
  const admission = await reserve(run.signal, Math.min(deadline, WORKER_WAIT_MS));
  if (admission !== "reserved") {
    const reason = run.signal?.reason;
    const message =
      admission === "aborted"
        ? reason instanceof Error
          ? reason.message
          : "Execution aborted"
        : deadline <= WORKER_WAIT_MS
          ? `Execution timed out after ${deadline} ms while waiting for a free codemode worker`
          : `No codemode worker became free within ${WORKER_WAIT_MS / 1000} seconds. All ${maxWorkers()} workers, shared by every session in this process, are held by other scripts. Retry after they finish.`;
    return {
      ok: false,
      output: [],
      error: {
        kind:
          admission === "aborted"
            ? "aborted"
            : admission === "timeout" && deadline <= WORKER_WAIT_MS
              ? "timeout"
              : "no-worker",
        message,
      },
    };
  }
  try {
    const left = Math.max(1, Math.round(deadline - (performance.now() - started)));
    return await runThread(run, Number.isFinite(deadline) ? left : undefined);
  } finally {
    active--;
    admit();
  }
}

function runThread(run: SandboxRun, timeoutMs: number | undefined): Promise<SandboxResult> {
  const output: OutputItem[] = [];
  const calls = new AbortController();
  const start: ThreadStart = {
    code: run.code,
    toolsJson: JSON.stringify(run.tools),
    globalsJson: JSON.stringify(Object.keys(run.globals)),
    storeJson: JSON.stringify(Object.fromEntries(Object.entries(run.store).map(([k, v]) => [k, JSON.stringify(v)]))),
    memoryLimitBytes: MEMORY_LIMIT_BYTES,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
  };
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      worker = new Worker(threadFile(), { workerData: start, stdout: true, stderr: true });
    } catch (err) {
      resolve({ ok: false, output, error: { kind: "sandbox", message: (err as Error).message } });
      return;
    }
    let settled = false;
    const finish = (result: SandboxResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      run.signal?.removeEventListener("abort", onAbort);
      calls.abort(new Error("the script ended"));
      void worker.terminate();
      resolve(result);
    };
    const fail = (error: ScriptFailure) => finish({ ok: false, output, error });
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => fail({ kind: "timeout", message: `Execution timed out after ${timeoutMs} ms` }), timeoutMs);
    const onAbort = () => {
      const reason = run.signal?.reason;
      fail({ kind: "aborted", message: reason instanceof Error ? reason.message : "Execution aborted" });
    };
    if (run.signal?.aborted) return onAbort();
    run.signal?.addEventListener("abort", onAbort, { once: true });
    const answer = (message: ToThread) => {
      if (!settled) worker.postMessage(message);
    };
    worker.on("message", (message: FromThread) => {
      if (settled) return;
      if (message.type === "output") {
        output.push(
          message.kind === "image"
            ? { type: "image", data: message.data, mimeType: message.mimeType ?? "image/png" }
            : { type: "text", text: message.data, ...(message.kind === "console" ? { console: true } : {}) },
        );
      } else if (message.type === "call") {
        const { id } = message;
        let args: unknown;
        try {
          args = message.args === undefined ? undefined : JSON.parse(message.args);
        } catch (err) {
          return answer({ id, ok: false, payload: (err as Error).message });
        }
        const global = run.globals[message.name];
        const pending: Promise<unknown> =
          message.kind === "global"
            ? global
              ? Promise.resolve().then(() => global(Array.isArray(args) ? args : []))
              : Promise.reject(new Error(`${message.name} is not available`))
            : run.callTool(message.name, args, calls.signal);
        pending.then(
          (value) => answer({ id, ok: true, ...(value === undefined ? {} : { payload: JSON.stringify(value) }) }),
          (err) => answer({ id, ok: false, payload: err instanceof Error ? err.message : String(err) }),
        );
      } else if (message.type === "done") {
        if (message.ok) {
          const writes = message.writes ? (JSON.parse(message.writes) as [string, string?][]) : [];
          finish({
            ok: true,
            output,
            writes,
            ...(message.payload === undefined ? {} : { value: JSON.parse(message.payload) }),
          });
        } else {
          const e = JSON.parse(message.payload ?? "{}") as { name?: string; message?: string; stack?: string };
          fail({
            kind: "script",
            message: e.message ?? "",
            ...(e.name ? { name: e.name } : {}),
            ...(e.stack ? { stack: e.stack } : {}),
          });
        }
      } else {
        fail({ kind: "sandbox", message: message.message });
      }
    });
    worker.on("error", (err) => fail({ kind: "sandbox", message: `${err.name}: ${err.message}` }));
    worker.on("exit", (code) =>
      fail({ kind: "sandbox", message: `Worker exited with code ${code} before the script settled` }),
    );
  });
}
