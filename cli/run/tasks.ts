/**
 * Task lists of `pi-orch run`: read from a JSON array, a JSONL file or a `.ts`/`.js`
 * module that default-exports the array (loaded with jiti), or made from
 * `--prompt TEXT --count N`; then checked field by field, each error naming the task.
 */
import { readFileSync } from "node:fs";
import { extname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import * as Type from "typebox/type";
import { NAME_PATTERN } from "../../shared/agent-name.js";
import { jitiCacheOptions } from "../../shared/jiti-cache.js";
import { checker } from "../../shared/validate.js";
import type { RunTask } from "./types.js";

/** A task as the file may write it. Unknown fields are errors, so a typo never goes unnoticed. */
export const TaskSchema = Type.Object(
  {
    name: Type.String({ pattern: NAME_PATTERN.source }),
    prompt: Type.String({ minLength: 1 }),
    cwd: Type.Optional(Type.String({ minLength: 1 })),
    provider: Type.Optional(Type.String({ minLength: 1 })),
    model: Type.Optional(Type.String({ minLength: 1 })),
    worktree: Type.Optional(Type.Boolean()),
    timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    check: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

const FIELDS = Object.keys(TaskSchema.properties);

/** A task file that cannot be used; the message names the file, the task and the field. Exit code 2. */
export class TaskFileError extends Error {}

function describeTask(index: number, value: unknown): string {
  const name = typeof value === "object" && value !== null ? (value as { name?: unknown }).name : undefined;
  return typeof name === "string" && name !== "" ? `task ${index + 1} ("${name.slice(0, 64)}")` : `task ${index + 1}`;
}

function fieldMessage(error: string): string {
  const at = error.indexOf(": ");
  const path = error.slice(0, at);
  const message = error.slice(at + 2);
  if (path === "/") {
    const missing = /required properties? (.+)$/.exec(message);
    if (missing) return `missing field "${missing[1]}"`;
    return message;
  }
  const field = path.slice(1).replace(/\//g, ".");
  if (field === "name" && message.startsWith("must match pattern")) {
    return `field "name": use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit`;
  }
  return `field "${field}": ${message}`;
}

/**
 * Check a parsed task list: an array of objects with the fields of `TaskSchema` and
 * unique names. Throws `TaskFileError` listing every problem of the first bad task.
 */
export function validateTasks(value: unknown, source: string): RunTask[] {
  if (!Array.isArray(value))
    throw new TaskFileError(`${source}: expected an array of tasks, got ${value === null ? "null" : typeof value}`);
  if (value.length === 0) throw new TaskFileError(`${source}: the task list is empty`);
  const check = checker(TaskSchema);
  const seen = new Map<string, number>();
  const tasks: RunTask[] = [];
  value.forEach((item, i) => {
    const who = `${source}: ${describeTask(i, item)}`;
    if (typeof item !== "object" || item === null || Array.isArray(item))
      throw new TaskFileError(`${who}: expected an object with "name" and "prompt"`);
    const unknown = Object.keys(item).filter((k) => !FIELDS.includes(k));
    if (unknown.length > 0) {
      throw new TaskFileError(
        `${who}: unknown field${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => `"${k}"`).join(", ")} (a task has ${FIELDS.join(", ")})`,
      );
    }
    const result = check(item);
    if (!result.ok) throw new TaskFileError(`${who}: ${[...new Set(result.errors.map(fieldMessage))].join("; ")}`);
    const before = seen.get(result.value.name);
    if (before !== undefined)
      throw new TaskFileError(
        `${who}: field "name": "${result.value.name}" is already the name of task ${before + 1}; names must be unique`,
      );
    seen.set(result.value.name, i);
    tasks.push(result.value);
  });
  return tasks;
}

const MODULE_EXTENSIONS = new Set([".ts", ".mts", ".cts", ".js", ".mjs", ".cjs"]);

/** Parse JSONL: one task per non-empty line; errors give the line number. */
export function parseJsonl(text: string, source: string): unknown[] {
  const out: unknown[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "") return;
    try {
      out.push(JSON.parse(line));
    } catch (err) {
      throw new TaskFileError(`${source}, line ${i + 1}: not valid JSON (${(err as Error).message})`);
    }
  });
  return out;
}

/**
 * Read a task file: `.json` (an array), `.jsonl`/`.ndjson` (one task per line), a
 * module (`.ts`, `.js`, ... default-exporting the array or a function returning it),
 * or, for other names, JSON when the text starts with `[` and JSONL otherwise.
 */
export async function loadTaskFile(path: string): Promise<RunTask[]> {
  const file = resolve(path);
  const ext = extname(file).toLowerCase();
  if (MODULE_EXTENSIONS.has(ext)) return validateTasks(await importTasks(file, path), path);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new TaskFileError(
      `cannot read the task file ${path}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (err as Error).message}`,
    );
  }
  const asJson = ext === ".json" || (ext !== ".jsonl" && ext !== ".ndjson" && text.trimStart().startsWith("["));
  if (!asJson) return validateTasks(parseJsonl(text, path), path);
  try {
    return validateTasks(JSON.parse(text), path);
  } catch (err) {
    if (err instanceof TaskFileError) throw err;
    throw new TaskFileError(`${path}: not valid JSON (${(err as Error).message})`);
  }
}

async function importTasks(file: string, shown: string): Promise<unknown> {
  // jiti (and the TypeScript transform it brings) only loads when a module task file is used.
  const { createJiti } = await import("jiti");
  // Its transform cache in the user's private cache folder, not jiti's /tmp/jiti (shared/jiti-cache.ts).
  const jiti = createJiti(pathToFileURL(file).href, { moduleCache: false, ...jitiCacheOptions() });
  let mod: unknown;
  try {
    mod = await jiti.import(file);
  } catch (err) {
    throw new TaskFileError(`cannot load the task module ${shown}: ${(err as Error).message}`);
  }
  let value = (mod as { default?: unknown } | null)?.default ?? mod;
  if (typeof value === "function") value = await (value as () => unknown)();
  if (!Array.isArray(value))
    throw new TaskFileError(`${shown}: the module must default-export an array of tasks (or a function returning one)`);
  return value;
}

/** `--prompt TEXT --count N`: N tasks `task-1` … `task-N` with the same prompt. */
export function promptTasks(prompt: string, count: number): RunTask[] {
  return Array.from({ length: count }, (_, i) => ({ name: `task-${i + 1}`, prompt }));
}
