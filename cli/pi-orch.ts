#!/usr/bin/env node
/**
 * `pi-orch`: run many coding agents at once. Each command lives in `cli/commands/`
 * and registers itself on the program; this file wires the global options.
 */
import { fileURLToPath } from "node:url";
import { Command, CommanderError } from "commander";
import { createContext, type GlobalOptions } from "./context.js";
import { COMMANDS } from "./commands/index.js";
import { packageVersion } from "./version.js";

const program = new Command("pi-orch")
  .description("Run many pi-compatible coding agents at once: spawn, watch, steer, restart, tear down.")
  .version(packageVersion(), "-V, --version", "print the version")
  .option("--home <dir>", "pi-orch home (default $PI_ORCH_HOME or ~/.pi-orch)")
  .option("--no-autostart", "fail instead of starting a supervisor in the background")
  .showHelpAfterError("(run pi-orch --help for usage)")
  .exitOverride();

const ctx = createContext(() => program.opts<GlobalOptions>(), fileURLToPath(import.meta.url));
for (const register of COMMANDS) register(program, ctx);
// A mistake in one command's flags is answered by that command's help, not the program's
// (also for subcommands: pi-orch worktrees rm --help).
const pointAtOwnHelp = (parent: Command, path: string): void => {
  for (const command of parent.commands) {
    const name = `${path} ${command.name()}`;
    command.showHelpAfterError(`(run ${name} --help for usage)`);
    pointAtOwnHelp(command, name);
  }
};
pointAtOwnHelp(program, "pi-orch");

program.addHelpText(
  "after",
  `
Examples:
  pi-orch spawn --name fix-login --prompt "fix the login test"   start an agent (and a supervisor)
  pi-orch list                                                    every agent and its status
  pi-orch attach fix-login                                        follow its transcript live
  pi-orch stop --all && pi-orch shutdown                          stop everything`,
);

program.configureOutput({ writeErr: (s) => process.stderr.write(s) });
try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode =
      err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.exitCode === 0 ? 0 : 2;
  } else {
    process.stderr.write(`pi-orch: unexpected failure: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  }
}
