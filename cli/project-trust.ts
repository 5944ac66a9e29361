/**
 * pi 1.6's project trust at start-up, the parts that need more than trust.json: the
 * `defaultProjectTrust` setting (read from the agent directory's settings.json only: a
 * project cannot vouch for itself) and the `project_trust` event, run on the extensions
 * that load before trust is known, the user's and the command line's.
 */
import { readFileSync } from "node:fs";
import { loadExtensions } from "../worker/extensions/loader.js";
import type { ExtensionRunner, ProjectTrustContext } from "../worker/extensions/runner.js";
import type { DefaultProjectTrust, ExtensionTrustDecision } from "../worker/extensions/trust.js";
import { isPackageSourceArg } from "../worker/packages/start.js";
import { projectConfigDir } from "../worker/resources/index.js";
import { loadSettings, userSettingsPath } from "../worker/resources/settings.js";

/**
 * `defaultProjectTrust` of the agent directory's settings.json; "ask" (pi's default) when
 * unset or unreadable. A value that is none of "ask", "always", "never" counts as "ask", as
 * in pi, and is named through `warn` (pi says nothing; a typo should not go unseen).
 */
export function userDefaultProjectTrust(
  home: string,
  warn: (message: string) => void = () => undefined,
): DefaultProjectTrust {
  let value: unknown;
  try {
    value = (JSON.parse(readFileSync(userSettingsPath(home), "utf8")) as { defaultProjectTrust?: unknown })
      .defaultProjectTrust;
  } catch {
    return "ask";
  }
  if (value === "always" || value === "never" || value === "ask") return value;
  if (value !== undefined)
    warn(
      `${userSettingsPath(home)}: defaultProjectTrust ${JSON.stringify(value)} is not "ask", "always" or "never"; using "ask"`,
    );
  return "ask";
}

/** What of the command line the pre-trust load needs. */
export interface PreTrustOptions {
  /** `-e` paths. */
  extension?: string[];
  /** false with `--no-extensions`: only the `-e` paths load. */
  extensions: boolean;
  /** The mode handlers see as `ctx.mode`. */
  mode: "rpc" | "json" | "print" | "tui";
  /** `builtin:NAME` entries of the settings' list, which are not files. */
  isBuiltinEntry: (entry: string) => boolean;
}

/**
 * Load the user's and the command line's extensions (never the project's), ask their
 * `project_trust` handlers, and report each handler that threw through `warn`. These
 * extensions load again for the session once trust is known, as in pi (whose example
 * counts its loads). Nothing to load costs nothing: no jiti, no settings beyond the user's.
 */
export async function askProjectTrust(
  home: string,
  opts: PreTrustOptions,
  warn: (message: string) => void,
): Promise<ExtensionTrustDecision | undefined> {
  const cwd = process.cwd();
  let listed: string[];
  try {
    listed =
      opts.extensions === false
        ? []
        : loadSettings({ home, projectDir: projectConfigDir(cwd), trusted: false }).settings.extensions;
  } catch {
    // A broken settings.json is reported when the session loads it; here it lists nothing.
    listed = [];
  }
  const hooks = await loadExtensions({
    // npm: and git: sources are packages, resolved with the session's extensions (worker/packages/start.ts).
    paths: [...listed, ...(opts.extension ?? [])].filter((p) => !opts.isBuiltinEntry(p) && !isPackageSourceArg(p)),
    home,
    cwd,
    discover: opts.extensions !== false,
    trusted: false,
    // Load failures are reported by the session's own load, which follows.
    emit: () => undefined,
  });
  // Only a runner (some extension loaded) has handlers to ask; by its method, not its class,
  // which is in a file of the worker's bundle that a start without extensions never loads.
  if (!("projectTrust" in hooks)) return undefined;
  const { decision, errors } = await (hooks as ExtensionRunner).projectTrust(trustContext(cwd, opts.mode));
  for (const error of errors) warn(error);
  return decision;
}

/**
 * pi's context for a `project_trust` handler without a terminal to ask on (print, json and
 * rpc modes; ours asks no question in the interactive mode either): dialogs answer as
 * dismissed, notices go to stderr.
 */
function trustContext(cwd: string, mode: PreTrustOptions["mode"]): ProjectTrustContext {
  return {
    cwd,
    mode,
    hasUI: false,
    ui: {
      select: async () => undefined,
      confirm: async () => false,
      input: async () => undefined,
      notify: (message) => void process.stderr.write(`${message}\n`),
    },
  };
}
