/**
 * The API object each extension receives. Everything it registers lands in one
 * shared registry, tagged with the extension's path, so errors name their source
 * and a failed load can be undone.
 */
import type { TSchema } from "typebox";
import type { AgentTool } from "../types.js";
import type {
  ExtensionApi,
  ExtensionCommand,
  ExtensionContext,
  ExtensionEventName,
  ExtensionHandler,
  ExtensionTool,
  ExtensionUi,
} from "./types.js";

/** Where handler contexts come from; read at call time, because the mode's UI and the session file change. */
export interface ContextSource {
  cwd: string;
  ui: () => ExtensionUi;
  sessionFile: () => string | undefined;
  sendUserMessage?: (text: string) => Promise<void>;
}

/** A slash command and the extension that registered it. */
export interface RegisteredCommand extends ExtensionCommand {
  path: string;
  name: string;
}

/** An event handler and the extension that registered it. */
export interface RegisteredHandler {
  path: string;
  event: ExtensionEventName;
  handler: ExtensionHandler<never>;
}

/** Every registration of every extension, in registration (= load) order. */
export class ExtensionRegistry {
  readonly tools: { path: string; tool: AgentTool }[] = [];
  readonly commands: RegisteredCommand[] = [];
  readonly handlers: RegisteredHandler[] = [];

  /** Forget what one extension registered (its load failed half-way). */
  remove(path: string): void {
    for (const list of [this.tools, this.commands, this.handlers] as { path: string }[][]) {
      for (let i = list.length - 1; i >= 0; i--) if (list[i].path === path) list.splice(i, 1);
    }
  }
}

/** The events `on` accepts. */
export const EXTENSION_EVENTS: readonly ExtensionEventName[] = [
  "session_start",
  "before_agent_start",
  "context",
  "tool_call",
  "tool_result",
  "agent_end",
  "session_shutdown",
];

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const COMMAND_NAME = /^[\w-]+$/;

/** The context handed to handlers and commands, as of now. */
export function extensionContext(source: ContextSource): ExtensionContext {
  return { cwd: source.cwd, ui: source.ui(), sessionFile: source.sessionFile() };
}

/**
 * The API for the extension at `path`. Arguments are checked here, once, with a
 * TypeError naming the extension; a throw during load undoes that extension.
 */
export function createExtensionApi(path: string, registry: ExtensionRegistry, source: ContextSource): ExtensionApi {
  const fail = (message: string): never => {
    throw new TypeError(`extension ${path}: ${message}`);
  };
  return {
    registerTool<S extends TSchema>(tool: ExtensionTool<S>): void {
      if (typeof tool !== "object" || tool === null) fail("registerTool needs a tool object");
      if (typeof tool.name !== "string" || !TOOL_NAME.test(tool.name)) {
        fail(`registerTool: the name ${JSON.stringify(tool.name)} must be 1-64 letters, digits, "_" or "-"`);
      }
      if (typeof tool.description !== "string") fail(`registerTool "${tool.name}": description must be a string`);
      if (typeof tool.parameters !== "object" || tool.parameters === null) fail(`registerTool "${tool.name}": parameters must be a TypeBox schema (Type.Object({...}))`);
      if (typeof tool.execute !== "function") fail(`registerTool "${tool.name}": execute must be a function`);
      const existing = registry.tools.findIndex((t) => t.tool.name === tool.name);
      if (existing >= 0) registry.tools.splice(existing, 1);
      registry.tools.push({ path, tool: toAgentTool(tool as unknown as ExtensionTool, source) });
    },

    registerCommand(name: string, command: ExtensionCommand): void {
      const bare = typeof name === "string" ? name.replace(/^\//, "") : "";
      if (!COMMAND_NAME.test(bare)) fail(`registerCommand: the name ${JSON.stringify(name)} must be letters, digits, "_" or "-"`);
      if (typeof command?.handler !== "function") fail(`registerCommand "${bare}": handler must be a function`);
      const own = registry.commands.findIndex((c) => c.path === path && c.name === bare);
      const entry: RegisteredCommand = { path, name: bare, description: command.description, handler: command.handler };
      if (own >= 0) registry.commands[own] = entry;
      else registry.commands.push(entry);
    },

    on(event, handler): void {
      if (!EXTENSION_EVENTS.includes(event)) fail(`on: unknown event ${JSON.stringify(event)}; one of ${EXTENSION_EVENTS.join(", ")}`);
      if (typeof handler !== "function") fail(`on("${event}"): the handler must be a function`);
      registry.handlers.push({ path, event, handler: handler as unknown as ExtensionHandler<never> });
    },

    async sendUserMessage(text: string): Promise<void> {
      if (!source.sendUserMessage) throw new Error(`extension ${path}: sendUserMessage is not available in this worker`);
      await source.sendUserMessage(text);
    },
  };
}

/** An extension tool as the agent loop sees it: `execute` also gets the extension context. */
function toAgentTool(tool: ExtensionTool, source: ContextSource): AgentTool {
  return {
    name: tool.name,
    label: typeof tool.label === "string" ? tool.label : tool.name,
    description: tool.description,
    ...(tool.guidelines ? { guidelines: tool.guidelines } : {}),
    parameters: tool.parameters,
    ...(tool.prepareArguments ? { prepareArguments: tool.prepareArguments } : {}),
    execute: (args, ctx) =>
      tool.execute(args, {
        ...extensionContext(source),
        toolCallId: ctx.toolCallId,
        signal: ctx.signal,
        ...(ctx.onUpdate ? { onUpdate: ctx.onUpdate } : {}),
      }),
  };
}
