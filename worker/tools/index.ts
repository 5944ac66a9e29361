/**
 * The built-in tools and the active set. Default active: read, bash, edit, write;
 * grep, find and ls are available on request (`--tools +grep`).
 */
import type { AgentTool } from "../types.js";
import { bashTool } from "./bash.js";
import { DEFAULT_ACTIVE_TOOLS } from "./default-tools.js";
import { editTool } from "./edit.js";
import { findTool } from "./find.js";
import { grepTool } from "./grep.js";
import { lsTool } from "./ls.js";
import { readTool } from "./read.js";
import { writeTool } from "./write.js";

/** Every built-in tool, in the order the system prompt lists them. */
export const BUILT_IN_TOOLS: AgentTool[] = [
  readTool,
  bashTool,
  editTool,
  writeTool,
  grepTool,
  findTool,
  lsTool,
] as AgentTool[];

/** Names active when nothing is said (the `defaultTools` setting changes them). */
export { DEFAULT_ACTIVE_TOOLS };

/**
 * pi's match of tool names against `--exclude-tools` entries: each is an exact name, or a
 * pattern in which `*` stands for any run of characters (`mcp__*`). Pure.
 */
export function toolNameMatcher(entries: readonly string[]): (name: string) => boolean {
  const names = new Set(entries.filter((e) => !e.includes("*")));
  const patterns = entries
    .filter((e) => e.includes("*"))
    .map(
      (e) =>
        new RegExp(
          `^${e
            .split("*")
            .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
            .join(".*")}$`,
        ),
    );
  return (name) => names.has(name) || patterns.some((p) => p.test(name));
}

/** `--no-tools` (`all`: no tool at all, extension ones included) or `--no-builtin-tools` (`builtin`: no built-in active by default). */
export type NoTools = "all" | "builtin";

/** The tools a session has, from its `--tools`, `--no-tools` / `--no-builtin-tools` and `--exclude-tools`. */
export interface ToolSelection {
  /** The built-in tools active at start, in BUILT_IN_TOOLS order. */
  active: string[];
  /**
   * Whether a tool, built-in or an extension's, exists in the session at all: `--tools LIST`
   * (an allow-list) and `--exclude-tools` leave the others out of pi's registry, so
   * `getAllTools()` does not list them and `setActiveTools` cannot bring them back.
   */
  registered: (name: string) => boolean;
  /**
   * What `--tools` said of a tool an extension registers: true when a `+name` or an
   * allow-list names or matches it (it is active even if registered inactive, as
   * `tool_search` is), false for a `-name`, undefined when it said nothing.
   */
  wanted: (name: string) => boolean | undefined;
}

const isModifier = (item: string) => item.startsWith("+") || item.startsWith("-");

/**
 * pi 1.6.0's tool selection (createAgentSession): `a,b*` is an allow-list of names or
 * patterns, every tool it matches is registered and active and no other; a list of only
 * `+name`/`-name` changes the default set (then `--no-tools` makes the result the
 * allow-list). `--no-builtin-tools` starts with no built-in active, `--no-tools` with no
 * tool registered. An unknown name is no error: an extension may register it. Throws on a
 * list that mixes names and modifiers, or a modifier with a pattern, as pi's usage errors. Pure.
 */
export function selectTools(
  spec: string | undefined,
  known: string[],
  noTools?: NoTools,
  exclude: readonly string[] = [],
  defaultTools: readonly string[] = DEFAULT_ACTIVE_TOOLS,
): ToolSelection {
  const items = spec
    ?.split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const modifiers = items?.filter(isModifier) ?? [];
  if (items && modifiers.length > 0 && modifiers.length < items.length)
    throw new Error(`--tools: tool names cannot be mixed with +name or -name entries`);
  const pattern = modifiers.find((m) => m.includes("*"));
  if (pattern) throw new Error(`--tools: +name and -name entries take exact tool names, not patterns: ${pattern}`);
  const defaults = noTools ? [] : defaultTools;
  let selected = items;
  if (modifiers.length > 0) {
    const set = [...defaults];
    for (const m of modifiers) {
      const name = m.slice(1);
      const at = set.indexOf(name);
      if (m.startsWith("+") && at === -1 && name) set.push(name);
      else if (m.startsWith("-") && at !== -1) set.splice(at, 1);
    }
    selected = set;
  }
  const allowList =
    modifiers.length > 0 ? (noTools === "all" ? selected : undefined) : (items ?? (noTools === "all" ? [] : undefined));
  const excluded = toolNameMatcher(exclude);
  const allowed = allowList ? toolNameMatcher(allowList) : () => true;
  const registered = (name: string) => !excluded(name) && allowed(name);
  // Every tool an allow-list names or matches is active, whether it is a default one or not.
  const wanted = allowList ? known : (selected ?? defaults);
  const plus = new Set(modifiers.filter((m) => m.startsWith("+")).map((m) => m.slice(1)));
  const minus = new Set(modifiers.filter((m) => m.startsWith("-")).map((m) => m.slice(1)));
  return {
    active: known.filter((n) => wanted.includes(n) && registered(n)),
    registered,
    wanted: (name) =>
      allowList ? registered(name) || undefined : plus.has(name) ? true : minus.has(name) ? false : undefined,
  };
}
