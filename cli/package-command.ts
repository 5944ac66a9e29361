/**
 * `pi install | remove | uninstall | update | list`: pi 1.6.0's package commands, with its
 * options, messages and exit codes (package-manager-cli.js), run without starting a
 * session. Ours adds `--json` to each (pi refuses it): the result as one JSON document on
 * stdout, the tools' output on stderr. Updating pi itself is not done here: this pi is
 * pi-orch's worker and is updated with pi-orch.
 */
import { homedir } from "node:os";
import { resolveTrust } from "../worker/extensions/trust.js";
import { userDefaultProjectTrust } from "./project-trust.js";
import { projectConfigDir } from "../worker/resources/index.js";
import { readSettingsPackages } from "../worker/packages/settings-file.js";
import {
  installAndPersist,
  installedPath,
  listConfigured,
  removeAndPersist,
  settingsPathOf,
  updatePackages,
  type PackageContext,
} from "../worker/packages/manager.js";

type Command = "install" | "remove" | "update" | "list";

const USAGE: Record<Command, string> = {
  install: "pi install <source> [-l] [--approve|--no-approve] [--json]",
  remove: "pi remove <source> [-l] [--approve|--no-approve] [--json]",
  update:
    "pi update [source|self|pi] [--self|--extensions|--models|--all] [--extension <source>] [--approve|--no-approve] [--force] [--json]",
  list: "pi list [--approve|--no-approve] [--json]",
};

const HELP: Record<Command, string> = {
  install: `Install a package and add it to settings.

Options:
  -l, --local       Install project-locally (.pi/settings.json)
  -a, --approve     Trust project-local files for this command
  -na, --no-approve Ignore project-local files for this command
  --json            Print the result as JSON (pi-orch's addition)

Examples:
  pi install npm:@foo/bar
  pi install npm:my-pkg@file:/abs/path/my-pkg-1.0.0.tgz
  pi install git:github.com/user/repo
  pi install git:git@github.com:user/repo
  pi install https://github.com/user/repo
  pi install ./local/path`,
  remove: `Remove a package and its source from settings.
Alias: pi uninstall <source> [-l]

Options:
  -l, --local       Remove from project settings (.pi/settings.json)
  -a, --approve     Trust project-local files for this command
  -na, --no-approve Ignore project-local files for this command
  --json            Print the result as JSON (pi-orch's addition)`,
  update: `Update installed packages (pi itself is updated with pi-orch: npm install -g pi-orch).

Options:
  --extensions            Update installed packages only
  --extension <source>    Update one package only
  --all                   Update installed packages (and, in pi, pi itself)
  -a, --approve           Trust project-local files for this command
  -na, --no-approve       Ignore project-local files for this command
  --json                  Print the result as JSON (pi-orch's addition)`,
  list: `List installed packages from user and project settings.

Options:
  -a, --approve      Trust project-local files for this command
  -na, --no-approve  Ignore project-local files for this command
  --json             Print the list as JSON (pi-orch's addition)`,
};

interface Parsed {
  command: Command;
  source?: string;
  local: boolean;
  json: boolean;
  approve?: boolean;
  help: boolean;
  /** update: packages, pi itself, model catalogs. */
  target?: "self" | "extensions" | "all" | "models";
  problem?: string;
}

/** pi's argument rules, one problem reported (the first), as its parser does. */
function parse(args: string[]): Parsed {
  const [raw, ...rest] = args;
  const command: Command = raw === "uninstall" ? "remove" : (raw as Command);
  const out: Parsed = { command, local: false, json: false, help: false };
  const flags = {
    self: false,
    extensions: false,
    models: false,
    all: false,
    extension: undefined as string | undefined,
  };
  const problem = (p: string) => {
    out.problem ??= p;
  };
  const only = (arg: string, ...commands: Command[]) => {
    if (!commands.includes(command)) problem(`Unknown option ${arg} for "${command}".`);
    return commands.includes(command);
  };
  let extra: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === "-h" || arg === "--help") out.help = true;
    else if (arg === "-l" || arg === "--local") out.local = only(arg, "install", "remove") || out.local;
    else if (arg === "--json") out.json = true;
    else if (arg === "-a" || arg === "--approve") out.approve = true;
    else if (arg === "-na" || arg === "--no-approve") out.approve = false;
    else if (arg === "--self" || arg === "--extensions" || arg === "--models" || arg === "--all" || arg === "--force") {
      if (only(arg, "update") && arg !== "--force")
        flags[arg.slice(2) as "self" | "extensions" | "models" | "all"] = true;
    } else if (arg === "--extension") {
      if (!only(arg, "update")) continue;
      const value = rest[i + 1];
      if (!value || value.startsWith("-")) problem(`Missing value for ${arg}.`);
      else if (flags.extension) {
        problem("--extension can only be provided once");
        i++;
      } else {
        flags.extension = value;
        i++;
      }
    } else if (arg.startsWith("-")) problem(`Unknown option ${arg} for "${command}".`);
    else if (out.source === undefined) out.source = arg;
    else extra ??= arg;
  }
  if (extra !== undefined) problem(`Unexpected argument ${extra}.`);
  if (command === "update") {
    const source = out.source;
    if (flags.all && (flags.self || flags.extensions || flags.models || flags.extension))
      problem("--all cannot be combined with --self, --extensions, --models, or --extension");
    if (flags.models) out.target = "models";
    else if (flags.extension) {
      if (source) problem("--extension cannot be combined with a positional source");
      out.source = flags.extension;
      out.target = "extensions";
    } else if (source === "self" || source === "pi") {
      out.source = undefined;
      out.target = flags.extensions ? "all" : "self";
    } else if (source) {
      if (flags.extensions || flags.self || flags.all)
        problem("positional update targets cannot be combined with --self, --extensions, or --all");
      out.target = "extensions";
    } else if (flags.all || (flags.self && flags.extensions)) out.target = "all";
    else if (flags.extensions) out.target = "extensions";
    else out.target = "self";
  }
  return out;
}

/** Where the command's output goes (tests give their own). */
export interface PackageCommandIo {
  cwd: string;
  /** The agent directory. */
  home: string;
  out?: (line: string) => void;
  err?: (line: string) => void;
}

/** Run one package command; resolves to the exit code (0, or 1 on any failure, as pi). */
export async function runPackageCommand(args: string[], io: PackageCommandIo): Promise<number> {
  const out = io.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const err = io.err ?? ((l: string) => process.stderr.write(`${l}\n`));
  const o = parse(args);
  if (o.help) {
    out(`Usage:\n  ${USAGE[o.command]}\n\n${HELP[o.command]}`);
    return 0;
  }
  if (o.problem) {
    err(o.problem);
    err(
      o.problem.startsWith("Unknown option")
        ? `Use "pi --help" or "${USAGE[o.command]}".`
        : `Usage: ${USAGE[o.command]}`,
    );
    return 1;
  }
  if ((o.command === "install" || o.command === "remove") && !o.source) {
    err(`Missing ${o.command} source.`);
    err(`Usage: ${USAGE[o.command]}`);
    return 1;
  }
  // As pi's package commands: the flags, the recorded decision, defaultProjectTrust; extensions are not loaded to ask.
  const trusted = await resolveTrust(io.home, io.cwd, { approve: o.approve }, err, {
    defaultProjectTrust: userDefaultProjectTrust(io.home),
  });
  if (o.local && !trusted) {
    err("Project is not trusted. Use --approve to modify local package config.");
    return 1;
  }
  const log = o.json ? err : out;
  let npmCommand: string[] | undefined;
  try {
    npmCommand = readSettingsPackages(settingsPathOf("user", { agentDir: io.home, projectDir: "" })).raw.npmCommand as
      | string[]
      | undefined;
  } catch (e) {
    err(`Error: ${(e as Error).message}`);
    return 1;
  }
  const ctx: PackageContext = {
    agentDir: io.home,
    projectDir: projectConfigDir(io.cwd),
    cwd: io.cwd,
    userHome: homedir(),
    trusted,
    npmCommand: Array.isArray(npmCommand) ? npmCommand : undefined,
    // With --json, stdout is the JSON document alone.
    output: o.json ? "capture" : "inherit",
    log,
  };
  const scope = o.local ? "project" : "user";
  try {
    switch (o.command) {
      case "install": {
        await installAndPersist(o.source!, scope, ctx);
        if (o.json)
          out(
            JSON.stringify({ installed: o.source, scope, installedPath: installedPath(o.source!, scope, ctx) ?? null }),
          );
        else out(`Installed ${o.source}`);
        return 0;
      }
      case "remove": {
        const removed = await removeAndPersist(o.source!, scope, ctx);
        if (!removed) {
          err(`No matching package found for ${o.source}`);
          return 1;
        }
        if (o.json) out(JSON.stringify({ removed: o.source, scope }));
        else out(`Removed ${o.source}`);
        return 0;
      }
      case "list":
        return list(ctx, o.json, out);
      case "update":
        return await update(o, ctx, out, err);
    }
  } catch (e) {
    err(`Error: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
}

function list(ctx: PackageContext, json: boolean, out: (line: string) => void): number {
  const all = listConfigured(ctx);
  if (json) {
    out(JSON.stringify(all, null, 2));
    return 0;
  }
  if (all.length === 0) {
    out("No packages installed.");
    return 0;
  }
  const group = (title: string, scope: "user" | "project") => {
    const rows = all.filter((p) => p.scope === scope);
    if (rows.length === 0) return;
    if (scope === "project" && all.some((p) => p.scope === "user")) out("");
    out(title);
    for (const p of rows) {
      out(`  ${p.filtered ? `${p.source} (filtered)` : p.source}`);
      if (p.installedPath) out(`    ${p.installedPath}`);
    }
  };
  group("User packages:", "user");
  group("Project packages:", "project");
  return 0;
}

async function update(
  o: Parsed,
  ctx: PackageContext,
  out: (l: string) => void,
  err: (l: string) => void,
): Promise<number> {
  if (o.target === "models") {
    err(
      "pi update --models refreshes pi's downloaded model catalogs; this worker has none (models come from models.json).",
    );
    return 1;
  }
  if (o.target === "self") {
    if (!o.json) out("Extensions are skipped. Run pi update --extensions to update extensions.");
    err("Error: this pi is pi-orch's worker: update it with pi-orch (npm install -g pi-orch).");
    return 1;
  }
  const offline = ["1", "true", "yes"].includes((process.env.PI_OFFLINE ?? "").toLowerCase());
  if (offline) {
    if (o.json) out(JSON.stringify({ updated: [], skipped: "offline" }));
    else out("Skipped package updates (offline mode)");
    return 0;
  }
  const changed = await updatePackages(o.source, ctx);
  if (o.json) out(JSON.stringify({ updated: changed }));
  else if (changed.length === 0)
    out(o.source ? `${o.source} is already up to date` : "Packages are already up to date");
  else {
    out(`Updated ${changed.length} package${changed.length === 1 ? "" : "s"}:`);
    for (const line of changed) out(`  ${line}`);
  }
  if (o.target === "all") {
    err("Error: this pi is pi-orch's worker: update it with pi-orch (npm install -g pi-orch).");
    return 1;
  }
  return 0;
}
