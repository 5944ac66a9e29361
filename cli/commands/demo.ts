/**
 * `pi-orch demo`: the embedded default. A temporary git repository with a small
 * project, its own supervisor and four `faux` agents (no key, no network), each in
 * its own worktree with a different task; then the TUI, or with `--no-tui` a live
 * summary until every agent settles. Everything it made goes away when it ends.
 * Here its flags and help; what it does is in demo-run.ts, loaded when it runs.
 */
import type { Command } from "commander";
import { runAction, type CliContext } from "../context.js";
import type { DemoFlags } from "./demo-run.js";

/** Register `demo`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command("demo")
    .description(
      "see it work in a minute: four faux agents (no key, no network) in their own worktrees of a temporary repo, in the TUI",
    )
    .option("--no-tui", "print a live summary instead of opening the TUI, and exit when every agent has settled")
    .option("--keep", "keep the temporary repository, worktrees and home afterwards (their path is printed)")
    .addHelpText(
      "after",
      `
The demo runs its own supervisor with its own home inside the temporary folder, so it
never touches your agents; quitting (q, Ctrl+C) stops its agents and removes the folder.

Examples:
  pi-orch demo              open the TUI on the four agents; q quits and cleans up
  pi-orch demo --no-tui     a live transcript and a summary table, then exit 0`,
    )
    .action((flags: DemoFlags) => runAction(ctx, async () => (await import("./demo-run.js")).runDemo(ctx, flags)));
}
