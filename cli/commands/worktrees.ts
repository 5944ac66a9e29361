/**
 * `pi-orch worktrees list|diff|rm`: the worktrees under `$PI_ORCH_HOME/worktrees`, also
 * those a `pi-orch run` kept (for their changes, or `--keep-worktrees`), which no agent
 * owns any more. Works on disk through git; no supervisor needed.
 */
import { join, resolve } from "node:path";
import type { Command } from "commander";
import type { FoundWorktree } from "../../supervisor/worktrees.js";
import { CliError, colorEnabled, runAction, type CliContext } from "../context.js";
import { renderTable, shortPath } from "./format.js";

/** The worktree operations (git through execa): loaded by a subcommand that runs, not by every start. */
const git = () => import("../../supervisor/worktrees.js");

/** The worktree a user named: its folder name (task or agent name) or its path. */
async function pick(ctx: CliContext, ref: string): Promise<FoundWorktree> {
  const { findWorktrees } = await git();
  const all = await findWorktrees(join(ctx.home(), "worktrees"));
  const byPath = all.find((w) => w.path === resolve(ref));
  if (byPath) return byPath;
  const named = all.filter((w) => w.name === ref);
  if (named.length === 1) return named[0];
  if (named.length > 1)
    throw new CliError(
      `several worktrees are named "${ref}": ${named.map((w) => w.path).join(", ")}; give the path instead`,
    );
  throw new CliError(`no worktree named "${ref}" under ${join(ctx.home(), "worktrees")}; see pi-orch worktrees list`);
}

/** Register `worktrees` and its subcommands. */
export function register(program: Command, ctx: CliContext): void {
  const worktrees = program
    .command("worktrees")
    .description("the git worktrees of agents and of earlier runs: list them, see their changes, remove them")
    .addHelpText(
      "after",
      `
A worktree made by pi-orch run stays when its task left changes (or with
--keep-worktrees); a re-run of the task continues in it, run --clean replaces it.

Examples:
  pi-orch worktrees list
  pi-orch worktrees diff edit-greeting | git apply
  pi-orch worktrees rm edit-greeting --force`,
    );

  worktrees
    .command("list")
    .alias("ls")
    .description("every worktree: name, who made it (agent or run), branch, changed files, path")
    .option("--json", "print them as a JSON array")
    .addHelpText(
      "after",
      `
Examples:
  pi-orch worktrees list
  pi-orch worktrees list --json | jq -r '.[] | select(.changedFiles > 0) | .name'`,
    )
    .action((opts: { json?: boolean }) =>
      runAction(ctx, async () => {
        const { changedFiles, findWorktrees } = await git();
        const found = await findWorktrees(join(ctx.home(), "worktrees"));
        const rows = await Promise.all(
          found.map(async (w) => ({ ...w, changedFiles: (await changedFiles(w)).length })),
        );
        if (opts.json) return void ctx.json(rows);
        if (rows.length === 0)
          return void ctx.out("no worktrees; pi-orch spawn --worktree and pi-orch run --worktree make them");
        const body = rows.map((w) => [w.name, w.owner ?? "-", w.branch, String(w.changedFiles), shortPath(w.path)]);
        ctx.out(renderTable(["NAME", "MADE BY", "BRANCH", "CHANGED", "PATH"], body, ctx.color));
      }),
    );

  worktrees
    .command("diff")
    .argument("<name>", "the worktree's name (its task or agent) or its path")
    .description("a worktree's changes against the commit it started from, untracked files included")
    .option("--stat", "a diffstat instead of the patch")
    .option("--json", "print {name, path, branch, base, files, diff} as JSON")
    .addHelpText(
      "after",
      `
Examples:
  pi-orch worktrees diff edit-greeting --stat
  pi-orch worktrees diff edit-greeting | git apply      (apply the changes to this checkout)`,
    )
    .action((ref: string, opts: { stat?: boolean; json?: boolean }) =>
      runAction(ctx, async () => {
        const wt = await pick(ctx, ref);
        const { changedFiles, diffWorktree } = await git();
        if (opts.json) {
          const [files, diff] = await Promise.all([changedFiles(wt), diffWorktree(wt, { stat: opts.stat })]);
          return void ctx.json({ name: wt.name, path: wt.path, branch: wt.branch, base: wt.base, files, diff });
        }
        const text = await diffWorktree(wt, { stat: opts.stat, color: colorEnabled() });
        if (text === "")
          ctx.err(`worktree "${wt.name}" has no changes against ${wt.base.slice(0, 12)} (branch ${wt.branch})`);
        else process.stdout.write(text);
      }),
    );

  worktrees
    .command("rm")
    .argument("<name>", "the worktree's name (its task or agent) or its path")
    .description("remove a worktree an earlier run left, and its branch unless the agent committed on it")
    .option("-f, --force", "also when it has uncommitted changes (they are discarded)")
    .option("--delete-branch", "delete the branch even when it holds commits")
    .addHelpText(
      "after",
      `
An agent's worktree goes with the agent (pi-orch rm NAME), not here.

Examples:
  pi-orch worktrees rm edit-greeting
  pi-orch worktrees rm edit-greeting --force --delete-branch`,
    )
    .action((ref: string, opts: { force?: boolean; deleteBranch?: boolean }) =>
      runAction(ctx, async () => {
        const wt = await pick(ctx, ref);
        const { removeWorktree, worktreeDirty } = await git();
        if (wt.owner !== "run") {
          throw new CliError(
            `the worktree ${wt.path} belongs to an agent; remove it with the agent: pi-orch rm ${wt.name} (or git worktree remove ${wt.path})`,
          );
        }
        if (!opts.force && (await worktreeDirty(wt))) {
          throw new CliError(
            `the worktree ${wt.path} has uncommitted changes; see them with pi-orch worktrees diff ${wt.name}, or pass --force to discard them`,
          );
        }
        const { branchDeleted } = await removeWorktree(wt, {
          force: true,
          deleteBranch: opts.deleteBranch ? true : "if-no-commits",
        });
        ctx.out(
          `removed the worktree ${wt.path}${branchDeleted ? ` and branch ${wt.branch}` : `; branch ${wt.branch} stays (it has commits)`}`,
        );
      }),
    );
}
