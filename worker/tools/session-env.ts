/**
 * What pi 1.6 tells the commands it runs about itself: the process markers `AI_AGENT=pi`
 * and `PI_CODING_AGENT=true` (set once in the worker's own environment, so every child
 * inherits them), and for the model's `bash` tool the session it runs in (`PI_SESSION_ID`,
 * `PI_SESSION_FILE`, `PI_PROVIDER`, `PI_MODEL`, `PI_REASONING_LEVEL`), resolved when each
 * command starts so a model or thinking change applies to the next one.
 */

/** The session a tool command runs in. */
export interface SessionEnvState {
  sessionId: string;
  /** Absolute path of the session file; undefined for a `--no-session` run. */
  sessionFile: string | undefined;
  provider: string;
  modelId: string;
  /** The effective thinking level (after clamping to the model). */
  reasoningLevel: string;
}

/** The variables pi 1.6 sets per command; inherited values of them are dropped first (a nested pi's are stale). */
export const SESSION_ENV_VARS = [
  "PI_SESSION_ID",
  "PI_SESSION_FILE",
  "PI_PROVIDER",
  "PI_MODEL",
  "PI_REASONING_LEVEL",
] as const;

/** Mark this process as pi for its children, as pi's CLI and RPC entry points do. */
export function markProcessAsPi(env: NodeJS.ProcessEnv = process.env): void {
  env.AI_AGENT = "pi";
  env.PI_CODING_AGENT = "true";
}

/** `env` with the session variables of `state` (and without them when `state` is undefined: pi's `exposeSessionEnvironment: false`). */
export function withSessionEnv(env: NodeJS.ProcessEnv, state: SessionEnvState | undefined): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const name of SESSION_ENV_VARS) delete out[name];
  if (!state) return out;
  out.PI_SESSION_ID = state.sessionId;
  if (state.sessionFile) out.PI_SESSION_FILE = state.sessionFile;
  out.PI_PROVIDER = state.provider;
  out.PI_MODEL = state.modelId;
  out.PI_REASONING_LEVEL = state.reasoningLevel;
  return out;
}

// One worker process runs one agent session: the runtime says once where its state is read.
let source: (() => SessionEnvState) | undefined;

/** Where tool commands read the session state from (the runtime calls this at start). */
export function setSessionEnvSource(read: () => SessionEnvState): void {
  source = read;
}

/** The session state now, or undefined when no session runs in this process (a tool used on its own). */
export function currentSessionEnv(): SessionEnvState | undefined {
  return source?.();
}
