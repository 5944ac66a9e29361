/** `pi-orch shutdown`: stop every agent and end the supervisor (never starts one). */
import type { Command } from "commander";
import type { AgentInfo } from "../../shared/schema/agent.js";
import { CliError, runAction, type CliContext } from "../context.js";

/**
 * What `shutdown` says: the agents it stopped, leaving out those already down before it
 * (`before`, the list taken just ahead of it; the supervisor names every agent). Pure.
 */
export function shutdownSummary(before: readonly Pick<AgentInfo, "name" | "status">[], named: readonly string[]): string {
  const down = new Set(before.filter((a) => a.status === "stopped" || a.status === "failed").map((a) => a.name));
  const stopped = named.filter((n) => !down.has(n));
  return `supervisor stopped; ${stopped.length ? `stopped ${stopped.length} agent${stopped.length === 1 ? "" : "s"}: ${stopped.join(", ")}` : "no agent was running"}`;
}

/** Register `shutdown`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command("shutdown")
    .description("stop every agent gracefully, save the registry and end the supervisor")
    .option("--json", "print what was stopped as JSON")
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
            if (opts.json) ctx.json({ stopped: [], running: false });
            else ctx.out(`no supervisor is running for ${ctx.home()}; nothing to shut down`);
            return 0;
          }
          throw err;
        }
        const before = opts.json ? [] : await client.list();
        const result = await client.shutdown();
        // The supervisor closes the socket once its teardown is complete.
        await client.closed;
        if (opts.json) ctx.json({ ...result, running: false });
        else ctx.out(shutdownSummary(before, result.stopped));
      }),
    );
}
