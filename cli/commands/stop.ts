/** `pi-orch stop NAME | --all`: stop agents gracefully (their worker process groups end). */
import type { Command } from "commander";
import { CliError, runAction, type CliContext } from "../context.js";

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
            const agents = await client.stop({ all: true });
            if (opts.json) ctx.json(agents);
            else ctx.out(agents.length ? `stopped ${agents.length} agent${agents.length === 1 ? "" : "s"}: ${agents.map((a) => a.name).join(", ")}` : "no agents to stop");
          } else {
            const info = await client.stop(agent!);
            if (opts.json) ctx.json(info);
            else ctx.out(`stopped ${info.name}`);
          }
        } finally {
          await client.close();
        }
      }),
    );
}
