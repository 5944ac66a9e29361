/**
 * A pi package source as `pi install` and the `packages` setting write it, read the way
 * pi 1.6.0 reads it (docs/packages.md, core/package-manager.js): `npm:NAME[@VERSION]`,
 * `git:HOST/PATH[@REF]` or an `https://` / `ssh://` / `git@HOST:` URL, else a local path.
 * Pure: no file system.
 */
import { resolve } from "node:path";

/** `npm:NAME[@VERSION]`; `pinned` when VERSION is one exact version (never updated). */
export interface NpmSource {
  type: "npm";
  /** What follows `npm:` (NAME or NAME@VERSION), as npm is given it. */
  spec: string;
  name: string;
  version?: string;
  pinned: boolean;
}

/** A git repository; `host/path` is its identity, whatever the protocol. */
export interface GitSource {
  type: "git";
  /** The URL `git clone` is given. */
  repo: string;
  host: string;
  /** `owner/repo`, without `.git`. */
  path: string;
  ref?: string;
  pinned: boolean;
}

/** A file (one extension) or folder (a package) on this machine, loaded where it is. */
export interface LocalSource {
  type: "local";
  path: string;
}

/** A parsed package source. */
export type PackageSource = NpmSource | GitSource | LocalSource;

const EXACT_VERSION = /^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

/** Read a source string as pi does: `npm:` first, then a local path unless it names a git URL. */
export function parsePackageSource(source: string): PackageSource {
  const trimmed = source.trim();
  if (trimmed.startsWith("npm:")) {
    const spec = trimmed.slice(4).trim();
    const match = /^(@?[^@]+(?:\/[^@]+)?)(?:@(.+))?$/.exec(spec);
    const name = match?.[1] ?? spec;
    const version = match?.[2];
    return {
      type: "npm",
      spec,
      name,
      ...(version !== undefined ? { version } : {}),
      pinned: version !== undefined && EXACT_VERSION.test(version),
    };
  }
  if (!/^(git:|github:|https?:|ssh:|builtin:)/.test(trimmed)) return { type: "local", path: trimmed };
  return parseGitSource(trimmed) ?? { type: "local", path: trimmed };
}

/**
 * `git:` forms (`git:HOST/PATH[@REF]`, `git:git@HOST:PATH[@REF]`, `git:URL`) and bare
 * `https://`, `ssh://`, `git://` URLs; a `@REF` after the path pins the checkout.
 * Undefined when it names no `HOST/OWNER/REPO`.
 */
function parseGitSource(source: string): GitSource | undefined {
  const prefixed = source.startsWith("git:") && !source.startsWith("git://");
  const url = prefixed ? source.slice(4).trim() : source;
  if (!prefixed && !/^(https?|ssh|git):\/\//i.test(url)) return undefined;
  const scp = /^git@([^:]+):(.+)$/.exec(url);
  if (scp) {
    const { path, ref } = splitRef(scp[2]!);
    return gitSource(`git@${scp[1]}:${path}`, scp[1]!, path, ref);
  }
  if (url.includes("://")) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return undefined;
    }
    const { path, ref } = splitRef(parsed.pathname.replace(/^\/+/, ""));
    parsed.pathname = `/${path}`;
    return gitSource(parsed.toString().replace(/\/$/, ""), parsed.hostname, path, ref);
  }
  const slash = url.indexOf("/");
  if (slash < 0) return undefined;
  const host = url.slice(0, slash);
  if (!host.includes(".") && host !== "localhost") return undefined;
  const { path, ref } = splitRef(url.slice(slash + 1));
  return gitSource(`https://${host}/${path}`, host, path, ref);
}

function splitRef(pathWithRef: string): { path: string; ref?: string } {
  const at = pathWithRef.indexOf("@");
  if (at <= 0 || at === pathWithRef.length - 1) return { path: pathWithRef };
  return { path: pathWithRef.slice(0, at), ref: pathWithRef.slice(at + 1) };
}

function gitSource(repo: string, host: string, rawPath: string, ref: string | undefined): GitSource | undefined {
  const path = rawPath.replace(/\.git$/, "").replace(/^\/+/, "");
  // pi refuses paths that would leave the install folder, and needs OWNER/REPO.
  const unsafe = (part: string) =>
    part.includes("\0") || part.includes("\\") || part.startsWith("/") || part.split("/").includes("..");
  if (!host || host.includes("/") || unsafe(host) || unsafe(path) || path.split("/").length < 2) return undefined;
  return { type: "git", repo, host, path, ...(ref ? { ref } : {}), pinned: ref !== undefined };
}

/**
 * pi's identity of a package, the same for every version or ref: `npm:NAME`,
 * `git:HOST/PATH`, or `local:ABSOLUTE_PATH` (a relative path resolved against `baseDir`,
 * the folder of the settings file that holds it, or the cwd for a command-line source).
 */
export function packageIdentity(source: string, baseDir: string, userHome: string): string {
  const parsed = parsePackageSource(source);
  if (parsed.type === "npm") return `npm:${parsed.name}`;
  if (parsed.type === "git") return `git:${parsed.host}/${parsed.path}`;
  return `local:${resolveLocalPath(parsed.path, baseDir, userHome)}`;
}

/** A local source's absolute path: `~` is the user's home, `file://` a URL, the rest relative to `baseDir`. */
export function resolveLocalPath(path: string, baseDir: string, userHome: string): string {
  const trimmed = path.trim();
  if (trimmed === "~") return userHome;
  if (trimmed.startsWith("~/")) return resolve(userHome, trimmed.slice(2));
  if (trimmed.startsWith("file://")) return new URL(trimmed).pathname;
  return resolve(baseDir, trimmed);
}
