/**
 * `pi --mode rpc`: commands in on stdin, responses and events out on stdout, one
 * JSON object per line. Bad input gets a `success:false` response and the worker
 * keeps going; stdin closing, SIGTERM or SIGHUP end it cleanly (exit 0, no child left).
 */
import type { Readable, Writable } from "node:stream";
import { JsonlWriter, readLines, DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_LINE_BYTES } from "../../shared/jsonl.js";
import { RpcCommandSchemas, type RpcCommand, type RpcCommandType, type RpcResponse } from "../../shared/schema/rpc.js";
import { checker } from "../../shared/validate.js";
import type { AgentSession } from "../core/agent-session.js";
import { killAllChildren } from "../tools/process-tree.js";
import { createCommandHandlers, dispatchCommand } from "./commands.js";
import { compactWhenIdle } from "./idle-compact.js";
import { RpcUiBridge } from "./rpc-ui.js";
import { toWireEvent } from "./wire-event.js";

/** Where the RPC mode reads and writes; the process's stdio by default. */
export interface RpcIo {
  input: Readable;
  output: Writable;
  maxLineBytes?: number;
  /** Called once when the mode has shut down (the CLI exits the process). */
  onExit?: (code: number) => void;
  /**
   * Resolves when the session has started (its extensions' session_start handlers ended):
   * as pi 1.6 reads no command before, commands wait for it; dialog answers do not.
   */
  ready?: Promise<void>;
  /**
   * Whether to run the one memory-reducing collection once idle (default true). A worker
   * started from the startup snapshot without extensions skips it: compiling and evaluating
   * nothing, its start leaves little for it to give back (idle RSS 47.4 MB without it, 47.9
   * with it, 9 s after start), and it cost ~17 ms of CPU, as much again as the rest of such
   * a start. With extensions loaded through jiti it gives back ~4 MB, and runs.
   */
  idleCompaction?: boolean;
}

/**
 * How long a worker is quiet (no command in, no line out) before its one memory-reducing
 * collection: past a supervisor's first `get_state`, well before its next ping (5 s).
 */
const IDLE_COMPACT_MS = 100;

/** Run the RPC loop until stdin closes or a terminating signal arrives. */
export function runRpcMode(
  session: AgentSession,
  io: RpcIo,
): { shutdown: (reason: string) => Promise<void>; ui: RpcUiBridge } {
  // No line may exceed a reader's limit: an event repeating megabytes is cut to fit, never dropped.
  const writer = new JsonlWriter(io.output, DEFAULT_MAX_EVENT_BYTES);
  // Commands read and not yet handled: the idle collection waits for them, and for a run,
  // a retry's wait or a compaction (quiet on the wire while the model thinks or a tool runs).
  let pending = 0;
  const idle =
    io.idleCompaction === false
      ? { activity: () => undefined, stop: () => undefined }
      : compactWhenIdle(IDLE_COMPACT_MS, () => pending > 0 || session.isWorking);
  const unsubscribe = session.subscribe((event) => {
    idle.activity();
    void writer.write(toWireEvent(event));
  });
  // A reply streams no faster than stdout is read: the events wait in the model's stream,
  // not in memory ahead of the answers to commands (get_state within 100 ms).
  session.outputBehind = () => writer.behind();
  let shuttingDown: Promise<void> | null = null;

  const respond = (command: string, id: string | undefined, result: { data?: unknown } | { error: string }) => {
    const base = { ...(id !== undefined ? { id } : {}), type: "response" as const, command };
    const response: RpcResponse =
      "error" in result
        ? { ...base, success: false, error: result.error }
        : result.data === undefined
          ? { ...base, success: true }
          : { ...base, success: true, data: result.data };
    idle.activity();
    return writer.write(response);
  };

  const ui = new RpcUiBridge(writer);
  const common = createCommandHandlers(session, (answer) => ui.resolve(answer));
  // get_state also lists the open dialogs: the supervisor counts a dialog open from its
  // request on, and pi sends nothing when an extension's signal dismisses one.
  const handlers = { ...common, get_state: () => ({ ...session.state(), openDialogs: ui.openDialogIds() }) };

  const handleLine = async (line: string) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      await respond("parse", undefined, { error: `Failed to parse command: ${(err as Error).message}` });
      return;
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      const kind = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
      await respond("parse", undefined, { error: `Failed to parse command: expected a JSON object, got ${kind}` });
      return;
    }
    const record = value as Record<string, unknown>;
    const id = typeof record.id === "string" ? record.id : undefined;
    const type = record.type;
    if (typeof type !== "string") {
      await respond("parse", id, { error: `Invalid command: /type: must be a string naming the command` });
      return;
    }
    if (!Object.hasOwn(RpcCommandSchemas, type)) {
      await respond(type, id, { error: `Unknown command: ${type}` });
      return;
    }
    const checked = checker(RpcCommandSchemas[type as RpcCommandType])(value);
    if (!checked.ok) {
      await respond(type, id, { error: `Invalid command "${type}": ${checked.errors.join("; ")}` });
      return;
    }
    try {
      const data = await dispatchCommand(handlers, checked.value as RpcCommand);
      if (type === "extension_ui_response") return;
      await respond(type, id, { data });
    } catch (err) {
      await respond(type, id, { error: err instanceof Error ? err.message : String(err) });
    }
  };

  // A command holds the queue until it is answered or opens a dialog: an extension
  // command (`/ask`) is answered when its handler ends, as pi answers it, and the
  // commands after it (a supervisor's get_state pings) must not wait for a person.
  const inOrder = async (line: string) => {
    const dialog = ui.nextDialog();
    try {
      await Promise.race([handleLine(line), dialog.opened]);
    } finally {
      dialog.cancel();
    }
  };
  // Commands are handled one after another in arrival order, except that a slow one
  // (abort, bash, compact) must not hold up the others: `abort` during `bash` works.
  // A dialog's answer is taken at once, as pi takes it: the command waiting for it may be the one holding the queue.
  const SLOW = new Set(["abort", "bash", "compact", "navigate_tree"]);
  let chain: Promise<void> = (io.ready ?? Promise.resolve()).catch(() => undefined);
  readLines(io.input, {
    maxLineBytes: io.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
    onLine: (line) => {
      idle.activity();
      pending++;
      const handled = () => {
        pending--;
        idle.activity();
      };
      const type = peekType(line);
      if (type === "extension_ui_response") {
        void handleLine(line).finally(handled);
        return;
      }
      const slow = SLOW.has(type);
      const next = chain.then(() => (slow ? void handleLine(line).finally(handled) : inOrder(line).finally(handled)));
      chain = next.catch(() => undefined);
    },
    onError: (error) => {
      chain = chain
        .then(() => respond("parse", undefined, { error: `Failed to parse command: ${error.message}` }))
        .catch(() => undefined);
    },
    onEnd: () => void shutdown("stdin closed"),
  });

  const shutdown = (reason: string): Promise<void> => {
    if (shuttingDown) return shuttingDown;
    process.stderr.write(`pi: shutting down (${reason})\n`);
    idle.stop();
    shuttingDown = (async () => {
      const hardStop = setTimeout(() => {
        killAllChildren();
        io.onExit?.(0);
      }, 3000);
      hardStop.unref();
      await session.shutdown().catch(() => undefined);
      killAllChildren();
      unsubscribe();
      session.outputBehind = null;
      await writer.flush();
      clearTimeout(hardStop);
      io.onExit?.(0);
    })();
    return shuttingDown;
  };

  io.output.on("error", () => void shutdown("stdout closed"));
  return { shutdown, ui };
}

/** The `type` of a line without a full parse, to route slow commands. */
function peekType(line: string): string {
  const m = /"type"\s*:\s*"([a-z_]+)"/.exec(line);
  return m ? m[1] : "";
}
