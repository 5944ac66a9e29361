/**
 * The argv a worker is started with: our own `pi --mode rpc` by default, or a custom
 * `--worker-command`, plus `--provider`/`--model` when given and `--session FILE`
 * when resuming. Pure apart from locating the built `pi` bin.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
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

/**
 * Whether `argv` starts our own `pi` (the bin next to this module), which takes its keys on
 * the private channel; any other worker (upstream pi, a custom command) gets them in its
 * environment, where it reads them.
 */
export function isOwnWorker(argv: readonly string[]): boolean {
  const bin = argv[1];
  if (bin === undefined) return false;
  const dir = dirname(defaultWorkerCommand()[1]!);
  return [resolve(dir, "pi.cjs"), resolve(dir, "pi.js")].includes(resolve(bin));
}

/** What decides a worker's argv. */
export interface WorkerArgvSpec {
  workerCommand?: string[];
  provider?: string;
  model?: string;
  /** pi package sources, passed as pi's `-e SOURCE` (a run's packages), so upstream pi loads them too. */
  packages?: string[];
  extraArgs?: string[];
}

/**
 * The variable our `pi` reads as if it were `--api-key` (same precedence, any provider):
 * the supervisor moves an `--api-key` out of a worker's argv into it.
 */
export const PI_API_KEY_VAR = "PI_API_KEY";

// Where upstream pi (0.73.1, pi-ai's env-api-keys) reads each built-in provider's key
// from; ours reads ANTHROPIC_API_KEY / OPENAI_API_KEY and PI_API_KEY.
const PROVIDER_KEY_VAR: Record<string, string> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
  "azure-openai-responses": "AZURE_OPENAI_API_KEY",
  deepseek: "DEEPSEEK_API_KEY",
  google: "GEMINI_API_KEY",
  "google-vertex": "GOOGLE_CLOUD_API_KEY",
  groq: "GROQ_API_KEY",
  cerebras: "CEREBRAS_API_KEY",
  xai: "XAI_API_KEY",
  openrouter: "OPENROUTER_API_KEY",
  "vercel-ai-gateway": "AI_GATEWAY_API_KEY",
  zai: "ZAI_API_KEY",
  mistral: "MISTRAL_API_KEY",
  minimax: "MINIMAX_API_KEY",
  moonshotai: "MOONSHOT_API_KEY",
  huggingface: "HF_TOKEN",
  fireworks: "FIREWORKS_API_KEY",
  opencode: "OPENCODE_API_KEY",
  "kimi-coding": "KIMI_API_KEY",
};

/** The provider an argv asks for: the last `--provider P`, else the `P/` of `--model P/ID`. */
function providerOf(args: readonly string[]): string | undefined {
  let provider: string | undefined;
  let modelProvider: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] =
      args[i].startsWith("--") && args[i].includes("=")
        ? [args[i].slice(0, args[i].indexOf("=")), args[i].slice(args[i].indexOf("=") + 1)]
        : [args[i], undefined];
    const value = inline ?? args[i + 1];
    if (flag === "--provider" && value !== undefined) provider = value;
    if (flag === "--model" && value?.includes("/")) modelProvider = value.slice(0, value.indexOf("/"));
  }
  return provider ?? modelProvider;
}

/**
 * Take `--api-key V` / `--api-key=V` out of a worker's arguments (argv is readable by
 * every user in `ps` and /proc) and say which environment variables carry it instead:
 * PI_API_KEY for our own worker; for a custom command also the provider's usual
 * variable, so upstream pi authenticates too. A custom command whose provider cannot be
 * told (no `--provider`, no `--model P/ID`) is refused rather than given the key in argv.
 */
export function liftApiKey(args: readonly string[], custom: boolean): { args: string[]; env: Record<string, string> } {
  const kept: string[] = [];
  let key: string | undefined;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--api-key" && i + 1 < args.length) key = args[++i];
    else if (args[i].startsWith("--api-key=")) key = args[i].slice("--api-key=".length);
    else kept.push(args[i]);
  }
  if (key === undefined) return { args: kept, env: {} };
  const env: Record<string, string> = { [PI_API_KEY_VAR]: key };
  if (custom) {
    const provider = providerOf(kept);
    const name =
      provider !== undefined && Object.hasOwn(PROVIDER_KEY_VAR, provider) ? PROVIDER_KEY_VAR[provider] : undefined;
    if (!name) {
      throw new OrchError(
        "invalid",
        `--api-key in a custom worker command is passed in the provider's environment variable, never in argv, but ${provider ? `provider "${provider}" has no known variable` : "the command names no provider (--provider P or --model P/ID)"}; set the worker's own key variable in the environment pi-orch serve runs with (workers inherit it) instead`,
      );
    }
    env[name] = key;
  }
  return { args: kept, env };
}

/**
 * The variables a worker may read a provider key from: the built-in providers', PI_API_KEY,
 * and the names models.json's `apiKey` settings give (read from `agentDir`; literals and
 * `!command`s are not names).
 */
export function keyVariableNames(agentDir: string): string[] {
  const names = new Set([PI_API_KEY_VAR, ...Object.values(PROVIDER_KEY_VAR)]);
  try {
    const models = JSON.parse(readFileSync(join(agentDir, "models.json"), "utf8")) as {
      providers?: Record<string, { apiKey?: unknown }>;
    };
    for (const provider of Object.values(models.providers ?? {})) {
      const key = provider?.apiKey;
      if (typeof key === "string" && /^[A-Z_][A-Z0-9_]*$/.test(key)) names.add(key);
    }
  } catch {
    // no models.json, or one the worker itself will report
  }
  return [...names];
}

/**
 * For our own worker: the key variables of `env` (the supervisor's environment with the
 * agent's on top) taken out of it, to go over the private channel instead. The returned
 * environment names them `undefined`, so the supervisor's own values are not inherited.
 */
export function splitSecrets(
  env: Record<string, string | undefined>,
  inherited: NodeJS.ProcessEnv,
  names: readonly string[],
): { env: Record<string, string | undefined>; secrets: Record<string, string> } {
  const out = { ...env };
  const secrets: Record<string, string> = {};
  for (const name of names) {
    const value = name in env ? env[name] : inherited[name];
    if (value === undefined) continue;
    out[name] = undefined;
    if (value !== "") secrets[name] = value;
  }
  return { env: out, secrets };
}

/**
 * File, arguments and extra environment to execute; `--session` is appended to custom
 * commands too, so any pi resumes. An `--api-key` never stays in the arguments: it goes
 * into `env` (see liftApiKey).
 */
export function buildWorkerArgv(
  spec: WorkerArgvSpec,
  sessionFile: string | null,
  defaultCommand: readonly string[],
): { file: string; args: string[]; env: Record<string, string> } {
  const custom = spec.workerCommand !== undefined && spec.workerCommand.length > 0;
  const base = custom ? spec.workerCommand! : defaultCommand;
  if (base.length === 0)
    throw new OrchError(
      "invalid",
      'the worker command is empty; pass a program, e.g. --worker-command "pi --mode rpc"',
    );
  const args = base.slice(1);
  if (spec.provider) args.push("--provider", spec.provider);
  if (spec.model) args.push("--model", spec.model);
  for (const source of spec.packages ?? []) args.push("-e", source);
  if (spec.extraArgs) args.push(...spec.extraArgs);
  const lifted = liftApiKey(args, custom);
  if (sessionFile) lifted.args.push("--session", sessionFile);
  return { file: base[0], args: lifted.args, env: lifted.env };
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
