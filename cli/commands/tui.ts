/** `pi-orch tui`: every live agent in a pane, driven from the keyboard. */
import type { Command } from "commander";
import { piOrchCommand } from "../../shared/cli-hint.js";
import { CliError, colorEnabled, runAction, type CliContext } from "../context.js";

/** What the header says starts a supervisor again, for the home given as `--home` (if it was). */
export function reconnectHint(homeFlag: string | undefined): string {
  return `${piOrchCommand("serve", homeFlag)}, or any pi-orch command${homeFlag === undefined ? "" : " with that --home"}, starts one`;
}

/** Register `tui`. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command("tui")
    .description(
      "open the multi-pane terminal UI: one pane per live agent; prompt, steer, abort, stop, restart from the keyboard",
    )
    .addHelpText(
      "after",
      `
Keys: arrows/Tab/1-9 focus, Enter zoom, Esc back, p prompt, s steer, f follow-up,
a abort, x stop, r restart, n new agent, d diff, ? help, q quit (the agents keep running).

Example:
  pi-orch spawn --name a --provider faux && pi-orch tui`,
    )
    .action(() =>
      runAction(ctx, async () => {
        if (!process.stdin.isTTY || !process.stdout.isTTY) {
          throw new CliError(
            "pi-orch tui needs a terminal (stdin and stdout must be a TTY); in scripts use pi-orch list, attach or logs",
            2,
          );
        }
        // React's development build is several times slower; it is chosen when react is first loaded.
        process.env.NODE_ENV ??= "production";
        const [{ runTui }, { IpcClient }] = await Promise.all([import("../tui/run.js"), import("../../ipc/client.js")]);
        await runTui({
          connect: (attempt) =>
            attempt === 0 ? ctx.client() : IpcClient.connect({ home: ctx.home(), homeFlag: ctx.homeFlag() }),
          color: colorEnabled(),
          defaultCwd: process.cwd(),
          home: ctx.home(),
          // Only the first connection starts a supervisor: one that went away (a crash, a shutdown) stays gone until asked.
          reconnectHint: reconnectHint(ctx.homeFlag()),
        });
      }),
    );
}
