/**
 * The built-in tools and the active set. Default active: read, bash, edit, write;
 * grep, find and ls are available on request (`--tools +grep`).
 */
import type { AgentTool } from "../types.js";
import { bashTool } from "./bash.js";
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

/** Names active when nothing is said. */
export const DEFAULT_ACTIVE_TOOLS = ["read", "bash", "edit", "write"];

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

/**
 * Apply a `--tools` value to the default set. `a,b` is an allow-list; items with
 * `+`/`-` modify the default (`+grep,-write`); a mix of both kinds is an error.
 */
export function selectTools(
  spec: string | undefined,
  known: string[],
  noTools = false,
  warn: (message: string) => void = () => undefined,
): string[] {
  if (noTools) return [];
  if (spec === undefined) return DEFAULT_ACTIVE_TOOLS.filter((n) => known.includes(n));
  const items = spec
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (items.length === 0) return [];
  const modifiers = items.filter((i) => i.startsWith("+") || i.startsWith("-"));
  if (modifiers.length > 0 && modifiers.length !== items.length) {
    throw new Error(`--tools "${spec}": use either a list (read,bash) or modifiers (+grep,-write), not both`);
  }
  // As in pi, an unknown name is a warning, not a refusal: an extension may provide it.
  const check = (name: string) => {
    if (known.includes(name)) return true;
    warn(`--tools: unknown tool "${name}" is ignored; known tools: ${known.join(", ")}`);
    return false;
  };
  if (modifiers.length === 0) return [...new Set(items.filter(check))];
  const active = new Set(DEFAULT_ACTIVE_TOOLS.filter((n) => known.includes(n)));
  for (const item of items) {
    const name = item.slice(1);
    if (!check(name)) continue;
    if (item.startsWith("+")) active.add(name);
    else active.delete(name);
  }
  return known.filter((n) => active.has(n));
}
