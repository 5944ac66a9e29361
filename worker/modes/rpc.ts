/**
 * `pi --mode rpc`: commands in on stdin, responses and events out on stdout, one
 * JSON object per line. Bad input gets a `success:false` response and the worker
 * keeps going; stdin closing, SIGTERM or SIGHUP end it cleanly (exit 0, no child left).
 */
import type { Readable, Writable } from "node:stream";
import { JsonlWriter, readLines, DEFAULT_MAX_LINE_BYTES } from "../../shared/jsonl.js";
import { RpcCommandSchemas, type RpcCommand, type RpcCommandType, type RpcResponse } from "../../shared/schema/rpc.js";
import { checker } from "../../shared/validate.js";
import type { WorkerRuntime } from "../runtime.js";
import { RpcUiBridge, type UiResponse } from "./rpc-ui.js";
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

/** Run the RPC loop until stdin closes or a terminating signal arrives. */
export function runRpcMode(runtime: WorkerRuntime, io: RpcIo): { shutdown: (reason: string) => Promise<void>; ui: RpcUiBridge } {
  const writer = new JsonlWriter(io.output);
  const unsubscribe = runtime.agent.subscribe((event) => void writer.write(event));
  let shuttingDown: Promise<void> | null = null;

  const respond = (command: string, id: string | undefined, result: { data?: unknown } | { error: string }) => {
    const base = { ...(id !== undefined ? { id } : {}), type: "response" as const, command };
    const response: RpcResponse =
      "error" in result
        ? { ...base, success: false, error: result.error }
        : result.data === undefined
          ? { ...base, success: true }
          : { ...base, success: true, data: result.data };
    return writer.write(response);
  };

  const ui = new RpcUiBridge(writer);
  const handlers = createHandlers(runtime, ui);

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
  return { shutdown, ui };
}

/** The `type` of a line without a full parse, to route slow commands. */
function peekType(line: string): string {
  const m = /"type"\s*:\s*"([a-z_]+)"/.exec(line);
  return m ? m[1] : "";
}

function createHandlers(runtime: WorkerRuntime, ui: RpcUiBridge): Record<RpcCommandType, Handler> {
  type Cmd<T extends RpcCommandType> = Extract<RpcCommand, { type: T }>;
  return {
    prompt: async (c) => {
      const cmd = c as Cmd<"prompt">;
      await runtime.prompt(cmd.message, cmd.images, cmd.streamingBehavior);
      return undefined;
    },
    steer: (c) => {
      const cmd = c as Cmd<"steer">;
      runtime.steer(cmd.message, cmd.images);
      return undefined;
    },
    follow_up: (c) => {
      const cmd = c as Cmd<"follow_up">;
      runtime.followUp(cmd.message, cmd.images);
      return undefined;
    },
    abort: async () => {
      runtime.abortCompaction();
      await runtime.agent.abort();
      return undefined;
    },
    get_state: () => runtime.state(),
    get_messages: () => ({ messages: runtime.messages() }),
    set_model: (c) => {
      const cmd = c as Cmd<"set_model">;
      return runtime.setModel(cmd.provider, cmd.modelId);
    },
    cycle_model: () => runtime.cycleModel(),
    get_available_models: () => ({ models: runtime.availableModels() }),
    set_thinking_level: (c) => {
      runtime.setThinkingLevel((c as Cmd<"set_thinking_level">).level);
      return undefined;
    },
    cycle_thinking_level: () => runtime.cycleThinkingLevel(),
    set_steering_mode: (c) => {
      runtime.setSteeringMode((c as Cmd<"set_steering_mode">).mode);
      return undefined;
    },
    set_follow_up_mode: (c) => {
      runtime.setFollowUpMode((c as Cmd<"set_follow_up_mode">).mode);
      return undefined;
    },
    set_auto_retry: (c) => {
      runtime.agent.autoRetry = (c as Cmd<"set_auto_retry">).enabled;
      return undefined;
    },
    abort_retry: () => {
      runtime.agent.abortRetry();
      return undefined;
    },
    bash: (c) => runtime.bash((c as Cmd<"bash">).command),
    abort_bash: () => {
      runtime.abortBash();
      return undefined;
    },
    get_session_stats: () => runtime.sessionStats(),
    get_last_assistant_text: () => ({ text: runtime.lastAssistantText() }),
    set_session_name: (c) => {
      runtime.setSessionName((c as Cmd<"set_session_name">).name);
      return undefined;
    },
    get_commands: () => ({ commands: runtime.commands() }),
    compact: (c) => runtime.compact((c as Cmd<"compact">).customInstructions),
    set_auto_compaction: (c) => {
      runtime.autoCompaction = (c as Cmd<"set_auto_compaction">).enabled;
      return undefined;
    },
    new_session: (c) => runtime.newSession((c as Cmd<"new_session">).parentSession),
    switch_session: (c) => runtime.switchSession((c as Cmd<"switch_session">).sessionPath),
    fork: (c) => runtime.fork((c as Cmd<"fork">).entryId),
    clone: () => runtime.clone(),
    get_fork_messages: () => ({ messages: runtime.forkMessages() }),
    extension_ui_response: (c) => {
      ui.resolve(c as unknown as UiResponse);
      return undefined;
    },
  };
}
