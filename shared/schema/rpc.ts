/**
 * Commands a pi worker reads on stdin and the responses it writes, as in pi 1.6.0's
 * rpc-types.d.ts and docs/rpc-commands.md. One schema per command (the union is what
 * `pi --mode rpc` accepts) and one per command's answer (`data`), which types the worker's
 * handlers and the clients' reads; extension dialogs on the wire.
 */
import type { Static, TObject, TProperties, TSchema } from "typebox";
import * as Type from "typebox/type";
import { CompactionResult } from "./events.js";
import { AgentMessage, ImageContent, Model, ThinkingLevel } from "./messages.js";
import { EntryBase } from "./session.js";
import { checker } from "../validate.js";

const Id = { id: Type.Optional(Type.String()) };
const Images = Type.Optional(Type.Array(ImageContent));
const QueueMode = Type.Union([Type.Literal("all"), Type.Literal("one-at-a-time")]);

function command<T extends string, P extends Record<string, TSchema>>(type: T, props: P) {
  return Type.Object({ ...Id, type: Type.Literal(type), ...props });
}

export const RpcCommandSchemas = {
  prompt: command("prompt", {
    message: Type.String(),
    images: Images,
    streamingBehavior: Type.Optional(Type.Union([Type.Literal("steer"), Type.Literal("followUp")])),
  }),
  steer: command("steer", { message: Type.String(), images: Images }),
  follow_up: command("follow_up", { message: Type.String(), images: Images }),
  abort: command("abort", {}),
  clear_queue: command("clear_queue", {}),
  new_session: command("new_session", { parentSession: Type.Optional(Type.String()) }),
  get_state: command("get_state", {}),
  get_messages: command("get_messages", {}),
  set_model: command("set_model", { provider: Type.String(), modelId: Type.String() }),
  cycle_model: command("cycle_model", {}),
  get_available_models: command("get_available_models", {}),
  set_thinking_level: command("set_thinking_level", { level: ThinkingLevel }),
  cycle_thinking_level: command("cycle_thinking_level", {}),
  get_available_thinking_levels: command("get_available_thinking_levels", {}),
  set_steering_mode: command("set_steering_mode", { mode: QueueMode }),
  set_follow_up_mode: command("set_follow_up_mode", { mode: QueueMode }),
  compact: command("compact", { customInstructions: Type.Optional(Type.String()) }),
  set_auto_compaction: command("set_auto_compaction", { enabled: Type.Boolean() }),
  set_auto_retry: command("set_auto_retry", { enabled: Type.Boolean() }),
  abort_retry: command("abort_retry", {}),
  bash: command("bash", { command: Type.String(), excludeFromContext: Type.Optional(Type.Boolean()) }),
  abort_bash: command("abort_bash", {}),
  get_session_stats: command("get_session_stats", {}),
  switch_session: command("switch_session", { sessionPath: Type.String() }),
  fork: command("fork", { entryId: Type.String() }),
  clone: command("clone", {}),
  get_fork_messages: command("get_fork_messages", {}),
  get_entries: command("get_entries", { since: Type.Optional(Type.String()) }),
  get_last_assistant_text: command("get_last_assistant_text", {}),
  set_session_name: command("set_session_name", { name: Type.String() }),
  get_commands: command("get_commands", {}),
  export_html: command("export_html", { outputPath: Type.Optional(Type.String()) }),
  /** The whole session as a forest of `{entry, children, label?}`, and the current leaf. */
  get_tree: command("get_tree", {}),
  /** Our addition (pi 1.6 has it for extensions only): pi's `navigateTree` over RPC; moves the leaf, optionally summarizing the branch left. */
  navigate_tree: command("navigate_tree", {
    targetId: Type.String(),
    summarize: Type.Optional(Type.Boolean()),
    customInstructions: Type.Optional(Type.String()),
    replaceInstructions: Type.Optional(Type.Boolean()),
    label: Type.Optional(Type.String()),
  }),
  extension_ui_response: command("extension_ui_response", {
    id: Type.String(),
    value: Type.Optional(Type.String()),
    confirmed: Type.Optional(Type.Boolean()),
    cancelled: Type.Optional(Type.Boolean()),
  }),
} as const;

export type RpcCommandType = keyof typeof RpcCommandSchemas;
export type RpcCommandOf<T extends RpcCommandType> = Static<(typeof RpcCommandSchemas)[T]>;
export type RpcCommand = { [K in RpcCommandType]: RpcCommandOf<K> }[RpcCommandType];

/** What became of a prompt: a run started, it was queued behind the current run, or a command or input handler took it. */
export const PromptDisposition = Type.Union([Type.Literal("started"), Type.Literal("queued"), Type.Literal("handled")]);
export type PromptDisposition = Static<typeof PromptDisposition>;

/**
 * The `data` of our worker's `prompt` answer. pi 1.x answers `{disposition}` (and such a
 * worker ends its runs with `agent_settled`); ours adds `running` (before it spoke 1.x it
 * answered `{running}` alone); pi 0.73 answers without data (a run is then assumed, as pi's
 * own clients assume it).
 */
export const PromptAnswerData = Type.Object({
  disposition: PromptDisposition,
  /**
   * A run is going when the answer leaves (it started, takes the prompt queued, or an
   * extension command started one of its own): its `agent_settled` follows.
   */
  running: Type.Boolean(),
});
export type PromptAnswerData = Static<typeof PromptAnswerData>;

/** `get_state`: pi 1.6's `RpcSessionState`, and what our worker adds. */
export const RpcSessionState = Type.Object({
  /** Optional in pi's type; our worker always has one. */
  model: Type.Optional(Model),
  thinkingLevel: ThinkingLevel,
  isStreaming: Type.Boolean(),
  isCompacting: Type.Boolean(),
  steeringMode: QueueMode,
  followUpMode: QueueMode,
  sessionFile: Type.Optional(Type.String()),
  sessionId: Type.String(),
  sessionName: Type.Optional(Type.String()),
  autoCompactionEnabled: Type.Boolean(),
  messageCount: Type.Number(),
  pendingMessageCount: Type.Number(),
  /** Ours: the active tools by name. */
  tools: Type.Optional(Type.Array(Type.String())),
  /** Ours: the worker's working directory. */
  cwd: Type.Optional(Type.String()),
  /** Ours, in RPC mode: the ids of the dialogs waiting for an answer (pi says nothing when a signal dismisses one). */
  openDialogs: Type.Optional(Type.Array(Type.String())),
});
export type RpcSessionState = Static<typeof RpcSessionState>;

/** `get_session_stats`: pi's `SessionStats`, as our worker fills it. */
export const RpcSessionStats = Type.Object({
  sessionFile: Type.Optional(Type.String()),
  sessionId: Type.String(),
  userMessages: Type.Number(),
  assistantMessages: Type.Number(),
  toolCalls: Type.Number(),
  toolResults: Type.Number(),
  totalMessages: Type.Number(),
  tokens: Type.Object({
    input: Type.Number(),
    output: Type.Number(),
    cacheRead: Type.Number(),
    cacheWrite: Type.Number(),
    total: Type.Number(),
  }),
  cost: Type.Number(),
  /**
   * Optional in pi's type; our worker always sends it. As pi 1.6, `tokens` is 0 for an empty
   * session, and null (with `percent`) after a compaction until a reply after it reports usage.
   */
  contextUsage: Type.Object({
    tokens: Type.Union([Type.Number(), Type.Null()]),
    contextWindow: Type.Number(),
    percent: Type.Union([Type.Number(), Type.Null()]),
  }),
});
export type RpcSessionStats = Static<typeof RpcSessionStats>;

/** `bash`: the user's command and its output (pi's `BashResult`; a killed command's `exitCode` is null here). */
export const RpcBashResult = Type.Object({
  output: Type.String(),
  exitCode: Type.Union([Type.Number(), Type.Null()]),
  cancelled: Type.Boolean(),
  truncated: Type.Boolean(),
  fullOutputPath: Type.Optional(Type.String()),
});
export type RpcBashResult = Static<typeof RpcBashResult>;

/** `get_commands`: one command a prompt can invoke (pi's `RpcSlashCommand`). */
export const RpcSlashCommand = Type.Object({
  name: Type.String(),
  description: Type.Optional(Type.String()),
  source: Type.Union([Type.Literal("extension"), Type.Literal("prompt"), Type.Literal("skill")]),
  sourceInfo: Type.Unknown(),
});
export type RpcSlashCommand = Static<typeof RpcSlashCommand>;

/** An answer without `data`. */
const NoData = Type.Void();
const Cancelled = Type.Object({ cancelled: Type.Boolean() });
const Queued = Type.Object({ disposition: Type.Literal("queued") });
/** Session entries travel as the session file has them: any type (a newer pi's too), each with its tree links (session.ts). */
const Entries = Type.Immutable(Type.Array(EntryBase));
const LeafId = Type.Union([Type.String(), Type.Null()]);

/** The `data` of each command's successful answer, as our worker sends it (pi 1.6's where it has one). */
export const RpcResultSchemas = {
  prompt: PromptAnswerData,
  steer: Queued,
  follow_up: Queued,
  abort: NoData,
  clear_queue: Type.Object({ steering: Type.Array(Type.String()), followUp: Type.Array(Type.String()) }),
  new_session: Cancelled,
  get_state: RpcSessionState,
  get_messages: Type.Object({ messages: Type.Array(AgentMessage) }),
  set_model: Model,
  cycle_model: Type.Union([
    Type.Object({ model: Model, thinkingLevel: ThinkingLevel, isScoped: Type.Boolean() }),
    Type.Null(),
  ]),
  get_available_models: Type.Object({ models: Type.Array(Model) }),
  set_thinking_level: NoData,
  cycle_thinking_level: Type.Union([Type.Object({ level: ThinkingLevel }), Type.Null()]),
  get_available_thinking_levels: Type.Object({ levels: Type.Array(ThinkingLevel) }),
  set_steering_mode: NoData,
  set_follow_up_mode: NoData,
  compact: CompactionResult,
  set_auto_compaction: NoData,
  set_auto_retry: NoData,
  abort_retry: NoData,
  bash: RpcBashResult,
  abort_bash: NoData,
  get_session_stats: RpcSessionStats,
  switch_session: Cancelled,
  fork: Type.Object({ text: Type.Optional(Type.String()), cancelled: Type.Boolean() }),
  clone: Cancelled,
  get_fork_messages: Type.Object({
    messages: Type.Array(Type.Object({ entryId: Type.String(), text: Type.String() })),
  }),
  get_entries: Type.Object({ entries: Entries, leafId: LeafId }),
  // pi's docs say `null` when there is none; pi 1.6.0 itself leaves `text` out then (its
  // undefined dropped by JSON), so a client reads both (test/integration/rpc-results-oracle).
  get_last_assistant_text: Type.Object({ text: Type.Optional(Type.Union([Type.String(), Type.Null()])) }),
  set_session_name: NoData,
  get_commands: Type.Object({ commands: Type.Array(RpcSlashCommand) }),
  export_html: Type.Object({ path: Type.String() }),
  /** Each node `{entry, children, label?, labelTimestamp?}`. */
  get_tree: Type.Object({ tree: Type.Array(Type.Unknown()), leafId: LeafId }),
  navigate_tree: Type.Object({
    cancelled: Type.Boolean(),
    editorText: Type.Optional(Type.String()),
    summaryEntry: Type.Optional(Type.Unknown()),
  }),
  /** Not answered: the dialog's opener takes it. */
  extension_ui_response: NoData,
} as const satisfies Record<RpcCommandType, TSchema>;

/** The `data` of a successful answer to a command of type `T`. */
export type RpcResultOf<T extends RpcCommandType> = Static<(typeof RpcResultSchemas)[T]>;

/**
 * What a client reads of any pi's `get_state` answer (0.73, 1.6, ours): only the fields it
 * uses, each optional and read alone (answerFields), so a worker that lacks one, sends one
 * otherwise or sends more is still read.
 */
export const RpcStateSummary = Type.Object({
  model: Type.Optional(Type.Object({ provider: Type.String(), id: Type.String() })),
  sessionFile: Type.Optional(Type.String()),
  isStreaming: Type.Optional(Type.Boolean()),
  openDialogs: Type.Optional(Type.Array(Type.String())),
});
export type RpcStateSummary = Static<typeof RpcStateSummary>;

/**
 * The fields of a successful answer's `data` that `schema` (an object of optional fields)
 * names, each checked alone against its own schema: a field another pi sends otherwise
 * (pi 0.73's `model: null`) is left out without hiding the others. Undefined for a failed
 * answer or data that is not an object.
 */
export function answerFields<P extends TProperties>(
  schema: TObject<P>,
  response: { success: boolean; data?: unknown },
): Partial<Static<TObject<P>>> | undefined {
  const data = response.success ? response.data : undefined;
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  const fields: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(schema.properties)) {
    const value = (data as Record<string, unknown>)[key];
    if (value !== undefined && checker(field)(value).ok) fields[key] = value;
  }
  return fields as Partial<Static<TObject<P>>>;
}

/** What a client reads of any pi's `get_available_models` answer: the providers of the usable models. */
export const RpcModelsSummary = Type.Object({
  models: Type.Array(Type.Object({ provider: Type.String() })),
});

/**
 * The `data` of a successful answer, checked against what the client reads of it (the
 * boundary where a worker's answer enters a client); undefined for a failed answer or
 * data of another shape.
 */
export function answerData<S extends TSchema>(
  schema: S,
  response: { success: boolean; data?: unknown },
): Static<S> | undefined {
  if (!response.success) return undefined;
  const checked = checker(schema)(response.data);
  return checked.ok ? checked.value : undefined;
}

/** What a client reads of a `prompt` answer: what became of the prompt, and whether the worker settles its runs (`agent_settled`). */
export interface PromptAnswer {
  disposition: PromptDisposition;
  settles: boolean;
}

/** What a client reads of any pi's `prompt`, `steer` or `follow_up` answer: pi 1.x's `disposition`, our `running`. */
export const RpcPromptAnswerSummary = Type.Object({
  disposition: Type.Optional(Type.Unknown()),
  running: Type.Optional(Type.Unknown()),
});

/** A prompt's, steer's or follow-up's answer from any pi: 1.x's `{disposition}`, ours with `running`, none from 0.73. */
const PromptAnswerRead = Type.Union([
  Type.Object({ disposition: Type.Optional(PromptDisposition), running: Type.Optional(Type.Boolean()) }),
  Type.Undefined(),
]);

/**
 * The `data` a client (the CLI, the TUI, `run`) accepts in the successful answer to each
 * command, from any pi it drives. Ours and pi 1.6.0 answer as RpcResultSchemas says (the
 * rpc-results tests check both); where pi 0.73 or a worker of another provider answers
 * otherwise, the schema is what the client reads of every one of them: a prompt's answer
 * may have no data (0.73) or no `running` (1.6), `get_state` names a model of any API or
 * `null` (0.73), `get_available_models` lists models of any API.
 */
export const RpcAnswerSchemas = {
  ...RpcResultSchemas,
  prompt: PromptAnswerRead,
  steer: PromptAnswerRead,
  follow_up: PromptAnswerRead,
  get_state: Type.Object({
    model: Type.Optional(Type.Union([Type.Object({ provider: Type.String(), id: Type.String() }), Type.Null()])),
    sessionFile: Type.Optional(Type.String()),
    isStreaming: Type.Optional(Type.Boolean()),
    openDialogs: Type.Optional(Type.Array(Type.String())),
  }),
  get_available_models: RpcModelsSummary,
} as const satisfies Record<RpcCommandType, TSchema>;

/** The `data` a client reads of a successful answer to a command of type `T`. */
export type RpcAnswerOf<T extends RpcCommandType> = Static<(typeof RpcAnswerSchemas)[T]>;

/** The answer to a command of type `T`: its `data` checked against RpcAnswerSchemas, or the worker's refusal. */
export type RpcAnswer<T extends RpcCommandType> =
  | { id?: string; type: "response"; command: string; success: true; data: RpcAnswerOf<T> }
  | Static<typeof RpcErrorResponse>;

/**
 * The worker's `response` to a command of type `type`, its data checked against what a
 * client reads of it (RpcAnswerSchemas): the boundary where an answer enters a client.
 * A refusal passes as it is. Throws an Error naming `agent`, the command and each field
 * that is wrong when the data does not match.
 */
export function readRpcAnswer<T extends RpcCommandType>(agent: string, type: T, response: RpcResponse): RpcAnswer<T> {
  if (!response.success) return response;
  const checked = checker(RpcAnswerSchemas[type])(response.data);
  if (checked.ok) return { ...response, data: checked.value as RpcAnswerOf<T> };
  throw new Error(
    `agent "${agent}" answered ${type} with data pi-orch cannot read (${checked.errors.join("; ")}); ` +
      `its worker may speak another version of the pi protocol: see the raw answer with pi-orch rpc ${agent} '{"type":"${type}"}'`,
  );
}

/**
 * Read an accepted prompt's answer from any pi: 1.x's `{disposition}`, ours with
 * `running`, an older worker's `{running}` alone, 0.73's no data (a run is assumed).
 */
export function readPromptAnswer(response: RpcAnswer<"prompt" | "steer" | "follow_up">): PromptAnswer {
  const data = response.success ? response.data : undefined;
  const d = data?.disposition;
  // Ours says when a command it handled started a run of its own: that run is waited for.
  if (d === "handled" && data?.running === true) return { disposition: "started", settles: true };
  if (d === "started" || d === "queued" || d === "handled") return { disposition: d, settles: true };
  return { disposition: data?.running === false ? "handled" : "started", settles: false };
}

/**
 * What the supervisor forwards: any object with a string `type`. Only the worker checks
 * the command itself, so commands newer than `RpcCommandSchemas` reach a worker that knows them.
 */
export const RpcCommandEnvelope = Type.Object({ type: Type.String() }, { additionalProperties: true });
export type RpcCommandEnvelope = Static<typeof RpcCommandEnvelope> & { id?: unknown; [key: string]: unknown };

/** `{"id","type":"response","command","success":true,"data"?}` */
export const RpcSuccessResponse = Type.Object({
  id: Type.Optional(Type.String()),
  type: Type.Literal("response"),
  command: Type.String(),
  success: Type.Literal(true),
  data: Type.Optional(Type.Unknown()),
});
/** `{"id"?,"type":"response","command","success":false,"error"}` */
export const RpcErrorResponse = Type.Object({
  id: Type.Optional(Type.String()),
  type: Type.Literal("response"),
  command: Type.String(),
  success: Type.Literal(false),
  error: Type.String(),
});
export const RpcResponse = Type.Union([RpcSuccessResponse, RpcErrorResponse]);
export type RpcResponse = Static<typeof RpcResponse>;

/** The `extension_ui_request` methods that wait for an answer (`extension_ui_response`). */
export const DIALOG_METHODS = ["select", "confirm", "input", "editor"] as const;
export type DialogMethod = (typeof DIALOG_METHODS)[number];
/** The methods that only show something (the extension's own display); nothing answers them. */
const NOTICE_METHODS = ["notify", "setStatus", "setWidget", "setTitle", "set_editor_text"] as const;

/** Whether a request's `method` is a dialog waiting for an answer. */
export function isDialogMethod(method: unknown): method is DialogMethod {
  return (DIALOG_METHODS as readonly unknown[]).includes(method);
}

/** A dialog's question as one line: its title and message, whichever it has. */
export function dialogQuestion(request: { title?: unknown; message?: unknown }): string {
  return [request.title, request.message].filter((t) => typeof t === "string" && t !== "").join(": ");
}

/** Dialogs and notices an extension sends to the client in RPC mode (pi 1.6's `RpcExtensionUIRequest`). */
export const ExtensionUiRequest = Type.Object({
  type: Type.Literal("extension_ui_request"),
  id: Type.String(),
  method: Type.Union([...DIALOG_METHODS, ...NOTICE_METHODS].map((m) => Type.Literal(m))),
  title: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
  options: Type.Optional(Type.Array(Type.String())),
  placeholder: Type.Optional(Type.String()),
  prefill: Type.Optional(Type.String()),
  timeout: Type.Optional(Type.Number()),
  notifyType: Type.Optional(Type.String()),
  statusKey: Type.Optional(Type.String()),
  statusText: Type.Optional(Type.String()),
});
export type ExtensionUiRequest = Static<typeof ExtensionUiRequest>;
