/**
 * `pi-orch serve`: run the supervisor in the foreground until a signal or a
 * `shutdown` request ends it. Other commands start it in the background on demand.
 */
import type { Command } from "commander";
import type { RestartPolicy } from "../../shared/schema/agent.js";
import { parseWorkerNice } from "../../supervisor/priority.js";
import { parseStartConcurrency, START_CONCURRENCY_VAR } from "../../supervisor/start-gate.js";
import type { AgentTimings } from "../../supervisor/types.js";
import { CliError, runAction, type CliContext } from "../context.js";

/**
 * Timings and restart-policy defaults from `PI_ORCH_TIMINGS` / `PI_ORCH_RESTART_POLICY`
 * (JSON objects of milliseconds), the workers' nice from `PI_ORCH_WORKER_NICE` and how
 * many may start at once from `PI_ORCH_START_CONCURRENCY`.
 * Tests and demos shorten presence and backoff with them; an environment variable
 * reaches a supervisor the CLI starts in the background.
 */
export function tuningFromEnv(env: NodeJS.ProcessEnv = process.env): {
  timings?: Partial<AgentTimings>;
  policy?: Partial<RestartPolicy>;
  workerNice: number;
  startConcurrency: number;
} {
  const workerNice = parseWorkerNice(env.PI_ORCH_WORKER_NICE);
  if (workerNice === null)
    throw new CliError(
      `PI_ORCH_WORKER_NICE must be an integer from 0 to 19 (0 keeps workers at the supervisor's weight), got ${JSON.stringify(env.PI_ORCH_WORKER_NICE)}`,
      2,
    );
  const startConcurrency = parseStartConcurrency(env[START_CONCURRENCY_VAR]);
  if (startConcurrency === null)
    throw new CliError(
      `${START_CONCURRENCY_VAR} must be a whole number of 1 or more (workers starting at once), got ${JSON.stringify(env[START_CONCURRENCY_VAR])}`,
      2,
    );
  return {
    timings: parseTuning<AgentTimings>(env, "PI_ORCH_TIMINGS"),
    policy: parseTuning<RestartPolicy>(env, "PI_ORCH_RESTART_POLICY"),
    workerNice,
    startConcurrency,
  };
}

function parseTuning<T>(env: NodeJS.ProcessEnv, name: string): Partial<T> | undefined {
  const text = env[name];
  if (text === undefined || text.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CliError(
      `${name} is not valid JSON (${(err as Error).message}); expected e.g. {"pingIntervalMs":500}`,
      2,
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new CliError(`${name} must be a JSON object, e.g. {"pingIntervalMs":500}`, 2);
  }
  for (const [k, v] of Object.entries(value)) {
    if (k === "restart") continue;
    if (typeof v !== "number" || !(v >= 0))
      throw new CliError(`${name}.${k} must be a number of milliseconds (or a count), got ${JSON.stringify(v)}`, 2);
  }
  return value as Partial<T>;
}

/** Register `serve`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command("serve")
    .description("run the supervisor in the foreground (other commands start one in the background when needed)")
    .option("--resume", "restart the agents the previous supervisor left running, resuming their sessions")
    .addHelpText(
      "after",
      `
Prints the socket path, then supervises until SIGINT/SIGTERM/SIGHUP or pi-orch shutdown;
every agent is stopped (abort, close stdin, SIGTERM, SIGKILL of its process group) first.

Examples:
  pi-orch serve                      supervise in this terminal; Ctrl-C stops every agent
  pi-orch serve --resume             bring back the agents that were running last time`,
    )
    .action(async (opts: { resume?: boolean }) => {
      let closed: Promise<void> | null = null;
      await runAction(ctx, async () => {
        const home = ctx.home();
        const tuning = tuningFromEnv();
        const { runSupervisorServer } = await import("../serve/supervisor-server.js");
        const server = await runSupervisorServer({
          home,
          resume: opts.resume,
          ...tuning,
          onWarning: (message) => ctx.err(`pi-orch: warning: ${message}`),
        });
        ctx.out(`pi-orch supervisor listening on ${server.socketPath} (pid ${process.pid})`);
        const live = server.supervisor.list().filter((a) => a.status !== "stopped" && a.status !== "failed");
        if (opts.resume)
          ctx.out(
            `resumed ${live.length} agent${live.length === 1 ? "" : "s"}${live.length ? `: ${live.map((a) => a.name).join(", ")}` : ""}`,
          );
        closed = server.closed;
        await closed;
        ctx.out("pi-orch supervisor stopped; every agent is down and the registry is saved");
      });
      // Whatever handles remain (timers of finished teardowns), the supervisor is done.
      if (closed) process.exit(process.exitCode ?? 0);
    });
}
