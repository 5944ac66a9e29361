/**
 * Git worktrees for agents: one worktree per agent on its own branch, under
 * `<worktrees dir>/<repo name>-<short hash of the repo path>/<agent name>`, so two
 * repositories with the same name never share a folder. Everything goes through
 * the real `git` binary; nothing of git is re-implemented here.
 */
import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmdirSync,
  rmSync,
  statSync,
  utimesSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { execa } from "execa";
import { OrchError } from "./errors.js";
import type { WorktreeInfo, WorktreeOwner, WorktreeRequest } from "../shared/schema/agent.js";

/** Where a new worktree goes and which repository it belongs to. */
export interface CreateWorktreeOptions extends WorktreeRequest {
  /** Folder that holds every worktree (`$PI_ORCH_HOME/worktrees`). */
  worktreesDir: string;
  /** A folder inside the repository; the agent's cwd is the same folder inside the worktree. */
  cwd: string;
  /** Agent name: the worktree's folder name and the default branch suffix. */
  name: string;
}

/** A created worktree and the agent's working directory inside it. */
export interface CreatedWorktree {
  worktree: WorktreeInfo;
  cwd: string;
  /** It was left by an earlier run and is used as it was (`existing: "reuse"`). */
  reused: boolean;
}

/** A worktree found on disk under the worktrees folder, with what its branch records. */
export interface FoundWorktree extends WorktreeInfo {
  /** The folder name: the agent's or task's name. */
  name: string;
  /** Who made it; null for a worktree made before owners were recorded. */
  owner: WorktreeOwner | null;
}

interface GitResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

// Variables a git hook or a wrapping script may set; they would point our git at another repository or index.
const INHERITED_GIT_VARS = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_OBJECT_DIRECTORY",
  "GIT_COMMON_DIR",
  "GIT_PREFIX",
];

async function git(cwd: string, args: string[], env: Record<string, string> = {}): Promise<GitResult> {
  const base: Record<string, string | undefined> = { ...process.env };
  for (const name of INHERITED_GIT_VARS) delete base[name];
  const result = await execa("git", args, {
    cwd,
    env: { ...base, ...env },
    extendEnv: false,
    reject: false,
    stripFinalNewline: true,
  });
  if (result.failed && result.exitCode === undefined) {
    throw new OrchError(
      "internal",
      `could not run git (${result.shortMessage}); install git and make sure it is on PATH`,
    );
  }
  return {
    exitCode: result.exitCode ?? 1,
    stdout: String(result.stdout ?? ""),
    stderr: String(result.stderr ?? "").trim(),
  };
}

async function gitOk(cwd: string, args: string[], what: string, env: Record<string, string> = {}): Promise<string> {
  const r = await git(cwd, args, env);
  if (r.exitCode !== 0)
    throw new OrchError("internal", `${what} failed: git ${args.join(" ")}: ${r.stderr || `exit code ${r.exitCode}`}`);
  return r.stdout;
}

// Another git process (an agent's own commit, a second pi-orch run in the same repository)
// may hold .git/config.lock for a moment; git gives up at once, so a write waits its turn.
const CONFIG_LOCK_WAIT_MS = 3_000;

/** `git config KEY VALUE`, retried while another process holds the config lock. */
async function setConfig(repo: string, key: string, value: string, what: string): Promise<void> {
  const deadline = Date.now() + CONFIG_LOCK_WAIT_MS;
  for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
    const r = await git(repo, ["config", key, value]);
    if (r.exitCode === 0) return;
    const locked = /could not lock config file/i.test(r.stderr);
    if (locked && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, delay + Math.random() * delay));
      continue;
    }
    const config = locked ? (await git(repo, ["rev-parse", "--path-format=absolute", "--git-common-dir"])).stdout : "";
    const next = locked
      ? `; another git process held ${join(config, "config.lock")} for ${CONFIG_LOCK_WAIT_MS / 1000} s: if none is running, delete that file and retry`
      : "";
    throw new OrchError(
      "internal",
      `${what} failed: git config ${key} ${value}: ${r.stderr || `exit code ${r.exitCode}`}${next}`,
    );
  }
}

// git worktree add/remove of one repository touch shared files (.git/worktrees, refs); run them one at a time.
const repoQueues = new Map<string, Promise<unknown>>();

function serialized<T>(repo: string, fn: () => Promise<T>): Promise<T> {
  const previous = repoQueues.get(repo) ?? Promise.resolve();
  const next = previous.then(fn, fn);
  const settled = next.catch(() => {});
  repoQueues.set(repo, settled);
  void settled.then(() => {
    if (repoQueues.get(repo) === settled) repoQueues.delete(repo);
  });
  return next;
}

/** The top folder of the repository that contains `cwd` (symlinks resolved); throws `invalid` outside one. */
export async function findRepository(cwd: string): Promise<string> {
  const r = await git(cwd, ["rev-parse", "--show-toplevel"]);
  if (r.exitCode !== 0 || r.stdout === "") {
    throw new OrchError(
      "invalid",
      `--worktree needs a git repository, but ${cwd} is not inside one; run it from a repository (or git init one), or drop --worktree`,
    );
  }
  return realpathSync(r.stdout);
}

/** `<repo name>-<8 hex of sha256(repo path)>`: the per-repository folder under the worktrees dir. */
export function repoFolderName(repo: string): string {
  const hash = createHash("sha256").update(repo).digest("hex").slice(0, 8);
  return `${basename(repo) || "repo"}-${hash}`;
}

/** Path of an agent's worktree. Pure. */
export function worktreePath(worktreesDir: string, repo: string, name: string): string {
  return join(worktreesDir, repoFolderName(repo), name);
}

/**
 * Create the branch and its worktree for an agent. Refuses (`invalid`/`exists`) when
 * `cwd` is not in a repository, the repository has no commit, the base does not
 * resolve, or the branch or folder already exists; nothing is created then.
 */
export async function createWorktree(opts: CreateWorktreeOptions): Promise<CreatedWorktree> {
  const repo = await findRepository(opts.cwd);
  const branch = opts.branch ?? `pi-orch/${opts.name}`;
  const baseRef = opts.base ?? "HEAD";
  const rev = await git(repo, ["rev-parse", "--verify", "--quiet", `${baseRef}^{commit}`]);
  if (rev.exitCode !== 0) {
    throw new OrchError(
      "invalid",
      baseRef === "HEAD"
        ? `the repository ${repo} has no commit yet, so there is nothing to branch from; make a first commit`
        : `--base "${baseRef}" is not a commit in ${repo}; pass a branch, tag or commit that exists`,
    );
  }
  const base = rev.stdout;
  if ((await git(repo, ["check-ref-format", "--branch", branch])).exitCode !== 0) {
    throw new OrchError("invalid", `"${branch}" is not a valid branch name; pick another with --branch`);
  }
  const path = worktreePath(opts.worktreesDir, repo, opts.name);
  const owner = opts.owner ?? "agent";
  const inside = relative(repo, safeRealpath(opts.cwd));
  const cwdIn = (root: string) => {
    const sub = inside && !inside.startsWith("..") && !isAbsolute(inside) ? join(root, inside) : root;
    return existsSync(sub) ? sub : root;
  };
  return serialized(repo, async () => {
    const branchExists = (await git(repo, ["show-ref", "--verify", "--quiet", `refs/heads/${branch}`])).exitCode === 0;
    const folderExists = existsSync(path);
    if (branchExists || folderExists) {
      const recorded = await branchRecord(repo, branch);
      const ours =
        owner === "run" && recorded.owner === "run" && (opts.existing === "reuse" || opts.existing === "replace");
      const made = recorded.base !== null || recorded.owner !== null;
      if (!ours) throw leftoverError(repo, branch, path, folderExists, owner, made);
      if (opts.existing === "reuse") {
        if (!recorded.base) throw leftoverError(repo, branch, path, folderExists, owner, made);
        if (!folderExists)
          await gitOk(repo, ["worktree", "add", "--quiet", path, branch], `restoring the worktree of "${opts.name}"`);
        else if ((await git(path, ["symbolic-ref", "--quiet", "--short", "HEAD"])).stdout !== branch) {
          throw new OrchError(
            "exists",
            `the worktree folder ${path} is not on branch ${branch}; remove it with pi-orch worktrees rm ${opts.name} --force`,
          );
        }
        return { worktree: { path, branch, base: recorded.base, repo }, cwd: cwdIn(path), reused: true };
      }
      await removeLeftover(repo, branch, path, folderExists, branchExists);
    }
    mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 });
    await gitOk(
      repo,
      ["worktree", "add", "--quiet", "-b", branch, path, base],
      `creating the worktree of "${opts.name}"`,
    );
    // Kept in the branch's own config section, which `git branch -D` removes with it.
    try {
      await setConfig(repo, `branch.${branch}.piOrchBase`, base, `recording the base of ${branch}`);
      await setConfig(repo, `branch.${branch}.piOrchOwner`, owner, `recording the owner of ${branch}`);
    } catch (err) {
      // Unrecorded, the branch would look like the user's own and block the next run.
      await removeLeftover(repo, branch, path, true, true).catch(() => {});
      throw err;
    }
    return { worktree: { path, branch, base, repo }, cwd: cwdIn(path), reused: false };
  });
}

/** The base and owner recorded with a branch by `createWorktree`. */
async function branchRecord(
  repo: string,
  branch: string,
): Promise<{ base: string | null; owner: WorktreeOwner | null }> {
  const read = async (key: string) => {
    const r = await git(repo, ["config", "--get", `branch.${branch}.${key}`]);
    return r.exitCode === 0 && r.stdout !== "" ? r.stdout : null;
  };
  const owner = await read("piOrchOwner");
  return { base: await read("piOrchBase"), owner: owner === "run" || owner === "agent" ? owner : null };
}

/**
 * Why a worktree cannot be made, and the commands that clear the way. A branch pi-orch
 * did not make (`ours` false: the user's own, such as main) is never offered for deletion.
 */
function leftoverError(
  repo: string,
  branch: string,
  path: string,
  folderExists: boolean,
  owner: WorktreeOwner,
  ours: boolean,
): OrchError {
  const what = folderExists ? `the worktree ${path} (branch ${branch})` : `branch "${branch}"`;
  if (!folderExists && !ours) {
    const next = owner === "run" ? "rename the task" : "pick another --branch (or --name)";
    return new OrchError("exists", `${what} already exists and was not made by pi-orch; ${next}`);
  }
  const clear = folderExists
    ? `remove it with git worktree remove --force ${path} && git -C ${repo} branch -D ${branch}`
    : `delete it with git -C ${repo} branch -D ${branch}`;
  const next =
    owner === "run"
      ? `it was not left by pi-orch run, so it stays; rename the task, or ${clear}`
      : `pick another --name (or --branch), or ${clear}`;
  return new OrchError("exists", `${what} already exists; ${next}`);
}

/** Remove an earlier run's worktree folder and branch (changes included). */
async function removeLeftover(
  repo: string,
  branch: string,
  path: string,
  folderExists: boolean,
  branchExists: boolean,
): Promise<void> {
  if (folderExists) {
    const r = await git(repo, ["worktree", "remove", "--force", path]);
    if (r.exitCode !== 0) rmSync(path, { recursive: true, force: true });
  }
  await git(repo, ["worktree", "prune"]);
  if (branchExists) await gitOk(repo, ["branch", "-D", branch], `deleting the earlier run's branch ${branch}`);
}

/**
 * Every worktree folder under `worktreesDir` (`<repo folder>/<name>`), with its branch,
 * repository and the base and owner its branch records. Folders git no longer knows are skipped.
 */
export async function findWorktrees(worktreesDir: string): Promise<FoundWorktree[]> {
  if (!existsSync(worktreesDir)) return [];
  const found: FoundWorktree[] = [];
  for (const repoDir of readdirSync(worktreesDir, { withFileTypes: true })) {
    if (!repoDir.isDirectory()) continue;
    for (const entry of readdirSync(join(worktreesDir, repoDir.name), { withFileTypes: true })) {
      const path = join(worktreesDir, repoDir.name, entry.name);
      if (!entry.isDirectory() || !existsSync(join(path, ".git"))) continue;
      const common = await git(path, ["rev-parse", "--path-format=absolute", "--git-common-dir"]);
      const head = await git(path, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
      if (common.exitCode !== 0 || head.exitCode !== 0) continue;
      const repo = dirname(common.stdout);
      const recorded = await branchRecord(repo, head.stdout);
      const base = recorded.base ?? (await git(repo, ["merge-base", "HEAD", head.stdout])).stdout;
      found.push({ name: entry.name, path, branch: head.stdout, base, repo, owner: recorded.owner });
    }
  }
  return found.sort((a, b) => a.path.localeCompare(b.path));
}

/** The per-repository folder goes with its last worktree. */
function removeIfEmpty(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // not empty, or already gone
  }
}

function safeRealpath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** Whether the worktree has uncommitted changes (tracked or untracked); a missing folder is clean. */
export async function worktreeDirty(wt: WorktreeInfo): Promise<boolean> {
  if (!existsSync(wt.path)) return false;
  const out = await gitOk(
    wt.path,
    ["status", "--porcelain", "--untracked-files=all"],
    `checking the worktree ${wt.path}`,
  );
  return out.trim() !== "";
}

/**
 * Run `fn` with an index that holds the whole worktree (tracked changes and untracked
 * files, ignored ones left out), so a plain `git diff --cached BASE` shows every change.
 * The worktree's own index is never touched: a copy is used and deleted.
 */
async function withWholeTreeIndex<T>(wt: WorktreeInfo, fn: (env: Record<string, string>) => Promise<T>): Promise<T> {
  const indexOut = await gitOk(wt.path, ["rev-parse", "--git-path", "index"], `reading the worktree ${wt.path}`);
  const index = resolve(wt.path, indexOut);
  const dir = mkdtempSync(join(tmpdir(), "pi-orch-index-"));
  try {
    const env = { GIT_INDEX_FILE: join(dir, "index") };
    if (existsSync(index)) {
      copyFileSync(index, env.GIT_INDEX_FILE);
      // git trusts an entry's stat data only when the file is older than the index; a copy with
      // a fresh mtime would hide same-size edits made in the index's second ("racy git").
      const { atime, mtime } = statSync(index);
      utimesSync(env.GIT_INDEX_FILE, atime, mtime);
    }
    await gitOk(wt.path, ["add", "--all", "--", "."], `collecting the changes of ${wt.path}`, env);
    return await fn(env);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function assertWorktreeExists(wt: WorktreeInfo): void {
  if (!existsSync(wt.path)) {
    throw new OrchError(
      "not_found",
      `the worktree ${wt.path} no longer exists (branch ${wt.branch} may still hold committed work)`,
    );
  }
}

/** What `diffWorktree` prints. */
export interface DiffOptions {
  /** `git diff --stat` instead of the patch. */
  stat?: boolean;
  /** ANSI colours (git's own). */
  color?: boolean;
}

/** The worktree's changes against its base (commits, staged, unstaged and untracked files), as git prints them. */
export async function diffWorktree(wt: WorktreeInfo, opts: DiffOptions = {}): Promise<string> {
  assertWorktreeExists(wt);
  const out = await withWholeTreeIndex(wt, (env) =>
    gitOk(
      wt.path,
      [
        "diff",
        "--cached",
        opts.color ? "--color=always" : "--no-color",
        ...(opts.stat ? ["--stat"] : []),
        wt.base,
        "--",
      ],
      `diffing ${wt.path}`,
      env,
    ),
  );
  // `git()` strips the final newline; a patch without it is refused by `git apply`.
  return out === "" ? out : `${out}\n`;
}

/** Paths (relative to the repository) that differ from the base, untracked files included, sorted. */
export async function changedFiles(wt: WorktreeInfo): Promise<string[]> {
  assertWorktreeExists(wt);
  const out = await withWholeTreeIndex(wt, (env) =>
    gitOk(
      wt.path,
      ["diff", "--cached", "--name-only", "--no-renames", "-z", wt.base, "--"],
      `listing the changes of ${wt.path}`,
      env,
    ),
  );
  return out
    .split("\0")
    .filter((p) => p !== "")
    .sort();
}

/** How `removeWorktree` treats the branch: keep it, delete it, or delete it only when it holds no commit past the base. */
export type DeleteBranch = boolean | "if-no-commits";

/**
 * Remove the worktree folder (with `force`, also when it has uncommitted changes),
 * then the branch as asked. A folder deleted by hand is pruned from git's list.
 * Resolves with whether the branch was deleted.
 */
export async function removeWorktree(
  wt: WorktreeInfo,
  opts: { force?: boolean; deleteBranch?: DeleteBranch } = {},
): Promise<{ branchDeleted: boolean }> {
  if (!existsSync(wt.repo)) {
    rmSync(wt.path, { recursive: true, force: true });
    return { branchDeleted: false };
  }
  return serialized(wt.repo, async () => {
    if (existsSync(wt.path)) {
      const r = await git(wt.repo, ["worktree", "remove", ...(opts.force ? ["--force"] : []), wt.path]);
      if (r.exitCode !== 0) {
        throw new OrchError(
          "busy",
          `could not remove the worktree ${wt.path}: ${r.stderr}${opts.force ? "" : "; pass --force to discard its changes"}`,
        );
      }
    } else {
      await git(wt.repo, ["worktree", "prune"]);
    }
    removeIfEmpty(dirname(wt.path));
    let remove = opts.deleteBranch === true;
    if (opts.deleteBranch === "if-no-commits") {
      const tip = await git(wt.repo, ["rev-parse", "--verify", "--quiet", `refs/heads/${wt.branch}`]);
      remove = tip.exitCode === 0 && tip.stdout === wt.base;
    }
    if (!remove) return { branchDeleted: false };
    const r = await git(wt.repo, ["branch", "-D", wt.branch]);
    if (r.exitCode !== 0 && opts.deleteBranch === true) {
      throw new OrchError(
        "internal",
        `removed the worktree ${wt.path} but could not delete branch ${wt.branch}: ${r.stderr}`,
      );
    }
    return { branchDeleted: r.exitCode === 0 };
  });
}
