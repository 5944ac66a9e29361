/**
 * The commands that put a package on disk, as pi 1.6.0 runs them: the user's `npm` (or the
 * `npmCommand` setting) with `install SPEC --prefix ROOT --legacy-peer-deps`, so pi's own
 * modules are never installed beside a package, and a real `git clone` (then `npm install`
 * of a cloned package's dependencies). `pi install` shows their output; a worker start
 * keeps it off stdout (the RPC stream) and puts its end in the error.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/** `inherit`: the terminal sees the tools' output; `capture`: kept, and its end goes into a failure's message. */
export type CommandOutput = "inherit" | "capture";

/** How to run npm and where its output goes. */
export interface InstallerOptions {
  /** The `npmCommand` setting: a command and its leading arguments (default `["npm"]`). */
  npmCommand?: readonly string[];
  output: CommandOutput;
}

const OUTPUT_TAIL = 8000;

/** Run a command to its end; rejects with pi's message (`git clone ... failed with code 128`), plus the output's end when captured. */
export function runCommand(
  command: string,
  args: readonly string[],
  opts: { cwd?: string; output: CommandOutput },
): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const capture = opts.output === "capture";
    const child = spawn(command, args, {
      cwd: opts.cwd,
      stdio: capture ? ["ignore", "pipe", "pipe"] : "inherit",
      // Nothing may wait for a password no one can type.
      env: capture ? { ...process.env, GIT_TERMINAL_PROMPT: "0" } : process.env,
    });
    let output = "";
    const append = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-OUTPUT_TAIL);
    };
    child.stdout?.on("data", append);
    child.stderr?.on("data", append);
    child.once("error", (err: NodeJS.ErrnoException) =>
      reject(
        new Error(
          err.code === "ENOENT" ? `${command} is not installed or not on the PATH (${err.message})` : err.message,
        ),
      ),
    );
    child.once("close", (code, signal) => {
      if (code === 0) return resolvePromise();
      const status = code === null ? `signal ${signal ?? "unknown"}` : `code ${code}`;
      const tail = output.trim();
      reject(new Error(`${command} ${args.join(" ")} failed with ${status}${tail ? `:\n${tail}` : ""}`));
    });
  });
}

function npm(opts: InstallerOptions): { command: string; args: string[] } {
  const [command, ...args] = opts.npmCommand && opts.npmCommand.length > 0 ? opts.npmCommand : ["npm"];
  if (!command) throw new Error("Invalid npmCommand: first array entry must be a non-empty command");
  return { command, args };
}

/** The npm project packages go into: created with pi's `package.json` and a `.gitignore` of everything. */
function ensureNpmProject(root: string): void {
  mkdirSync(root, { recursive: true });
  ensureGitIgnore(root);
  const manifest = join(root, "package.json");
  if (!existsSync(manifest))
    writeFileSync(manifest, JSON.stringify({ name: "pi-extensions", private: true }, null, 2), "utf8");
}

function ensureGitIgnore(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const ignore = join(dir, ".gitignore");
  if (!existsSync(ignore)) writeFileSync(ignore, "*\n!.gitignore\n", "utf8");
}

/** `npm install SPECS --prefix ROOT` (peer dependencies left alone: pi's modules come from the worker). */
export async function installNpm(specs: readonly string[], root: string, opts: InstallerOptions): Promise<void> {
  ensureNpmProject(root);
  const { command, args } = npm(opts);
  // npm writes broken nested lock paths when --prefix goes through a symlink.
  const prefix = realpathSync(root);
  await runCommand(
    command,
    [...args, "install", ...specs, "--prefix", prefix, "--legacy-peer-deps", "--no-audit", "--no-fund"],
    opts,
  );
}

/** `npm uninstall NAME --prefix ROOT`; nothing to do when the root was never made. */
export async function uninstallNpm(name: string, root: string, opts: InstallerOptions): Promise<void> {
  if (!existsSync(root)) return;
  const { command, args } = npm(opts);
  await runCommand(
    command,
    [...args, "uninstall", name, "--prefix", realpathSync(root), "--legacy-peer-deps", "--no-audit", "--no-fund"],
    opts,
  );
}

/** Dependencies of a cloned package, without its dev ones or pi's peers. */
async function installGitDependencies(dir: string, opts: InstallerOptions): Promise<void> {
  if (!existsSync(join(dir, "package.json"))) return;
  const { command, args } = npm(opts);
  await runCommand(command, [...args, "install", "--omit=dev", "--legacy-peer-deps", "--no-audit", "--no-fund"], {
    ...opts,
    cwd: dir,
  });
}

/**
 * Clone `repo` into `dir` (at `ref` when given) and install its dependencies; a failed
 * clone leaves no folder behind. An existing clone is brought to `ref` or its upstream instead.
 */
export async function installGit(
  repo: string,
  ref: string | undefined,
  dir: string,
  root: string | undefined,
  opts: InstallerOptions,
): Promise<void> {
  if (existsSync(dir)) return updateGit(dir, ref, opts);
  if (root) ensureGitIgnore(root);
  mkdirSync(dirname(dir), { recursive: true });
  try {
    await runCommand("git", ["clone", repo, dir], opts);
    if (ref) await runCommand("git", ["checkout", ref], { ...opts, cwd: dir });
    await installGitDependencies(dir, opts);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    pruneEmptyParents(dir, root);
    throw err;
  }
}

/** Fetch and hard-reset a clone to `ref`, or to its remote branch; then clean it and install its dependencies. */
export async function updateGit(dir: string, ref: string | undefined, opts: InstallerOptions): Promise<void> {
  const git = (args: string[]) => runCommand("git", args, { ...opts, cwd: dir });
  if (ref) {
    await git(["fetch", "origin", ref]);
    await resetTo(dir, "FETCH_HEAD", opts);
    return;
  }
  // As pi: the branch the clone tracks, else whatever the remote's HEAD is.
  const upstream = await upstreamRef(dir);
  if (upstream) {
    const branch = upstream.slice("origin/".length);
    await git(["fetch", "--prune", "--no-tags", "origin", `+refs/heads/${branch}:refs/remotes/origin/${branch}`]);
    await resetTo(dir, "@{upstream}", opts);
    return;
  }
  await git(["remote", "set-head", "origin", "-a"]).catch(() => undefined);
  await git(["fetch", "--prune", "--no-tags", "origin", "+HEAD:refs/remotes/origin/HEAD"]);
  await resetTo(dir, "origin/HEAD", opts);
}

async function resetTo(dir: string, target: string, opts: InstallerOptions): Promise<void> {
  const [head, wanted] = await Promise.all([revParse(dir, "HEAD"), revParse(dir, `${target}^{commit}`)]);
  if (!wanted)
    throw new Error(`git cannot find ${target} in ${dir}; check the package's ref or remove and install it again`);
  if (head === wanted) return;
  await runCommand("git", ["reset", "--hard", wanted], { ...opts, cwd: dir });
  await runCommand("git", ["clean", "-fdx"], { ...opts, cwd: dir });
  await installGitDependencies(dir, opts);
}

/** The commit a name points to in a clone, or undefined. */
export async function revParse(dir: string, name: string): Promise<string | undefined> {
  if (!existsSync(dir)) return undefined;
  return new Promise((resolvePromise) => {
    const child = spawn("git", ["rev-parse", name], { cwd: dir, stdio: ["ignore", "pipe", "ignore"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.once("error", () => resolvePromise(undefined));
    child.once("close", (code) => resolvePromise(code === 0 ? out.trim() || undefined : undefined));
  });
}

async function upstreamRef(dir: string): Promise<string | undefined> {
  const upstream = await new Promise<string | undefined>((resolvePromise) => {
    const child = spawn("git", ["rev-parse", "--abbrev-ref", "@{upstream}"], {
      cwd: dir,
      stdio: ["ignore", "pipe", "ignore"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.once("error", () => resolvePromise(undefined));
    child.once("close", (code) => resolvePromise(code === 0 ? out.trim() : undefined));
  });
  return upstream?.startsWith("origin/") ? upstream : undefined;
}

/** Delete a clone and the folders above it it leaves empty (up to `root`). */
export function removeGit(dir: string, root: string | undefined): void {
  rmSync(dir, { recursive: true, force: true });
  pruneEmptyParents(dir, root);
}

function pruneEmptyParents(dir: string, root: string | undefined): void {
  if (!root) return;
  const top = resolve(root);
  for (let current = dirname(dir); current.startsWith(top) && current !== top; current = dirname(current)) {
    if (!existsSync(current)) continue;
    if (readdirSync(current).length > 0) break;
    rmSync(current, { recursive: true, force: true });
  }
}
