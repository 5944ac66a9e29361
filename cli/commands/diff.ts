/** `pi-orch diff NAME [--stat]`: an agent's changes in its worktree against the commit it started from. */
import type { Command } from "commander";
import type { AgentInfo } from "../../shared/schema/agent.js";
import { CliError, colorEnabled, runAction, type CliContext } from "../context.js";

/** Register `diff`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command("diff")
    .argument("<agent>", "agent name or unique id prefix")
    .description("show an agent's changes in its worktree against its base, untracked files included")
    .option("--stat", "a diffstat instead of the patch")
    .option("--json", "print {name, worktree, files, diff} as JSON")
    .addHelpText(
      "after",
      `
Works for agents spawned with --worktree. Commits on the agent's branch, staged and
unstaged edits and new files all count; files ignored by .gitignore do not. The
worktree's own index is left as it is.

Examples:
  pi-orch diff fix-login
  pi-orch diff fix-login --stat
  pi-orch diff fix-login | git apply      (apply the changes to this checkout)`,
    )
    .action((agent: string, opts: { stat?: boolean; json?: boolean }) =>
      runAction(ctx, async () => {
        const client = await ctx.client();
        let info: AgentInfo;
        try {
          info = await client.status(agent);
        } finally {
          await client.close();
        }
        const wt = info.worktree;
        if (!wt) {
          throw new CliError(
            `agent "${info.name}" has no worktree (it works in ${info.cwd}); use git diff there, or spawn agents with --worktree`,
          );
        }
        const { changedFiles, diffWorktree } = await import("../../supervisor/worktrees.js");
        if (opts.json) {
          const [files, diff] = await Promise.all([changedFiles(wt), diffWorktree(wt, { stat: opts.stat })]);
          ctx.json({ name: info.name, worktree: wt, files, diff });
          return;
        }
        const text = await diffWorktree(wt, { stat: opts.stat, color: colorEnabled() });
        if (text.trim() === "")
          ctx.err(`agent "${info.name}" has no changes against ${wt.base.slice(0, 12)} (branch ${wt.branch})`);
        else process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
      }),
    );
}
