/** `pi-orch stop NAME | --all`: stop agents gracefully (their worker process groups end). */
import type { Command } from "commander";
import type { AgentInfo } from "../../shared/schema/agent.js";
import { CliError, runAction, type CliContext } from "../context.js";

/** Statuses with no worker to stop. */
const ENDED: ReadonlySet<string> = new Set(["stopped", "failed"]);

/**
 * What `stop --all` says: the agents it stopped, and apart from them those that were
 * already down before it (`before` is the list taken just ahead of the stop). Pure.
 */
export function stopSummary(before: readonly AgentInfo[], after: readonly AgentInfo[]): string {
  const wasDown = new Set(before.filter((a) => ENDED.has(a.status)).map((a) => a.name));
  const stopped = after.filter((a) => !wasDown.has(a.name)).map((a) => a.name);
  const already = after.filter((a) => wasDown.has(a.name)).map((a) => a.name);
  const main = stopped.length
    ? `stopped ${stopped.length} agent${stopped.length === 1 ? "" : "s"}: ${stopped.join(", ")}`
    : "no running agents to stop";
  return already.length ? `${main} (already down: ${already.join(", ")})` : main;
}

/** Register `stop`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command("stop")
    .argument("[agent]", "agent name or unique id prefix")
    .description("stop an agent (or --all): abort its run, close stdin, then SIGTERM and SIGKILL its process group")
    .option("--all", "stop every agent")
    .option("--json", "print the stopped agent(s) as JSON")
    .addHelpText(
      "after",
      `
A stopped agent keeps its session; pi-orch restart NAME brings it back.

Examples:
  pi-orch stop fix-login
  pi-orch stop --all`,
    )
    .action((agent: string | undefined, opts: { all?: boolean; json?: boolean }) =>
      runAction(ctx, async () => {
        if (opts.all && agent) throw new CliError("give an agent or --all, not both", 2);
        if (!opts.all && !agent) throw new CliError("which agent? give a name (pi-orch stop NAME) or --all", 2);
        const client = await ctx.client();
        try {
          if (opts.all) {
            const before = opts.json ? [] : await client.list();
            const agents = await client.stop({ all: true });
            if (opts.json) ctx.json(agents);
            else ctx.out(stopSummary(before, agents));
          } else {
            const before = opts.json ? null : await client.status(agent!);
            const info = await client.stop(agent!);
            if (opts.json) ctx.json(info);
            else
              ctx.out(
                before && ENDED.has(before.status)
                  ? `${info.name} was already ${before.status}`
                  : `stopped ${info.name}`,
              );
          }
        } finally {
          await client.close();
        }
      }),
    );
}
