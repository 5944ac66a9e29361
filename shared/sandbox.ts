/**
 * The agent sandbox: bubblewrap (`bwrap`) around a whole worker. A new PID namespace, so
 * every process the agent starts (`setsid` or not) dies with the worker, and
 * `--die-with-parent`, so the worker dies with whoever started it; the root file system
 * read-only, the project (and its git folder) read-write, the supervisor's home hidden
 * but for what the worker itself needs, `/proc` of the sandbox only. `strict` also gives
 * the agent a private `/tmp`, hides the usual credential folders of the home, and cuts
 * the network of the commands the agent runs (the worker keeps its own, for the model).
 * Building the argv is pure; finding and probing bwrap reads the machine once.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";

export const SANDBOX_MODES = ["off", "on", "strict"] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

/** The variable a sandboxed worker finds its mode in (`on` / `strict`): it is inside, do not wrap again. */
export const SANDBOXED_VAR = "PI_ORCH_SANDBOXED";
/** The variable that sets the default mode of `pi`, `spawn` and `run` (`off`, `on`, `strict`). */
export const SANDBOX_DEFAULT_VAR = "PI_ORCH_SANDBOX";

/** `mode` when it is one of SANDBOX_MODES, else undefined. */
export function parseSandboxMode(mode: string | undefined): SandboxMode | undefined {
  return (SANDBOX_MODES as readonly string[]).includes(mode ?? "") ? (mode as SandboxMode) : undefined;
}

/** The mode a sandboxed worker runs in, or undefined outside a sandbox. */
export function insideSandbox(env: NodeJS.ProcessEnv = process.env): "on" | "strict" | undefined {
  const mode = env[SANDBOXED_VAR];
  return mode === "on" || mode === "strict" ? mode : undefined;
}

/** Whether bwrap can run here: its path, or why not and what to do. */
export type SandboxSupport = { ok: true; bwrap: string } | { ok: false; reason: string };

let support: SandboxSupport | undefined;

/**
 * Find bwrap on PATH and start it once with the namespaces a sandbox uses (a few ms);
 * cached for the process. A missing bwrap and user namespaces turned off are told apart.
 */
export function sandboxSupport(env: NodeJS.ProcessEnv = process.env): SandboxSupport {
  if (support) return support;
  const bwrap = onPath("bwrap", env);
  if (!bwrap) {
    support = {
      ok: false,
      reason: "bubblewrap (bwrap) is not installed; install it (Debian/Ubuntu: apt install bubblewrap)",
    };
    return support;
  }
  const probe = spawnSync(
    bwrap,
    ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--die-with-parent", "--", "true"],
    { encoding: "utf8", timeout: 10_000 },
  );
  if (probe.status === 0) support = { ok: true, bwrap };
  else {
    const said = (probe.stderr || probe.error?.message || `exit ${probe.status}`).trim();
    support = {
      ok: false,
      reason: `bwrap cannot create a sandbox here (${said}); user namespaces may be off (sysctl kernel.unprivileged_userns_clone=1, or the AppArmor rule for bwrap)`,
    };
  }
  return support;
}

/** How a strict sandbox starts one command without network: the program and the arguments before the command's own. */
export type NetCut = { ok: true; file: string; args: string[] } | { ok: false; reason: string };

/**
 * The wrapper that gives one command a network namespace of its own (loopback only)
 * inside a strict sandbox. A nested bwrap, except for root: the sandbox drops every
 * capability, and uid 0 without them can neither take bwrap's privileged path nor map
 * itself into a user namespace (Linux 5.12+ wants CAP_SETFCAP for that), so root's
 * commands get `unshare -Un`: a user namespace with no mapping (they show as nobody, file
 * access is unchanged) and a network namespace.
 */
export function netCut(env: NodeJS.ProcessEnv = process.env): NetCut {
  if (process.getuid?.() !== 0) {
    const bwrap = sandboxSupport(env);
    return bwrap.ok ? { ok: true, file: bwrap.bwrap, args: ["--dev-bind", "/", "/", "--unshare-net", "--"] } : bwrap;
  }
  const unshare = onPath("unshare", env);
  return unshare
    ? { ok: true, file: unshare, args: ["-Un", "--"] }
    : { ok: false, reason: "unshare (util-linux) is not installed; root's commands need it to run without network" };
}

/** The first `program` on env's PATH, or undefined. */
export function onPath(program: string, env: NodeJS.ProcessEnv): string | undefined {
  return (env.PATH ?? "")
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, program))
    .find((p) => existsSync(p));
}

/** What one sandbox lets the worker see. */
export interface SandboxPlan {
  mode: "on" | "strict";
  /** The worker's working directory: read-write with its whole project (see projectFolders). */
  cwd: string;
  /** More folders or files read-write (sessions, caches, the user's `--sandbox-write`). */
  writable: string[];
  /** Folders replaced by an empty one (the supervisor's home); what `reveal` names inside them shows again. */
  hidden: string[];
  /** Files or folders shown read-only again inside a hidden folder (models.json, extensions/, ...). */
  reveal: string[];
  /** Files shown read-only in place of others (`copy` at `path`): key files without their keys. */
  replaced?: { path: string; copy: string }[];
}

/** Credential folders of a home that `strict` hides. */
const CREDENTIAL_DIRS = [".ssh", ".aws", ".gnupg", ".config/gcloud", ".kube", ".docker", ".netrc", ".git-credentials"];

/** Caches of the common tool chains, read-write under `on`, so `npm install` and friends work. */
const CACHE_DIRS = [
  ".npm",
  ".cache",
  ".cargo",
  ".rustup",
  ".yarn",
  ".pnpm-store",
  ".local/share/pnpm",
  "go",
  ".m2",
  ".gradle",
];

/** The caches of `home` that exist. */
export function toolCaches(home: string = homedir()): string[] {
  return CACHE_DIRS.map((d) => join(home, d)).filter((p) => existsSync(p));
}

/**
 * The folders a project at `cwd` writes to: its top folder (the nearest parent holding
 * `.git`, else `cwd` itself) and, for a git worktree, the repository's own git folder
 * (commits, refs and the index of a worktree live there). Read from the files, no git run.
 */
export function projectFolders(cwd: string): string[] {
  let dir = resolve(cwd);
  for (;;) {
    const dotGit = join(dir, ".git");
    let stat: ReturnType<typeof statSync> | undefined;
    try {
      stat = statSync(dotGit);
    } catch {
      stat = undefined;
    }
    if (stat?.isDirectory()) return [dir];
    if (stat?.isFile()) {
      // A worktree: `gitdir: <repo>/.git/worktrees/<name>`, whose `commondir` leads to `<repo>/.git`.
      const gitdir = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, "utf8"))?.[1]?.trim();
      if (!gitdir) return [dir];
      const own = resolve(dir, gitdir);
      let common = resolve(own, "../..");
      try {
        common = resolve(own, readFileSync(join(own, "commondir"), "utf8").trim());
      } catch {
        // no commondir: the usual layout above
      }
      return [dir, common];
    }
    const parent = dirname(dir);
    if (parent === dir) return [resolve(cwd)];
    dir = parent;
  }
}

/**
 * What a command under /tmp needs to see to start in `strict`'s private /tmp: for every
 * path of `argv` there that exists (the node binary, the script), the outermost folder
 * below /tmp with a `package.json` (the project it is installed in: a package's
 * dependencies may sit in a `node_modules` above its own folder), else the path itself. Anything outside /tmp is on the read-only root already, and
 * is not shown again: a folder found above it could show what the sandbox hides.
 */
export function programFolders(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (const arg of argv) {
    const path = resolve(arg);
    if (!arg.startsWith("/") || !path.startsWith("/tmp/") || !existsSync(path)) continue;
    let top = path;
    for (let dir = dirname(path); dir !== "/tmp"; dir = dirname(dir))
      if (existsSync(join(dir, "package.json"))) top = dir;
    out.push(top);
  }
  return out;
}

/**
 * bwrap's arguments for `plan`, up to and including `--`. Order matters: a later mount
 * covers an earlier one, so the read-only root comes first, then `/tmp`, the hidden
 * folders, what shows again inside them, and the writable folders last. Paths that do not
 * exist are left out (bwrap refuses to bind them).
 */
export function bwrapArgs(plan: SandboxPlan, home: string = homedir()): string[] {
  // No capabilities: run by root, bwrap keeps them all, and CAP_SYS_ADMIN would let the
  // agent `umount` the tmpfs over the fleet's home (or remount `/` read-write) and see it all.
  const args = [
    "--unshare-pid",
    "--die-with-parent",
    "--cap-drop",
    "ALL",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
  ];
  args.push(...(plan.mode === "strict" ? ["--tmpfs", "/tmp"] : ["--bind", "/tmp", "/tmp"]));
  const hidden = [...plan.hidden];
  if (plan.mode === "strict") hidden.push(...CREDENTIAL_DIRS.map((d) => join(home, d)));
  for (const dir of unique(hidden)) {
    if (!existsSync(dir)) continue;
    // A file (`.netrc`) is covered by an empty one; a folder by an empty tmpfs.
    if (statSync(dir).isDirectory()) args.push("--tmpfs", dir);
    else args.push("--ro-bind", "/dev/null", dir);
  }
  for (const path of unique(plan.reveal)) if (existsSync(path)) args.push("--ro-bind", path, path);
  for (const { path, copy } of plan.replaced ?? []) if (existsSync(copy)) args.push("--ro-bind", copy, resolve(path));
  const writable = [...projectFolders(plan.cwd), ...plan.writable];
  for (const path of unique(writable)) if (existsSync(path)) args.push("--bind", path, path);
  args.push("--chdir", resolve(plan.cwd), "--");
  return args;
}

function unique(paths: string[]): string[] {
  return [...new Set(paths.map((p) => resolve(p)))];
}

/**
 * What of a worker's agent directory shows inside a sandbox that hides the folder around
 * it (a fleet's home): the files and folders the worker reads. The sessions live in a
 * writable folder of their own.
 */
export const AGENT_DIR_ENTRIES = [
  "models.json",
  "settings.json",
  "auth.json",
  "mcp.json",
  "trust.json",
  "keybindings.json",
  "AGENTS.md",
  "SYSTEM.md",
  "APPEND_SYSTEM.md",
  "extensions",
  "skills",
  "prompts",
  "themes",
  // Installed pi packages (worker/packages/locations.ts): the user's, and those of `-e` sources.
  "npm",
  "git",
  "tmp/extensions",
];
