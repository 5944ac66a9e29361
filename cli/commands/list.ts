/** `pi-orch list`: every agent with its status, pid, restarts, model, cwd and last-seen time. */
import type { Command } from "commander";
import type { IpcClient } from "../../ipc/client.js";
import { RUNNING_STATUSES, type AgentInfo } from "../../shared/schema/agent.js";
import { runAction, type CliContext } from "../context.js";
import { agentTable } from "./format.js";
import { worktreeChangeCounts } from "./worktree-changes.js";

/**
 * The model each running worker actually uses (its `get_state`), as the TUI shows it:
 * `faux/faux-1`, not only the `faux` that was asked for. A worker that does not answer
 * within a second keeps what was asked.
 */
async function withLiveModels(client: IpcClient, agents: AgentInfo[]): Promise<AgentInfo[]> {
  return Promise.all(
    agents.map(async (a) => {
      if (!RUNNING_STATUSES.has(a.status)) return a;
      try {
        const state = await client.rpc(a.name, { type: "get_state" }, { timeoutMs: 1000 });
        const model = state.success ? (state.data as { model?: { provider?: unknown; id?: unknown } } | undefined)?.model : undefined;
        if (typeof model?.provider === "string" && typeof model.id === "string") return { ...a, provider: model.provider, model: model.id };
      } catch {
        // gone or slow: what was asked for
      }
      return a;
    }),
  );
}

/** Register `list`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command("list")
    .alias("ls")
    .description("list every agent: name, status, pid, restarts, model, cwd (or worktree branch and changed files), last seen")
    .option("--json", "print the agents as a JSON array (every field of the registry plus live details)")
    .addHelpText(
      "after",
      `
Statuses: starting, idle, busy, stopping, stopped, backoff (waiting to restart),
unresponsive (missed a ping), stalled (busy but silent), failed (gave up restarting).

Examples:
  pi-orch list
  pi-orch list --json | jq -r '.[] | select(.status=="failed") | .name'`,
    )
    .action((opts: { json?: boolean }) =>
      runAction(ctx, async () => {
        const client = await ctx.client();
        try {
          const listed = await client.list();
          const [agents, changes] = await Promise.all([withLiveModels(client, listed), worktreeChangeCounts(listed)]);
          if (opts.json) {
            ctx.json(agents.map((a) => (a.worktree ? { ...a, worktree: { ...a.worktree, changedFiles: changes.get(a.name) ?? null } } : a)));
          } else if (agents.length === 0) ctx.out('no agents yet; start one with: pi-orch spawn --prompt "..."');
          else {
            ctx.out(agentTable(agents, ctx.color, Date.now(), changes));
            // Why an agent failed is the first thing one asks; the table has no room for it.
            for (const a of agents) if (a.status === "failed" && a.statusReason) ctx.out(ctx.color.red(`${a.name}: ${a.statusReason}`));
          }
        } finally {
          await client.close();
        }
      }),
    );
}
