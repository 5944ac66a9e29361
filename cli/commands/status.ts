/** `pi-orch status NAME`: everything known about one agent. */
import type { Command } from "commander";
import { runAction, type CliContext } from "../context.js";
import { agentDetails } from "./format.js";

/** Register `status`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command("status")
    .argument("<agent>", "agent name or unique id prefix")
    .description("show one agent: status and why, pid, restarts, policy, limits, session, last exit")
    .option("--json", "print the agent as JSON")
    .addHelpText(
      "after",
      `
Examples:
  pi-orch status fix-login
  pi-orch status 3fa9 --json`,
    )
    .action((agent: string, opts: { json?: boolean }) =>
      runAction(ctx, async () => {
        const client = await ctx.client();
        try {
          const { withResolvedModel } = await import("./live-model.js");
          const info = await withResolvedModel(client, await client.status(agent));
          if (opts.json) ctx.json(info);
          else ctx.out(agentDetails(info, ctx.color));
        } finally {
          await client.close();
        }
      }),
    );
}
