/** `pi-orch rm NAME`: forget an agent (its logs and session files stay on disk). */
import type { Command } from "commander";
import { runAction, type CliContext } from "../context.js";

/** Register `rm`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command("rm")
    .argument("<agent>", "agent name or unique id prefix")
    .description("remove a stopped or failed agent from the registry (--force stops a running one first)")
    .option("-f, --force", "stop the agent first when it is running, and discard uncommitted changes in its worktree")
    .option("--delete-branch", "also delete its worktree's branch (kept by default, for you to merge)")
    .option("--json", "print the removed agent as JSON")
    .addHelpText(
      "after",
      `
Its event log, stderr log and session file stay on disk. An agent with a worktree
loses the worktree folder; rm refuses while it has uncommitted changes (see them with
pi-orch diff) unless --force. Its branch stays unless --delete-branch.

Examples:
  pi-orch rm fix-login
  pi-orch rm --force fix-login
  pi-orch rm --force --delete-branch fix-login`,
    )
    .action((agent: string, opts: { force?: boolean; deleteBranch?: boolean; json?: boolean }) =>
      runAction(ctx, async () => {
        const client = await ctx.client();
        try {
          const info = await client.remove(agent, { force: opts.force, deleteBranch: opts.deleteBranch });
          if (opts.json) ctx.json(info);
          else {
            ctx.out(`removed ${info.name}${info.sessionFile ? ` (its session stays in ${info.sessionFile})` : ""}`);
            if (info.worktree) {
              ctx.out(
                `  removed its worktree ${info.worktree.path}${opts.deleteBranch ? ` and branch ${info.worktree.branch}` : `; branch ${info.worktree.branch} stays`}`,
              );
            }
          }
        } finally {
          await client.close();
        }
      }),
    );
}
