/**
 * Commands a pi worker reads on stdin and the responses it writes, as in pi 1.6.0's
 * rpc-types.d.ts and docs/rpc-commands.md. One schema per command; the union is what
 * `pi --mode rpc` accepts.
 */
import { Type, type Static, type TSchema } from "typebox";
import { ImageContent, ThinkingLevel } from "./messages.js";

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

/** Dialogs and notices an extension sends to the client in RPC mode. */
export const ExtensionUiRequest = Type.Object({
  type: Type.Literal("extension_ui_request"),
  id: Type.String(),
  method: Type.String(),
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
