/**
 * `--package SOURCE` of `pi-orch spawn` and `pi-orch run`: one set of pi packages for a
 * fleet. Each worker gets them as pi's `-e SOURCE` (a run's packages, recorded nowhere),
 * so upstream pi workers load them too; the npm and git ones are installed here first,
 * once, where those workers look for them (`<agent dir>/tmp/extensions/`, the agent dir
 * being the pi-orch home), so ten workers starting together do not install ten times into
 * one folder. A local folder is passed as its absolute path.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { installedPath, installSource } from "../worker/packages/manager.js";
import { parsePackageSource, resolveLocalPath } from "../worker/packages/source.js";
import { CliError } from "./context.js";

/** The sources as workers get them, after installing what is missing; a source that cannot be installed is a CliError. */
export async function prepareFleetPackages(
  sources: readonly string[],
  opts: { home: string; cwd: string; log: (line: string) => void },
): Promise<string[]> {
  const ctx = {
    agentDir: opts.home,
    projectDir: opts.cwd,
    cwd: opts.cwd,
    userHome: homedir(),
    trusted: false,
    output: "capture" as const,
    log: opts.log,
  };
  const prepared: string[] = [];
  for (const source of sources) {
    const parsed = parsePackageSource(source);
    if (parsed.type === "local") {
      const path = resolveLocalPath(parsed.path, opts.cwd, ctx.userHome);
      if (!existsSync(path)) throw new CliError(`--package ${source}: ${path} does not exist`, 2);
      prepared.push(path);
      continue;
    }
    if (!installedPath(source, "temporary", ctx)) {
      opts.log(`pi-orch: installing ${source} for the agents...`);
      try {
        await installSource(parsed, "temporary", ctx);
      } catch (err) {
        throw new CliError(
          `--package ${source} could not be installed: ${(err as Error).message}\ncheck the source (try pi install ${source}), or leave the option out`,
          1,
        );
      }
    }
    prepared.push(source);
  }
  return prepared;
}
