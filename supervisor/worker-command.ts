/**
 * The argv a worker is started with: our own `pi --mode rpc` by default, or a custom
 * `--worker-command`, plus `--provider`/`--model` when given and `--session FILE`
 * when resuming. Pure apart from locating the built `pi` bin.
 */
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { OrchError } from "./errors.js";

/**
 * `node <dist/cli/pi.cjs> --mode rpc` (the worker with its code cache; `pi.js` where
 * only that was built). The bin is looked up next to this module in each layout it
 * runs from: the sources (tests), a dist chunk, or dist/cli itself.
 */
export function defaultWorkerCommand(): string[] {
  const here = dirname(fileURLToPath(import.meta.url));
  const dirs = [resolve(here, "../dist/cli"), resolve(here, "../cli"), here];
  const candidates = dirs.flatMap((d) => [resolve(d, "pi.cjs"), resolve(d, "pi.js")]);
  const bin = candidates.find((p) => existsSync(p)) ?? candidates[0];
  return [process.execPath, bin, "--mode", "rpc"];
}

/** What decides a worker's argv. */
export interface WorkerArgvSpec {
  workerCommand?: string[];
  provider?: string;
  model?: string;
  extraArgs?: string[];
}

/** File and arguments to execute; `--session` is appended to custom commands too, so any pi resumes. */
export function buildWorkerArgv(
  spec: WorkerArgvSpec,
  sessionFile: string | null,
  defaultCommand: readonly string[],
): { file: string; args: string[] } {
  const base = spec.workerCommand && spec.workerCommand.length > 0 ? spec.workerCommand : defaultCommand;
  if (base.length === 0) throw new OrchError("invalid", "the worker command is empty; pass a program, e.g. --worker-command \"pi --mode rpc\"");
  const args = base.slice(1);
  if (spec.provider) args.push("--provider", spec.provider);
  if (spec.model) args.push("--model", spec.model);
  if (spec.extraArgs) args.push(...spec.extraArgs);
  if (sessionFile) args.push("--session", sessionFile);
  return { file: base[0], args };
}

/**
 * Split a command line the way a POSIX shell splits words: whitespace separates,
 * single quotes are literal, double quotes allow `\"` and `\\`, a backslash escapes
 * outside quotes. No expansion of any kind. Throws on an unterminated quote.
 */
export function splitCommandLine(text: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === "\\" && (text[i + 1] === '"' || text[i + 1] === "\\")) word += text[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === "\\" && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new OrchError("invalid", `unterminated ${quote} quote in command line: ${text}`);
  if (inWord) words.push(word);
  return words;
}
