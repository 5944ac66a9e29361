/**
 * Listing the files of a tree the way `grep` and `find` see it, with two backends that
 * must agree: ripgrep when it is on the PATH, and a pure-Node walker with our own
 * .gitignore matcher otherwise. Both visit directories depth first with entries sorted
 * by name (rg's `--sort path` order), skip what .gitignore ignores, never enter `.git`
 * or `node_modules`, and do not follow symbolic links.
 */
import { accessSync, constants, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { delimiter, dirname, join, relative, sep } from "node:path";

/** Which search engine to use; `auto` means rg if on the PATH, unless `PI_ORCH_NO_RG=1`. */
export type SearchBackend = "auto" | "rg" | "node";

/** Names never entered or listed, whatever .gitignore says. */
const ALWAYS_SKIPPED = new Set([".git", "node_modules"]);

/** A path relative to `root` with "/" separators, as both backends print it. */
export function toRelative(root: string, path: string): string {
  const rel = relative(root, path);
  return sep === "/" ? rel : rel.split(sep).join("/");
}

// ---------------------------------------------------------------------------------------
// Globs (gitignore flavour: "*" and "?" stop at "/", "**" spans directories, [...], {a,b})

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** Index of the "}" closing the "{" at `open`, or -1. */
function closingBrace(glob: string, open: number): number {
  let depth = 0;
  for (let i = open; i < glob.length; i++) {
    if (glob[i] === "\\") i++;
    else if (glob[i] === "{") depth++;
    else if (glob[i] === "}" && --depth === 0) return i;
  }
  return -1;
}

/** Split "a,b{c,d}" on its top-level commas. */
function splitAlternatives(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < body.length; i++) {
    if (body[i] === "\\") i++;
    else if (body[i] === "{") depth++;
    else if (body[i] === "}") depth--;
    else if (body[i] === "," && depth === 0) {
      parts.push(body.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(body.slice(from));
  return parts;
}

function globSource(glob: string): string {
  let re = "";
  let i = 0;
  while (i < glob.length) {
    const c = glob[i]!;
    if (c === "*") {
      if (glob[i + 1] === "*") {
        const end = i + 2;
        const wholeComponent = (i === 0 || glob[i - 1] === "/") && (end === glob.length || glob[end] === "/");
        if (wholeComponent && end === glob.length) {
          re += ".*";
          i = end;
        } else if (wholeComponent) {
          re += "(?:[^/]*/)*";
          i = end + 1;
        } else {
          // "a**b" is not a directory wildcard; gitignore treats it as "*".
          re += "[^/]*";
          i = end;
        }
        continue;
      }
      re += "[^/]*";
      i++;
    } else if (c === "?") {
      re += "[^/]";
      i++;
    } else if (c === "[") {
      let j = i + 1;
      if (glob[j] === "!" || glob[j] === "^") j++;
      if (glob[j] === "]") j++;
      while (j < glob.length && glob[j] !== "]") j++;
      if (j >= glob.length) {
        re += "\\[";
        i++;
        continue;
      }
      let body = glob.slice(i + 1, j);
      const negated = body.startsWith("!") || body.startsWith("^");
      if (negated) body = body.slice(1);
      re += `[${negated ? "^/" : ""}${body.replace(/[\\\]^]/g, (m) => (m === "]" ? "\\]" : `\\${m}`))}]`;
      i = j + 1;
    } else if (c === "{") {
      const close = closingBrace(glob, i);
      if (close === -1) {
        re += "\\{";
        i++;
        continue;
      }
      re += `(?:${splitAlternatives(glob.slice(i + 1, close))
        .map(globSource)
        .join("|")})`;
      i = close + 1;
    } else if (c === "\\" && i + 1 < glob.length) {
      re += escapeRegExp(glob[i + 1]!);
      i += 2;
    } else {
      re += escapeRegExp(c);
      i++;
    }
  }
  return re;
}

/** A glob as one anchored regular expression over a whole "/"-separated path ("*" stops at "/", "**" spans folders). */
export function globRegExp(glob: string): RegExp {
  return new RegExp(`^${globSource(glob)}$`);
}

/** A compiled path glob. */
export interface PathGlob {
  /** True when the path (relative to the search root, "/" separators) matches. */
  matches(rel: string): boolean;
  /**
   * A name-only glob every match's file name satisfies (e.g. "*.ts" for "src/**\/*.ts"),
   * usable to prefilter in rg with `--type-add`; undefined when there is none.
   */
  nameHint?: string;
}

/**
 * Compile a glob the way gitignore and rg read it: without a "/" it matches the file
 * name at any depth ("*.ts"); with one it is anchored at the search root ("src/**\/*.ts").
 */
export function compileGlob(pattern: string): PathGlob {
  let glob = pattern.startsWith("./") ? pattern.slice(2) : pattern;
  const anchored = glob.includes("/");
  if (glob.startsWith("/")) glob = glob.slice(1);
  const re = new RegExp(`^${globSource(glob)}$`);
  const lastSlash = glob.lastIndexOf("/");
  const name = glob.slice(lastSlash + 1);
  const braceSpansSlash = lastSlash !== -1 && glob.lastIndexOf("{", lastSlash) > glob.lastIndexOf("}", lastSlash);
  const usefulHint = name !== "" && name !== "*" && !name.includes("**") && !/[\\:]/.test(name) && !braceSpansSlash;
  return {
    matches: anchored ? (rel) => re.test(rel) : (rel) => re.test(rel.slice(rel.lastIndexOf("/") + 1)),
    nameHint: usefulHint ? name : undefined,
  };
}

// ---------------------------------------------------------------------------------------
// .gitignore

/** One pattern line of a .gitignore file. */
export interface IgnoreRule {
  re: RegExp;
  negated: boolean;
  dirOnly: boolean;
  /** Pattern without "/": matched against the entry's name, at any depth. */
  nameOnly: boolean;
}

/**
 * Parse a .gitignore: comments, blank lines, `!` negation, `\` escapes, trailing spaces
 * (unless escaped), a trailing "/" for directories only, a leading or inner "/" anchoring
 * the pattern to the file's directory, and `**`.
 */
export function parseGitignore(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split("\n")) {
    let line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line === "" || line.startsWith("#")) continue;
    while (line.endsWith(" ") && !line.endsWith("\\ ")) line = line.slice(0, -1);
    let negated = false;
    if (line.startsWith("!")) {
      negated = true;
      line = line.slice(1);
    } else if (line.startsWith("\\!") || line.startsWith("\\#")) {
      line = line.slice(1);
    }
    let dirOnly = false;
    if (line.endsWith("/") && !line.endsWith("\\/")) {
      dirOnly = true;
      line = line.slice(0, -1);
    }
    if (line === "") continue;
    const nameOnly = !line.includes("/");
    if (line.startsWith("/")) line = line.slice(1);
    try {
      rules.push({ re: new RegExp(`^${globSource(line)}$`), negated, dirOnly, nameOnly });
    } catch {
      // A pattern git cannot use either; skipping it matches rg, which reports and skips.
    }
  }
  return rules;
}

/** The verdict of the last matching rule: true ignored, false re-included, undefined no match. */
export function matchGitignore(rules: readonly IgnoreRule[], rel: string, isDir: boolean): boolean | undefined {
  const name = rel.slice(rel.lastIndexOf("/") + 1);
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i]!;
    if (rule.dirOnly && !isDir) continue;
    if (rule.re.test(rule.nameOnly ? name : rel)) return !rule.negated;
  }
  return undefined;
}

/** The ignore rules of one directory, and how to turn a root-relative path into one relative to it. */
interface IgnoreFrame {
  rules: IgnoreRule[];
  /** For directories inside the tree: length of "dir/" to cut from the root-relative path. */
  cut: number;
  /** For directories above the root: the root's path relative to them, plus "/". */
  prefix: string;
  /** The directory holds `.git`: rules of directories above it no longer apply (as in git and rg). */
  hasGit: boolean;
}

function readRules(dir: string): IgnoreRule[] {
  try {
    return parseGitignore(readFileSync(join(dir, ".gitignore"), "utf8"));
  } catch {
    return [];
  }
}

/** Frames for the directories above `root`, outermost first, up to the enclosing repository's root. */
function ancestorFrames(root: string): IgnoreFrame[] {
  if (existsSync(join(root, ".git"))) return [];
  const frames: IgnoreFrame[] = [];
  let dir = root;
  for (;;) {
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
    const hasGit = existsSync(join(dir, ".git"));
    const rules = readRules(dir);
    if (rules.length > 0 || hasGit) frames.unshift({ rules, cut: 0, prefix: `${toRelative(dir, root)}/`, hasGit });
    if (hasGit) break;
  }
  return frames;
}

function isIgnored(frames: readonly IgnoreFrame[], rel: string, isDir: boolean): boolean {
  for (let f = frames.length - 1; f >= 0; f--) {
    const frame = frames[f]!;
    if (frame.rules.length > 0) {
      const verdict = matchGitignore(frame.rules, frame.prefix + rel.slice(frame.cut), isDir);
      if (verdict !== undefined) return verdict;
    }
    if (frame.hasGit) return false;
  }
  return false;
}

// ---------------------------------------------------------------------------------------
// The pure-Node walker

/** Options of `walkFiles`. */
export interface WalkOptions {
  signal?: AbortSignal;
  /** Called for every file in order; return false to stop the walk. */
  onFile(rel: string, absolute: string): boolean | void;
}

/** Longest stretch of synchronous work before the walker lets the event loop run. */
const SLICE_MS = 8;

/** The error thrown when a search is aborted. */
export function abortError(): Error {
  return new Error("Operation aborted");
}

/**
 * Visit the files under `root` depth first, entries sorted by name, skipping ignored
 * paths. File system calls are synchronous (much faster than the thread pool for many
 * small files), so the walk yields to the event loop every few milliseconds and checks
 * the signal there; `onFile` may do synchronous work of its own.
 */
export async function walkFiles(root: string, options: WalkOptions): Promise<void> {
  const frames = ancestorFrames(root);
  let sliceStart = performance.now();
  let stopped = false;
  const pause = async () => {
    if (performance.now() - sliceStart < SLICE_MS) return;
    await new Promise<void>((done) => setImmediate(done));
    if (options.signal?.aborted) throw abortError();
    sliceStart = performance.now();
  };

  const visit = async (absolute: string, rel: string): Promise<void> => {
    let entries;
    try {
      entries = readdirSync(absolute, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const hasGit = entries.some((e) => e.name === ".git");
    const hasIgnore = entries.some((e) => e.name === ".gitignore" && e.isFile());
    const pushed = hasGit || hasIgnore;
    if (pushed) {
      frames.push({
        rules: hasIgnore ? readRules(absolute) : [],
        cut: rel === "" ? 0 : rel.length + 1,
        prefix: "",
        hasGit,
      });
    }
    for (const entry of entries) {
      if (stopped) break;
      if (ALWAYS_SKIPPED.has(entry.name)) continue;
      const childRel = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!isIgnored(frames, childRel, true)) await visit(join(absolute, entry.name), childRel);
      } else if (entry.isFile()) {
        if (!isIgnored(frames, childRel, false) && options.onFile(childRel, join(absolute, entry.name)) === false) {
          stopped = true;
        }
      }
      await pause();
    }
    if (pushed) frames.pop();
  };

  if (options.signal?.aborted) throw abortError();
  await visit(root, "");
}

// ---------------------------------------------------------------------------------------
// ripgrep

let rgLocation: string | null | undefined;

/** Absolute path of `rg` on the PATH (looked up once), or undefined. */
export function findRg(): string | undefined {
  if (rgLocation === undefined) {
    rgLocation = null;
    for (const dir of (process.env.PATH ?? "").split(delimiter)) {
      if (dir === "") continue;
      const candidate = join(dir, process.platform === "win32" ? "rg.exe" : "rg");
      try {
        accessSync(candidate, constants.X_OK);
        if (statSync(candidate).isFile()) {
          rgLocation = candidate;
          break;
        }
      } catch {
        // Not here; keep looking.
      }
    }
  }
  return rgLocation ?? undefined;
}

/** Settle on a backend: `node` when asked or when `PI_ORCH_NO_RG=1`, else rg when available. */
export function chooseBackend(requested: SearchBackend = "auto"): "rg" | "node" {
  if (requested === "node") return "node";
  if (requested === "rg") {
    if (findRg() === undefined) throw new Error("The rg backend was requested but rg is not on the PATH.");
    return "rg";
  }
  if (process.env.PI_ORCH_NO_RG === "1") return "node";
  return findRg() === undefined ? "node" : "rg";
}

/**
 * rg options that make it see exactly what the Node walker sees: only .gitignore files
 * (no .ignore, .git/info/exclude, global excludes or user config), also outside a git
 * repository, hidden files included, `.git` and `node_modules` never entered, sorted walk.
 */
export function rgWalkArgs(glob: PathGlob | undefined): string[] {
  const args = [
    "--no-config",
    "--hidden",
    "--sort=path",
    "--no-ignore-dot",
    "--no-ignore-exclude",
    "--no-ignore-global",
    "--no-require-git",
    "--glob=!.git",
    "--glob=!node_modules",
  ];
  // Not `--glob`: rg's globs override .gitignore and would bring ignored files back.
  // A file type is applied after .gitignore, so it only narrows; the exact glob is
  // checked on every path rg returns.
  if (glob?.nameHint !== undefined) args.push(`--type-add=piorch:${glob.nameHint}`, "--type=piorch");
  return args;
}

/** How an rg run ended. */
export interface RgExit {
  code: number | null;
  stderr: string;
  /** We stopped it because `onLine` returned false. */
  stopped: boolean;
}

/**
 * Run rg in `cwd` and hand every stdout line to `onLine`; returning false kills rg.
 * Resolves after the process has exited; rejects on abort (after the kill) or spawn error.
 * child_process is imported here, on first use, to keep worker start-up light.
 */
export async function runRg(
  args: string[],
  cwd: string,
  signal: AbortSignal | undefined,
  onLine: (line: string) => boolean | void,
): Promise<RgExit> {
  const rg = findRg();
  if (rg === undefined) throw new Error("rg is not on the PATH.");
  if (signal?.aborted) throw abortError();
  const { spawn } = await import("node:child_process");
  if (signal?.aborted) throw abortError();
  return new Promise<RgExit>((resolvePromise, reject) => {
    const child = spawn(rg, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stopped = false;
    let aborted = false;
    let rest = "";
    let stderr = "";
    const stop = () => {
      if (!stopped) {
        stopped = true;
        child.kill();
      }
    };
    const onAbort = () => {
      aborted = true;
      stop();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      if (stopped) return;
      const lines = (rest + chunk).split("\n");
      rest = lines.pop()!;
      for (const line of lines) {
        if (onLine(line) === false) {
          stop();
          return;
        }
      }
    });
    child.stderr.on("data", (chunk: string) => {
      if (stderr.length < 64 * 1024) stderr += chunk;
    });
    child.on("error", (error) => {
      signal?.removeEventListener("abort", onAbort);
      reject(new Error(`Could not run rg: ${error.message}`));
    });
    child.on("close", (code) => {
      signal?.removeEventListener("abort", onAbort);
      if (aborted) return reject(abortError());
      if (!stopped && rest !== "") onLine(rest);
      resolvePromise({ code, stderr, stopped });
    });
  });
}

/** Path of a match as rg prints it with search path "./", made relative ("./a/b" → "a/b"). */
export function stripDotSlash(path: string): string {
  return path.startsWith("./") ? path.slice(2) : path;
}
