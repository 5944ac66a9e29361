/**
 * MCP server configuration as pi 1.6.0 reads it: `<agent dir>/mcp.json` and, for a trusted
 * project only, `<project>/.pi/mcp.json`, both `{"mcpServers": {NAME: entry}}`. A project
 * entry replaces the user one of the same name; a project entry without `command`, `url`
 * or `type` only overrides `enabled`, `exposure` and `toolExposure` of the user one (so
 * `{"enabled": false}` switches it off in one project). Invalid entries are reported with
 * pi's messages and skipped; the others still load. Also the edits `pi mcp add|remove`
 * make, which keep the rest of the file and its indentation.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { McpServerConfig } from "../../shared/schema/mcp.js";
import { checker } from "../../shared/validate.js";
import { mcpNamespace } from "./names.js";

/** Where a server entry came from. */
export type McpScope = "global" | "project" | "extension";

/** A server entry with its name and source. */
export interface McpServerEntry {
  name: string;
  config: McpServerConfig;
  /** The file (or extension) that defines it. */
  source: string;
  scope: McpScope;
  /** The project file whose entry overrides `enabled`/`exposure`/`toolExposure` of a global one. */
  override?: string;
}

/** The servers of both files, and what was wrong in them. */
export interface LoadedMcpConfig {
  servers: McpServerEntry[];
  errors: string[];
  /** The top-level `autoEnableCodemode`, when a file sets it (the project's wins). */
  autoEnableCodemode?: boolean;
  /** The project file, when the project is trusted (whether or not it exists). */
  projectConfig?: string;
}

const SERVER_NAME = /^[A-Za-z0-9_-]+$/;
const EXPOSURES = ["codemode", "deferred", "direct", "hidden"];
const EXPOSURE_LIST = EXPOSURES.map((e) => `"${e}"`).join(", ");
const OVERRIDE_KEYS = ["enabled", "exposure", "toolExposure"];
const LOOPBACK = ["localhost", "127.0.0.1", "[::1]"];
const checkConfig = checker(McpServerConfig);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isStringRecord(value: unknown): boolean {
  return isRecord(value) && Object.values(value).every((v) => typeof v === "string");
}

/** An entry that overrides a server defined elsewhere instead of defining one: no `command`, `url` or `type`. */
export function isOverride(entry: Record<string, unknown>): boolean {
  return entry.command === undefined && entry.url === undefined && entry.type === undefined;
}

/** `codemode-deferred`, pi's older name, is `codemode`. */
function resolveAlias(value: unknown): unknown {
  return value === "codemode-deferred" ? "codemode" : value;
}

/** The first problem of the fields both kinds share, in pi's words. */
function baseError(entry: Record<string, unknown>): string | undefined {
  const { enabled, timeout, description, exposure, toolExposure } = entry;
  if (enabled !== undefined && typeof enabled !== "boolean") return "enabled must be a boolean";
  if (description !== undefined && typeof description !== "string") return "description must be a string";
  if (timeout !== undefined && (typeof timeout !== "number" || !(timeout > 0)))
    return "timeout must be a positive number of seconds";
  if (exposure !== undefined && !EXPOSURES.includes(exposure as string))
    return `exposure must be one of ${EXPOSURE_LIST}`;
  if (toolExposure !== undefined) {
    if (!isRecord(toolExposure)) return "toolExposure must map tool names to exposures";
    for (const [tool, value] of Object.entries(toolExposure))
      if (!EXPOSURES.includes(value as string)) return `toolExposure "${tool}" must be one of ${EXPOSURE_LIST}`;
  }
  return undefined;
}

function httpError(entry: Record<string, unknown>, url: string): string | undefined {
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) return "url must be an http or https URL";
  if (entry.headers !== undefined && !isStringRecord(entry.headers)) return "headers must map names to strings";
  if (entry.oauth !== undefined && !isRecord(entry.oauth)) return "oauth must be an object";
  const auth = entry.auth;
  if (auth !== undefined) {
    if (!isRecord(auth) || typeof auth.provider !== "string" || !auth.provider)
      return "auth.provider must be a provider name";
    const parsed = new URL(url);
    if (parsed.protocol !== "https:" && !LOOPBACK.includes(parsed.hostname))
      return "auth requires an https URL, or http on localhost, 127.0.0.1, or [::1]";
  }
  return undefined;
}

function stdioError(entry: Record<string, unknown>): string | undefined {
  const { args, env, cwd } = entry;
  if (args !== undefined && !(Array.isArray(args) && args.every((a) => typeof a === "string")))
    return "args must be an array of strings";
  if (env !== undefined && !isStringRecord(env)) return "env must map names to strings";
  if (cwd !== undefined && typeof cwd !== "string") return "cwd must be a string";
  return undefined;
}

/**
 * Check one server entry (configuration files and extensions are a trust boundary): the
 * checked copy with exposure aliases resolved, or pi 1.6.0's message for the first problem.
 */
export function validateServerConfig(name: string, raw: unknown): McpServerConfig | string {
  if (!SERVER_NAME.test(name)) return `invalid server name "${name}" (use letters, digits, "_" and "-")`;
  if (!isRecord(raw)) return `server "${name}" must be an object`;
  const entry: Record<string, unknown> = { ...raw };
  if (entry.exposure !== undefined) entry.exposure = resolveAlias(entry.exposure);
  if (isRecord(entry.toolExposure))
    entry.toolExposure = Object.fromEntries(Object.entries(entry.toolExposure).map(([k, v]) => [k, resolveAlias(v)]));
  const fail = (error: string) => `server "${name}": ${error}`;
  const base = baseError(entry);
  if (base) return fail(base);
  const { type, url, command } = entry;
  if (type === "sse") return fail("legacy SSE transport is not supported; use the streamable HTTP URL");
  let error: string | undefined;
  if (typeof url === "string" && (type === undefined || type === "http" || type === "streamable-http"))
    error = httpError(entry, url);
  else if (typeof command === "string" && (type === undefined || type === "stdio")) error = stdioError(entry);
  else return `server "${name}" needs either "command" (stdio) or "url" (streamable HTTP)`;
  if (error) return fail(error);
  const checked = checkConfig(entry);
  return checked.ok ? checked.value : fail(checked.errors.join("; "));
}

interface ReadState {
  servers: Map<string, McpServerEntry>;
  errors: string[];
  autoEnableCodemode?: boolean;
}

function readConfigFile(path: string, scope: "global" | "project", state: ReadState): void {
  if (!existsSync(path)) return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8").replace(/^\uFEFF/, ""));
  } catch (err) {
    state.errors.push(`${path}: ${(err as Error).message}`);
    return;
  }
  if (!isRecord(parsed) || (parsed.mcpServers !== undefined && !isRecord(parsed.mcpServers))) {
    state.errors.push(`${path}: expected an object with an "mcpServers" object`);
    return;
  }
  if (typeof parsed.autoEnableCodemode === "boolean") state.autoEnableCodemode = parsed.autoEnableCodemode;
  else if (parsed.autoEnableCodemode !== undefined) state.errors.push(`${path}: autoEnableCodemode must be a boolean`);
  for (const [name, value] of Object.entries((parsed.mcpServers as Record<string, unknown> | undefined) ?? {})) {
    if (scope === "project" && isRecord(value) && isOverride(value)) {
      const base = state.servers.get(name);
      const extra = Object.keys(value).filter((key) => !OVERRIDE_KEYS.includes(key));
      if (!base)
        state.errors.push(`${path}: server "${name}" needs "command" or "url", or a global server to override`);
      else if (extra.length > 0)
        state.errors.push(`${path}: server "${name}": an override can only set ${OVERRIDE_KEYS.join(", ")}`);
      else {
        const config = validateServerConfig(name, { ...base.config, ...value });
        if (typeof config === "string") state.errors.push(`${path}: ${config}`);
        else state.servers.set(name, { ...base, config, override: path });
      }
      continue;
    }
    const config = validateServerConfig(name, value);
    if (typeof config === "string") {
      state.errors.push(`${path}: ${config}`);
      continue;
    }
    // Names that differ only in `-` and `_` would share a namespace.
    const clash = [...state.servers.keys()].find((o) => o !== name && mcpNamespace(o) === mcpNamespace(name));
    if (clash) {
      state.errors.push(`${path}: server "${name}" conflicts with "${clash}"`);
      continue;
    }
    if (scope === "project" && "url" in config && config.auth) {
      state.errors.push(`${path}: server "${name}": auth is only allowed in the global mcp.json`);
      continue;
    }
    state.servers.set(name, { name, config, source: path, scope });
  }
}

/** `<agent dir>/mcp.json`. */
export function globalMcpConfigPath(home: string): string {
  return join(home, "mcp.json");
}

/** `<project>/.pi/mcp.json`. */
export function projectMcpConfigPath(cwd: string): string {
  return join(cwd, ".pi", "mcp.json");
}

/**
 * The servers of the global file and, when `trusted`, the project file. Disabled servers
 * are listed with `enabled: false`.
 */
export function loadMcpConfig(options: { home: string; cwd: string; trusted: boolean }): LoadedMcpConfig {
  const state: ReadState = { servers: new Map(), errors: [] };
  readConfigFile(globalMcpConfigPath(options.home), "global", state);
  const projectConfig = options.trusted ? projectMcpConfigPath(options.cwd) : undefined;
  if (projectConfig) readConfigFile(projectConfig, "project", state);
  return {
    servers: [...state.servers.values()],
    errors: state.errors,
    ...(state.autoEnableCodemode === undefined ? {} : { autoEnableCodemode: state.autoEnableCodemode }),
    ...(projectConfig ? { projectConfig } : {}),
  };
}

/**
 * Read an `mcp.json` (empty when missing), let `edit` change its `mcpServers`, and write it
 * back with its own indentation when `edit` returns true. Other content is kept.
 */
function editMcpServers(
  path: string,
  edit: (servers: Record<string, unknown> | undefined, parsed: Record<string, unknown>) => boolean,
): void {
  const text = existsSync(path) ? readFileSync(path, "utf8").replace(/^\uFEFF/, "") : undefined;
  const parsed: unknown = text === undefined ? {} : JSON.parse(text);
  if (!isRecord(parsed) || (parsed.mcpServers !== undefined && !isRecord(parsed.mcpServers)))
    throw new Error(`${path}: expected an object with an "mcpServers" object`);
  const servers = isRecord(parsed.mcpServers) ? parsed.mcpServers : undefined;
  if (!edit(servers, parsed)) return;
  const indent = (text && /^([ \t]+)\S/m.exec(text)?.[1]) || "  ";
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(parsed, null, indent)}\n`);
}

/** Add or replace a server in an `mcp.json` (created when missing); true when one was replaced. */
export function addServerConfig(path: string, name: string, config: McpServerConfig): boolean {
  let replaced = false;
  editMcpServers(path, (servers, parsed) => {
    const target = servers ?? {};
    replaced = target[name] !== undefined;
    target[name] = config;
    parsed.mcpServers = target;
    return true;
  });
  return replaced;
}

/** Remove a server from an `mcp.json`; false when the file does not define it. */
export function removeServerConfig(path: string, name: string): boolean {
  if (!existsSync(path)) return false;
  let removed = false;
  editMcpServers(path, (servers) => {
    if (!servers || servers[name] === undefined) return false;
    delete servers[name];
    removed = true;
    return true;
  });
  return removed;
}
