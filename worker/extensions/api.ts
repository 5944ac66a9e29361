/**
 * The `pi` object each extension's factory receives, and the registry behind it.
 * Registrations are recorded with the extension's path, so errors name their
 * source and a failed load can be undone. Arguments are checked here, once, with a
 * TypeError naming the extension.
 */
import { spawn } from "node:child_process";
import type { TSchema } from "typebox";
import type { ImageContent, TextContent, ThinkingLevel } from "../../shared/schema/messages.js";
import { THINKING_LEVELS } from "../../shared/schema/messages.js";
import type { McpServerConfig } from "../../shared/schema/mcp.js";
import { validateServerConfig } from "../mcp/config.js";
import { mcpNamespace } from "../mcp/names.js";
import { checkProviderConfig, type ProviderConfig } from "../providers/models.js";
import type { StreamSimple } from "../providers/stream-simple.js";
import type { EventBus } from "./event-bus.js";
import type { RegisteredVirtualModel, VirtualModelDefinition } from "./virtual-models.js";
import type { DeliverAs, ExtensionHost } from "./host.js";
import { reportedSends } from "./context.js";
import type {
  CustomMessageInput,
  ExtensionCommandDefinition,
  ExtensionFlagDefinition,
  ExtensionHandler,
  ExtensionToolDefinition,
} from "./types.js";

/** A slash command and the extension that registered it. */
export interface RegisteredCommand extends ExtensionCommandDefinition {
  path: string;
  name: string;
}

/** An event handler and the extension that registered it. */
export interface RegisteredHandler {
  path: string;
  /** Any name, as in pi 1.x: one the worker never emits (a newer pi's event) never fires. */
  event: string;
  handler: ExtensionHandler;
}

/** A tool and the extension that registered it. */
export interface RegisteredTool {
  path: string;
  tool: ExtensionToolDefinition;
}

/** A flag, the extension that registered it, and its value once the CLI set one. */
export interface RegisteredFlag extends ExtensionFlagDefinition {
  path: string;
  name: string;
  value?: boolean | string;
}

/** A provider an extension registered (`pi.registerProvider`). */
export interface RegisteredProvider {
  path: string;
  name: string;
  config: ProviderConfig;
  /** pi's `streamSimple`: the extension's own stream for the config's `api` (pi's event contract). */
  streamSimple?: StreamSimple;
}

/** An MCP server an extension registered (`pi.registerMcpServer`), in pi's `getMcpServers()` shape. */
export interface RegisteredMcpServer {
  path: string;
  name: string;
  config: McpServerConfig;
}

/** Every registration of every extension, in registration (= load) order. */
export class ExtensionRegistry {
  readonly tools: RegisteredTool[] = [];
  readonly commands: RegisteredCommand[] = [];
  readonly handlers: RegisteredHandler[] = [];
  readonly flags: RegisteredFlag[] = [];
  readonly shortcuts: { path: string; shortcut: string; description?: string }[] = [];
  readonly renderers: { path: string; customType: string }[] = [];
  readonly providers: RegisteredProvider[] = [];
  readonly mcpServers: RegisteredMcpServer[] = [];
  readonly virtualModels: RegisteredVirtualModel[] = [];

  /** Forget what one extension registered (its load failed half-way). */
  remove(path: string): void {
    for (const list of [
      this.tools,
      this.commands,
      this.handlers,
      this.flags,
      this.shortcuts,
      this.renderers,
      this.providers,
      this.mcpServers,
      this.virtualModels,
    ] as { path: string }[][]) {
      for (let i = list.length - 1; i >= 0; i--) if (list[i].path === path) list.splice(i, 1);
    }
  }
}

/** What `createExtensionApi` needs besides the registry. */
export interface ApiDeps {
  registry: ExtensionRegistry;
  /** The session; absent while only the factory runs in a test without one. */
  host: () => ExtensionHost;
  events: EventBus;
  /** A tool was registered after start-up: the session refreshes its tool list. */
  onToolsChanged: () => void;
  /** A provider was registered or removed: once bound, the session's model list follows. */
  onProvidersChanged: () => void;
  /** An MCP server was registered or removed: once bound, `mcp_servers_change` goes to the handlers. */
  onMcpServersChanged: () => void;
  /** A failure outside any handler (a `sendMessage` or `sendUserMessage` that could not be delivered). */
  reportError: (path: string, event: string, error: string) => void;
}

/** The result of `pi.exec`. */
export interface ExecResult {
  stdout: string;
  stderr: string;
  code: number;
  killed: boolean;
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const COMMAND_NAME = /^[\w:-]+$/;
const FLAG_NAME = /^[a-z][a-z0-9-]*$/;

/** The API for the extension at `path`. */
export function createExtensionApi(path: string, deps: ApiDeps): Record<string, unknown> {
  const { registry, host } = deps;
  // As pi: a failed send is reported from "<runtime>", not from the extension that sent it.
  const sends = () => reportedSends(host(), (event, error) => deps.reportError("<runtime>", event, error));
  const fail = (message: string): never => {
    throw new TypeError(`extension ${path}: ${message}`);
  };
  return {
    on(event: string, handler: ExtensionHandler): void {
      if (typeof event !== "string" || event === "") fail("on: the event name must be a non-empty string");
      if (typeof handler !== "function") fail(`on("${event}"): the handler must be a function`);
      registry.handlers.push({ path, event, handler });
    },

    registerTool<S extends TSchema>(tool: ExtensionToolDefinition<S>): void {
      if (typeof tool !== "object" || tool === null) fail("registerTool needs a tool object");
      if (typeof tool.name !== "string" || !TOOL_NAME.test(tool.name)) {
        fail(`registerTool: the name ${JSON.stringify(tool.name)} must be 1-64 letters, digits, "_" or "-"`);
      }
      if (typeof tool.description !== "string") fail(`registerTool "${tool.name}": description must be a string`);
      if (typeof tool.parameters !== "object" || tool.parameters === null)
        fail(`registerTool "${tool.name}": parameters must be a TypeBox schema (Type.Object({...}))`);
      if (typeof tool.execute !== "function") fail(`registerTool "${tool.name}": execute must be a function`);
      const existing = registry.tools.findIndex((t) => t.tool.name === tool.name);
      if (existing >= 0) registry.tools.splice(existing, 1);
      registry.tools.push({ path, tool: tool as unknown as ExtensionToolDefinition });
      deps.onToolsChanged();
    },

    registerCommand(name: string, command: ExtensionCommandDefinition): void {
      const bare = typeof name === "string" ? name.replace(/^\//, "") : "";
      if (!COMMAND_NAME.test(bare))
        fail(`registerCommand: the name ${JSON.stringify(name)} must be letters, digits, "_", ":" or "-"`);
      if (typeof command?.handler !== "function") fail(`registerCommand "${bare}": handler must be a function`);
      const own = registry.commands.findIndex((c) => c.path === path && c.name === bare);
      const entry: RegisteredCommand = { ...command, path, name: bare };
      if (own >= 0) registry.commands[own] = entry;
      else registry.commands.push(entry);
    },

    registerFlag(name: string, options: ExtensionFlagDefinition = {}): void {
      if (typeof name !== "string" || !FLAG_NAME.test(name))
        fail(`registerFlag: the name ${JSON.stringify(name)} must be lowercase letters, digits and "-"`);
      if (!registry.flags.some((f) => f.name === name)) registry.flags.push({ ...options, path, name });
    },

    getFlag(name: string): boolean | string | undefined {
      const flag = registry.flags.find((f) => f.name === name);
      return flag ? (flag.value ?? flag.default) : undefined;
    },

    registerShortcut(shortcut: string, options: { description?: string } = {}): void {
      registry.shortcuts.push({ path, shortcut, description: options.description });
    },

    registerMessageRenderer(customType: string): void {
      registry.renderers.push({ path, customType });
    },

    // Display hooks of pi's terminal: accepted and never called, as in pi's RPC mode.
    registerEntryRenderer(customType: string, renderer: unknown): void {
      if (typeof customType !== "string" || customType === "") fail("registerEntryRenderer needs a customType string");
      if (typeof renderer !== "function")
        fail(`registerEntryRenderer "${customType}": the renderer must be a function`);
    },
    registerToolRenderer(resolver: unknown): void {
      if (typeof resolver !== "function") fail("registerToolRenderer needs a function (toolName, next) => renderer");
    },
    registerMarkdownTransformer(transformer: unknown, _options?: { messageTypes?: string[] }): void {
      if (typeof transformer !== "function")
        fail("registerMarkdownTransformer needs a function (markdown, context) => markdown");
    },

    getSettings: () => host().settings(),

    registerProvider(name: string, config: Record<string, unknown>): void {
      if (typeof name !== "string" || name === "") fail("registerProvider needs a provider name");
      if (typeof config !== "object" || config === null) fail(`registerProvider "${name}" needs a config object`);
      const { streamSimple, oauth, ...rest } = config;
      if (streamSimple !== undefined && typeof streamSimple !== "function")
        fail(`registerProvider "${name}": streamSimple must be a function`);
      if (streamSimple !== undefined && typeof rest.api !== "string")
        fail(`registerProvider "${name}": "api" is required when registering streamSimple`);
      const existing = registry.providers.find((p) => p.name === name);
      const customApi =
        streamSimple !== undefined ? (rest.api as string) : existing?.streamSimple ? existing.config.api : undefined;
      // pi's /login is a terminal flow; without it only a configured key can reach the provider.
      if (oauth !== undefined && !rest.apiKey && !existing?.config.apiKey) {
        fail(
          `registerProvider "${name}": this provider gets its key only through OAuth (/login), which needs pi's terminal; give it an "apiKey" (a key or the name of an environment variable) to use it here`,
        );
      }
      let checked: ProviderConfig;
      try {
        checked = checkProviderConfig(name, rest, customApi);
      } catch (err) {
        return fail(`registerProvider: ${(err as Error).message}`);
      }
      // As pi: registering a name again overrides the keys it gives and keeps the others.
      if (existing) {
        existing.config = {
          ...existing.config,
          ...Object.fromEntries(Object.entries(checked).filter(([, v]) => v !== undefined)),
        };
        existing.path = path;
        if (streamSimple !== undefined) existing.streamSimple = streamSimple as StreamSimple;
      } else
        registry.providers.push({
          path,
          name,
          config: checked,
          ...(streamSimple !== undefined ? { streamSimple: streamSimple as StreamSimple } : {}),
        });
      deps.onProvidersChanged();
    },

    registerVirtualModel(definition: VirtualModelDefinition): void {
      if (typeof definition !== "object" || definition === null) fail("registerVirtualModel needs a model object");
      const { provider, id } = definition;
      if (typeof provider !== "string" || !provider.trim() || typeof id !== "string" || !id.trim())
        fail("registerVirtualModel: provider and id must be non-empty strings");
      if (typeof definition.route !== "function")
        fail(`registerVirtualModel "${provider}/${id}": route must be a function`);
      // As pi: registering the same provider and id again replaces it.
      const at = registry.virtualModels.findIndex((v) => v.definition.provider === provider && v.definition.id === id);
      if (at >= 0) registry.virtualModels.splice(at, 1);
      registry.virtualModels.push({ path, definition });
      deps.onProvidersChanged();
    },

    unregisterVirtualModel(provider: string, id: string): void {
      const at = registry.virtualModels.findIndex((v) => v.definition.provider === provider && v.definition.id === id);
      if (at < 0) return;
      registry.virtualModels.splice(at, 1);
      deps.onProvidersChanged();
    },

    unregisterProvider(name: string): void {
      const at = registry.providers.findIndex((p) => p.name === name);
      if (at < 0) return;
      registry.providers.splice(at, 1);
      deps.onProvidersChanged();
    },

    registerMcpServer(name: string, config: unknown): void {
      const checked = validateServerConfig(typeof name === "string" ? name : String(name), config);
      if (typeof checked === "string") fail(`registerMcpServer: ${checked}`);
      const other = registry.mcpServers.find((s) => mcpNamespace(s.name) === mcpNamespace(name) && s.path !== path);
      if (other) fail(`registerMcpServer: the MCP server "${other.name}" is registered by ${other.path}`);
      const own = registry.mcpServers.findIndex((s) => s.path === path && mcpNamespace(s.name) === mcpNamespace(name));
      const entry = { path, name, config: checked as McpServerConfig };
      if (own >= 0) registry.mcpServers[own] = entry;
      else registry.mcpServers.push(entry);
      deps.onMcpServersChanged();
    },

    unregisterMcpServer(name: string): void {
      const at = registry.mcpServers.findIndex((s) => s.path === path && s.name === name);
      if (at < 0) return;
      registry.mcpServers.splice(at, 1);
      deps.onMcpServersChanged();
    },

    getMcpServers: () => mcpServerInfos(registry),

    sendUserMessage(
      content: string | (TextContent | ImageContent)[],
      options?: { deliverAs?: DeliverAs },
    ): Promise<void> {
      return sends().sendUserMessage(content, options?.deliverAs);
    },

    sendMessage(message: CustomMessageInput, options: { deliverAs?: DeliverAs; triggerTurn?: boolean } = {}): void {
      if (typeof message?.customType !== "string") fail("sendMessage needs a message with a customType");
      void sends().sendMessage(message, options);
    },

    appendEntry(customType: string, data?: unknown): void {
      if (typeof customType !== "string" || customType === "") fail("appendEntry needs a customType string");
      host().appendEntry(customType, data);
    },

    setSessionName: (name: string) => host().setSessionName(String(name)),
    getSessionName: () => host().sessionName(),
    setLabel: (entryId: string, label: string | undefined) => host().setLabel(entryId, label),

    exec: (
      command: string,
      args: string[] = [],
      options: { signal?: AbortSignal; timeout?: number; cwd?: string } = {},
    ) => exec(command, args, { cwd: options.cwd ?? host().cwd, signal: options.signal, timeout: options.timeout }),

    getActiveTools: () => host().activeToolNames(),
    getAllTools: () => host().allTools(),
    setActiveTools: (names: string[]) => host().setActiveTools(names),
    getCommands: () => commandInfos(registry),

    async setModel(model: { provider: string; id: string }): Promise<boolean> {
      const h = host();
      const target = h.models().find((m) => m.provider === model?.provider && m.id === model?.id);
      if (!target || (target.api !== "faux" && !h.apiKeyFor(target))) return false;
      h.setModel(target.provider, target.id);
      return true;
    },

    getThinkingLevel: () => host().thinkingLevel(),
    setThinkingLevel(level: ThinkingLevel): void {
      if (!THINKING_LEVELS.includes(level))
        fail(`setThinkingLevel: ${JSON.stringify(level)} is not one of ${THINKING_LEVELS.join(", ")}`);
      const h = host();
      h.setThinkingLevel(h.model().reasoning ? level : "off");
    },

    events: deps.events,
  };
}

/** The registered MCP servers as `pi.getMcpServers()` and `mcp_servers_change` give them: copies, in registration order. */
export function mcpServerInfos(
  registry: ExtensionRegistry,
): { name: string; config: McpServerConfig; extensionPath: string }[] {
  return registry.mcpServers.map((s) => ({ name: s.name, config: structuredClone(s.config), extensionPath: s.path }));
}

/** Command infos as `get_commands` and `pi.getCommands()` list them; duplicates get `:1`, `:2` in load order. */
export function commandInfos(
  registry: ExtensionRegistry,
): { name: string; description?: string; source: "extension"; path: string; sourceInfo: Record<string, string> }[] {
  return invocationNames(registry.commands).map(({ name, command }) => ({
    name,
    ...(command.description !== undefined ? { description: command.description } : {}),
    source: "extension" as const,
    path: command.path,
    sourceInfo: { path: command.path, source: "local", scope: "temporary", origin: "top-level" },
  }));
}

/** Invocation names: a name registered by several extensions is `name:1`, `name:2`, ... */
export function invocationNames(commands: RegisteredCommand[]): { name: string; command: RegisteredCommand }[] {
  const counts = new Map<string, number>();
  for (const c of commands) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
  const seen = new Map<string, number>();
  return commands.map((command) => {
    if (counts.get(command.name) === 1) return { name: command.name, command };
    const n = (seen.get(command.name) ?? 0) + 1;
    seen.set(command.name, n);
    return { name: `${command.name}:${n}`, command };
  });
}

/** Run a program without a shell; never rejects (a missing program is code 127 with the error on stderr). */
export function exec(
  command: string,
  args: string[],
  options: { cwd: string; signal?: AbortSignal; timeout?: number },
): Promise<ExecResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"], signal: options.signal });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let killed = false;
    const timer = options.timeout
      ? setTimeout(() => {
          killed = true;
          child.kill("SIGTERM");
        }, options.timeout)
      : undefined;
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    child.on("error", (e) => {
      if ((e as NodeJS.ErrnoException).name === "AbortError") killed = true;
      else err.push(Buffer.from(e.message));
    });
    child.on("close", (code) => {
      if (timer) clearTimeout(timer);
      resolve({
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        code: code ?? (killed ? 143 : 127),
        killed,
      });
    });
  });
}
