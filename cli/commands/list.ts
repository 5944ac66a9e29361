/** `pi-orch list`: every agent with its status, pid, restarts, model, cwd and last-seen time. */
import { piOrchCommand } from "../../shared/cli-hint.js";
import type { Command } from "commander";
import { damagedRegistries } from "../../shared/paths.js";
import type { AgentInfo } from "../../shared/schema/agent.js";
import { runAction, type CliContext } from "../context.js";
import { agentTable, fleetLine } from "./format.js";
import { worktreeChangeCounts } from "./worktree-changes.js";

/**
 * The line under the table when agents are down only because their supervisor went
 * (a crash, a reboot, `shutdown`): the next command started a new one, which does not
 * bring them back by itself, so say how. Null when there are none. Pure.
 */
export function supervisorExitNote(
  agents: readonly Pick<AgentInfo, "name" | "status" | "statusReason">[],
): string | null {
  const names = agents
    .filter((a) => a.status === "stopped" && a.statusReason === "supervisor exited")
    .map((a) => a.name);
  if (names.length === 0) return null;
  const one = names.length === 1;
  return (
    `${names.join(", ")} ${one ? "was" : "were"} stopped when the supervisor exited; ` +
    `pi-orch restart ${one ? names[0] : "NAME"} brings ${one ? "it" : "one"} back with its session` +
    (one ? "" : " (all of them: pi-orch shutdown, then pi-orch serve --resume)")
  );
}

/**
 * The line under the table while a damaged `agents.json` a supervisor set aside is still
 * there: the agents listed are the complete records it held; what was cut off is only
 * in that file. Null when there is none.
 */
export function damagedRegistryNote(home: string): string | null {
  const [newest, ...older] = damagedRegistries(home);
  if (!newest) return null;
  return (
    `agents.json was damaged; the agents listed are the complete records it held, the rest is only in ${newest}` +
    (older.length > 0 ? ` (and ${older.length} older damaged cop${older.length === 1 ? "y" : "ies"} beside it)` : "") +
    "; look there for an agent you miss, then delete the file to drop this note"
  );
}

/** Register `list`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command("list")
    .alias("ls")
    .description(
      "list every agent: name, status, state (working, waiting for you, done, failed...), pid, restarts, model, tokens, cost, cwd (or worktree branch and changed files), last seen; then the fleet's totals",
    )
    .option("--json", "print the agents as a JSON array (every field of the registry plus live details)")
    .addHelpText(
      "after",
      `
Statuses: starting, idle, busy, stopping, stopped, backoff (waiting to restart),
unresponsive (missed a ping), stalled (busy but silent), failed (gave up restarting).
States (what it means for you): working, waiting for you (a dialog asks; the line under
the table says what), done (its last run ended well), failed (its last run ended with an
error, or it gave up restarting), stopped, starting, idle (no run yet, or aborted).

Examples:
  pi-orch list
  pi-orch list --json | jq -r '.[] | select(.status=="failed") | .name'
  pi-orch list --json | jq -r '.[] | select(.activity.state=="waiting") | "\\(.name): \\(.activity.message)"'`,
    )
    .action((opts: { json?: boolean }) =>
      runAction(ctx, async () => {
        const client = await ctx.client();
        try {
          const { withResolvedModel } = await import("./live-model.js");
          const listed = await client.list();
          const [agents, changes] = await Promise.all([
            Promise.all(listed.map((a) => withResolvedModel(client, a))),
            worktreeChangeCounts(listed),
          ]);
          const damaged = damagedRegistryNote(ctx.home());
          if (damaged) ctx.err(ctx.color.yellow(`pi-orch: warning: ${damaged}`));
          if (opts.json) {
            ctx.json(
              agents.map((a) =>
                a.worktree ? { ...a, worktree: { ...a.worktree, changedFiles: changes.get(a.name) ?? null } } : a,
              ),
            );
            return;
          }
          if (agents.length === 0)
            ctx.out(`no agents yet; start one with: ${piOrchCommand('spawn --prompt "..."', ctx.homeFlag())}`);
          else {
            ctx.out(agentTable(agents, ctx.color, Date.now(), changes));
            ctx.out(ctx.color.dim(fleetLine(agents)));
            // Why an agent failed is the first thing one asks; the table has no room for it.
            for (const a of agents)
              if (a.status === "failed" && a.statusReason) ctx.out(ctx.color.red(`${a.name}: ${a.statusReason}`));
              else if (a.activity?.state === "waiting")
                ctx.out(
                  ctx.color.yellow(
                    `${a.name} is waiting for you: ${a.activity.message || "a dialog"}; answer it in ${piOrchCommand("tui", ctx.homeFlag())} (${piOrchCommand(`attach ${a.name}`, ctx.homeFlag())} shows it)`,
                  ),
                );
              else if (a.activity?.state === "failed" && a.activity.message)
                ctx.out(ctx.color.red(`${a.name}: its last run failed: ${a.activity.message}`));
            const lost = supervisorExitNote(agents);
            if (lost) ctx.out(ctx.color.dim(lost));
          }
        } finally {
          await client.close();
        }
      }),
    );
}
