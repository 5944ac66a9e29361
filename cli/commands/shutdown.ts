/** `pi-orch shutdown`: stop every agent and end the supervisor (never starts one). */
import type { Command } from "commander";
import type { AgentInfo } from "../../shared/schema/agent.js";
import { CliError, runAction, type CliContext } from "../context.js";

/** What a shutdown stopped, and the agents it names that were already down before it. */
export interface ShutdownOutcome {
  stopped: string[];
  alreadyDown: string[];
}

/**
 * Split the supervisor's `named` agents (it names every one) by the list taken just ahead
 * of the shutdown (`before`): those down already were not stopped by it. Pure.
 */
export function shutdownOutcome(
  before: readonly Pick<AgentInfo, "name" | "status">[],
  named: readonly string[],
): ShutdownOutcome {
  const down = new Set(before.filter((a) => a.status === "stopped" || a.status === "failed").map((a) => a.name));
  return { stopped: named.filter((n) => !down.has(n)), alreadyDown: named.filter((n) => down.has(n)) };
}

/** What `shutdown` says: the agents it stopped, leaving out those already down before it. Pure. */
export function shutdownSummary(
  before: readonly Pick<AgentInfo, "name" | "status">[],
  named: readonly string[],
): string {
  const { stopped } = shutdownOutcome(before, named);
  return `supervisor stopped; ${stopped.length ? `stopped ${stopped.length} agent${stopped.length === 1 ? "" : "s"}: ${stopped.join(", ")}` : "no agent was running"}`;
}

/** Register `shutdown`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command("shutdown")
    .description("stop every agent gracefully, save the registry and end the supervisor")
    .option("--json", 'print what was stopped as JSON: {"stopped": [...], "alreadyDown": [...], "running": false}')
    .addHelpText(
      "after",
      `
Agents that were running are recorded as stopped (reason "supervisor exited");
pi-orch serve --resume brings them back with their sessions.

Example:
  pi-orch shutdown`,
    )
    .action((opts: { json?: boolean }) =>
      runAction(ctx, async () => {
        let client;
        try {
          client = await ctx.client({ autostart: false });
        } catch (err) {
          // Without autostart, a CliError is the "no supervisor" answer (as in logs.ts); others are real failures.
          if (err instanceof CliError) {
            if (opts.json) ctx.json({ stopped: [], alreadyDown: [], running: false });
            else ctx.out(`no supervisor is running for ${ctx.home()}; nothing to shut down`);
            return 0;
          }
          throw err;
        }
        const before = await client.list();
        const result = await client.shutdown();
        // The supervisor closes the socket once its teardown is complete.
        await client.closed;
        if (opts.json) ctx.json({ ...shutdownOutcome(before, result.stopped), running: false });
        else ctx.out(shutdownSummary(before, result.stopped));
      }),
    );
}
