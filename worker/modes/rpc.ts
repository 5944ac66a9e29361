/**
 * `pi --mode rpc`: commands in on stdin, responses and events out on stdout, one
 * JSON object per line. Bad input gets a `success:false` response and the worker
 * keeps going; stdin closing, SIGTERM or SIGHUP end it cleanly (exit 0, no child left).
 */
import type { Readable, Writable } from "node:stream";
import { JsonlWriter, readLines, DEFAULT_MAX_LINE_BYTES } from "../../shared/jsonl.js";
import { RpcCommandSchemas, type RpcCommand, type RpcCommandType } from "../../shared/schema/rpc.js";
import { checker } from "../../shared/validate.js";
import type { WorkerRuntime } from "../runtime.js";
import { killAllChildren } from "../tools/process-tree.js";

/** Where the RPC mode reads and writes; the process's stdio by default. */
export interface RpcIo {
  input: Readable;
  output: Writable;
  maxLineBytes?: number;
  /** Called once when the mode has shut down (the CLI exits the process). */
  onExit?: (code: number) => void;
}

type Handler = (cmd: RpcCommand) => Promise<unknown> | unknown;

/** Thrown by a handler to answer `success:false` with this text. */
class CommandError extends Error {}

/** Run the RPC loop until stdin closes or a terminating signal arrives. */
export function runRpcMode(runtime: WorkerRuntime, io: RpcIo): { shutdown: (reason: string) => Promise<void> } {
  const writer = new JsonlWriter(io.output);
  const unsubscribe = runtime.agent.subscribe((event) => void writer.write(event));
  let shuttingDown: Promise<void> | null = null;

  const respond = (command: string, id: string | undefined, result: { data?: unknown } | { error: string }) => {
    const base = { ...(id !== undefined ? { id } : {}), type: "response", command };
    if ("error" in result) return writer.write({ ...base, success: false, error: result.error });
    return writer.write(result.data === undefined ? { ...base, success: true } : { ...base, success: true, data: result.data });
  };

  const handlers = createHandlers(runtime);

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
    if (!(type in RpcCommandSchemas)) {
      await respond(type, id, { error: `Unknown command: ${type}` });
      return;
    }
    const checked = checker(RpcCommandSchemas[type as RpcCommandType])(value);
    if (!checked.ok) {
      await respond(type, id, { error: `Invalid command "${type}": ${checked.errors.join("; ")}` });
      return;
    }
    try {
      const data = await handlers[type as RpcCommandType](checked.value as RpcCommand);
      if (type === "extension_ui_response") return;
      await respond(type, id, { data });
    } catch (err) {
      await respond(type, id, { error: err instanceof Error ? err.message : String(err) });
    }
  };

  // Commands are handled one after another in arrival order, except that a slow one
  // (abort, bash, compact) must not hold up the others: `abort` during `bash` works.
  const SLOW = new Set(["abort", "bash", "compact"]);
  let chain: Promise<void> = Promise.resolve();
  readLines(io.input, {
    maxLineBytes: io.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
    onLine: (line) => {
      const slow = SLOW.has(peekType(line));
      const next = chain.then(() => (slow ? void handleLine(line) : handleLine(line)));
      chain = next.catch(() => undefined);
    },
    onError: (error) => {
      chain = chain.then(() => respond("parse", undefined, { error: `Failed to parse command: ${error.message}` })).catch(() => undefined);
    },
    onEnd: () => void shutdown("stdin closed"),
  });

  const shutdown = (reason: string): Promise<void> => {
    if (shuttingDown) return shuttingDown;
    process.stderr.write(`pi: shutting down (${reason})\n`);
    shuttingDown = (async () => {
      const hardStop = setTimeout(() => {
        killAllChildren();
        io.onExit?.(0);
      }, 3000);
      hardStop.unref();
      await runtime.shutdown().catch(() => undefined);
      killAllChildren();
      unsubscribe();
      await writer.flush();
      clearTimeout(hardStop);
      io.onExit?.(0);
    })();
    return shuttingDown;
  };

  io.output.on("error", () => void shutdown("stdout closed"));
  return { shutdown };
}

/** The `type` of a line without a full parse, to route slow commands. */
function peekType(line: string): string {
  const m = /"type"\s*:\s*"([a-z_]+)"/.exec(line);
  return m ? m[1] : "";
}

function createHandlers(runtime: WorkerRuntime): Record<RpcCommandType, Handler> {
  const unsupported = (what: string) => () => {
    throw new CommandError(`${what} is not available in this worker yet`);
  };
  return {
    prompt: (c) => {
      const cmd = c as Extract<RpcCommand, { type: "prompt" }>;
      if (!runtime.agent.isStreaming) {
        const problem = runtime.missingKeyProblem();
        if (problem) throw new CommandError(problem);
      }
      runtime.prompt(cmd.message, cmd.images, cmd.streamingBehavior);
      return undefined;
    },
    steer: (c) => {
      const cmd = c as Extract<RpcCommand, { type: "steer" }>;
      runtime.steer(cmd.message, cmd.images);
      return undefined;
    },
    follow_up: (c) => {
      const cmd = c as Extract<RpcCommand, { type: "follow_up" }>;
      runtime.followUp(cmd.message, cmd.images);
      return undefined;
    },
    abort: async () => {
      await runtime.agent.abort();
      return undefined;
    },
    get_state: () => runtime.state(),
    get_messages: () => ({ messages: runtime.messages() }),
    set_model: (c) => {
      const cmd = c as Extract<RpcCommand, { type: "set_model" }>;
      return runtime.setModel(cmd.provider, cmd.modelId);
    },
    cycle_model: () => runtime.cycleModel(),
    get_available_models: () => ({ models: runtime.availableModels() }),
    set_thinking_level: (c) => {
      runtime.setThinkingLevel((c as Extract<RpcCommand, { type: "set_thinking_level" }>).level);
      return undefined;
    },
    cycle_thinking_level: () => runtime.cycleThinkingLevel(),
    set_steering_mode: (c) => {
      runtime.setSteeringMode((c as Extract<RpcCommand, { type: "set_steering_mode" }>).mode);
      return undefined;
    },
    set_follow_up_mode: (c) => {
      runtime.setFollowUpMode((c as Extract<RpcCommand, { type: "set_follow_up_mode" }>).mode);
      return undefined;
    },
    set_auto_retry: (c) => {
      runtime.agent.autoRetry = (c as Extract<RpcCommand, { type: "set_auto_retry" }>).enabled;
      return undefined;
    },
    abort_retry: () => {
      runtime.agent.abortRetry();
      return undefined;
    },
    bash: (c) => runtime.bash((c as Extract<RpcCommand, { type: "bash" }>).command),
    abort_bash: () => {
      runtime.abortBash();
      return undefined;
    },
    get_session_stats: () => runtime.sessionStats(),
    get_last_assistant_text: () => ({ text: runtime.lastAssistantText() }),
    set_session_name: (c) => {
      runtime.setSessionName((c as Extract<RpcCommand, { type: "set_session_name" }>).name);
      return undefined;
    },
    get_commands: () => ({ commands: [] }),
    compact: unsupported("compact"),
    set_auto_compaction: unsupported("set_auto_compaction"),
    new_session: unsupported("new_session"),
    switch_session: unsupported("switch_session"),
    fork: unsupported("fork"),
    clone: unsupported("clone"),
    get_fork_messages: unsupported("get_fork_messages"),
    extension_ui_response: () => undefined,
  };
}
