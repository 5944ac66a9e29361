/**
 * The YAML frontmatter of a Markdown resource (skills, prompt templates), read as pi
 * reads it: a `---` line, YAML, a `---` line, then the body. Pure.
 */
import { createRequire } from "node:module";

let yamlParse: typeof import("yaml").parse | undefined;

/**
 * Parse YAML with the `yaml` package, loaded on first use (it ships CommonJS): it is
 * 160 KB of the worker bundle, and a start without skills or templates never needs it.
 */
function parseYaml(text: string): unknown {
  yamlParse ??= (createRequire(import.meta.url)("yaml") as typeof import("yaml")).parse;
  return yamlParse(text);
}

/** A Markdown file split into its frontmatter fields and its body. */
export interface Frontmatter {
  /** The parsed YAML mapping; empty when the file has no frontmatter. */
  fields: Record<string, unknown>;
  /** Everything after the closing `---`, trimmed; the whole text when there is no frontmatter. */
  body: string;
}

/**
 * Split `text` into frontmatter and body. Line endings are normalized to LF first.
 * Throws (with the YAML parser's message) when the frontmatter is not valid YAML or
 * not a mapping, so the caller can name the file.
 */
export function parseFrontmatter(text: string): Frontmatter {
  const normalized = text.replace(/\r\n?/g, "\n");
  if (!normalized.startsWith("---")) return { fields: {}, body: normalized };
  const end = normalized.indexOf("\n---", 3);
  if (end === -1) return { fields: {}, body: normalized };
  const yaml = normalized.slice(4, end);
  const body = normalized.slice(end + 4).trim();
  const parsed: unknown = yaml.trim() === "" ? {} : parseYaml(yaml);
  if (parsed === null || parsed === undefined) return { fields: {}, body };
  if (typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new Error("the frontmatter must be a YAML mapping (key: value lines)");
  }
  return { fields: parsed as Record<string, unknown>, body };
}
