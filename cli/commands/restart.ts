/** `pi-orch restart NAME`: restart an agent by hand, resuming its session. */
import type { Command } from "commander";
import { runAction, type CliContext } from "../context.js";
import { colorStatus } from "./format.js";

/** Register `restart`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command("restart")
    .argument("<agent>", "agent name or unique id prefix")
    .description(
      "restart an agent (also a stopped or failed one), resuming its session; its restart history starts over",
    )
    .option("--json", "print the agent as JSON")
    .addHelpText(
      "after",
      `
Examples:
  pi-orch restart fix-login          after it failed, or to pick up a new worker build
  pi-orch restart 3fa9`,
    )
    .action((agent: string, opts: { json?: boolean }) =>
      runAction(ctx, async () => {
        const client = await ctx.client();
        try {
          const info = await client.restart(agent);
          if (opts.json) ctx.json(info);
          else
            ctx.out(
              `restarted ${ctx.color.bold(info.name)} (pid ${info.pid ?? "-"}, ${colorStatus(info.status, ctx.color)})`,
            );
          return info.pid === null ? 1 : 0;
        } finally {
          await client.close();
        }
      }),
    );
}
