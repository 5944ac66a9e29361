/**
 * The sandbox's pure parts: the bwrap argv a plan gives (what is writable, hidden, shown
 * again, in which order), the folders a project writes to (a worktree's repository
 * included) and the flags `pi`'s launcher reads before anything loads.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../support/rpc-worker.js";
import { chooseSandbox, sandboxFlags } from "../../cli/sandbox-exec.js";
import { bwrapArgs, insideSandbox, parseSandboxMode, programFolders, projectFolders } from "../../shared/sandbox.js";

const dirs: { path: string; cleanup: () => void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});
function temp(): string {
  const d = tempDir("pi-orch-sbx-unit-");
  dirs.push(d);
  return d.path;
}

/** The mounts of an argv as [flag, target] pairs, in order. */
function mounts(args: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--ro-bind" || args[i] === "--bind" || args[i] === "--dev-bind") out.push([args[i]!, args[i + 2]!]);
    if (args[i] === "--tmpfs" || args[i] === "--dev" || args[i] === "--proc") out.push([args[i]!, args[i + 1]!]);
  }
  return out;
}

describe("bwrapArgs", () => {
  it("puts the read-only root first, then /tmp, the hidden folders, what shows again, and the writable ones last", () => {
    const root = temp();
    const home = join(root, "orch");
    const project = join(root, "proj");
    mkdirSync(join(home, "sessions", "s1"), { recursive: true });
    mkdirSync(join(project, ".git"), { recursive: true });
    writeFileSync(join(home, "models.json"), "{}");
    const args = bwrapArgs({
      mode: "on",
      cwd: join(project),
      writable: [join(home, "sessions", "s1"), join(root, "missing")],
      hidden: [home],
      reveal: [join(home, "models.json"), join(home, "settings.json")],
    });
    expect(args.slice(0, 4)).toEqual(["--unshare-pid", "--die-with-parent", "--cap-drop", "ALL"]);
    expect(mounts(args)).toEqual([
      ["--ro-bind", "/"],
      ["--dev", "/dev"],
      ["--proc", "/proc"],
      ["--bind", "/tmp"],
      ["--tmpfs", home],
      ["--ro-bind", join(home, "models.json")],
      ["--bind", project],
      ["--bind", join(home, "sessions", "s1")],
    ]);
    expect(args.slice(-3)).toEqual(["--chdir", project, "--"]);
  });

  it("strict: a private /tmp and the home's credentials hidden (a file by /dev/null, a folder by a tmpfs)", () => {
    const fakeHome = temp();
    mkdirSync(join(fakeHome, ".ssh"));
    writeFileSync(join(fakeHome, ".netrc"), "machine x password y");
    const project = temp();
    const args = bwrapArgs({ mode: "strict", cwd: project, writable: [], hidden: [], reveal: [] }, fakeHome);
    expect(mounts(args)).toEqual([
      ["--ro-bind", "/"],
      ["--dev", "/dev"],
      ["--proc", "/proc"],
      ["--tmpfs", "/tmp"],
      ["--tmpfs", join(fakeHome, ".ssh")],
      ["--ro-bind", join(fakeHome, ".netrc")],
      ["--bind", project],
    ]);
    expect(args[args.indexOf(join(fakeHome, ".netrc")) - 1]).toBe("/dev/null");
  });
});

describe("projectFolders", () => {
  it("is the git top folder around cwd, and for a worktree also the repository's git folder", () => {
    const root = temp();
    const repo = join(root, "repo");
    mkdirSync(join(repo, ".git", "worktrees", "wt1"), { recursive: true });
    writeFileSync(join(repo, ".git", "worktrees", "wt1", "commondir"), "../..\n");
    mkdirSync(join(repo, "src", "deep"), { recursive: true });
    expect(projectFolders(join(repo, "src", "deep"))).toEqual([repo]);
    const wt = join(root, "wt1");
    mkdirSync(join(wt, "pkg"), { recursive: true });
    writeFileSync(join(wt, ".git"), `gitdir: ${join(repo, ".git", "worktrees", "wt1")}\n`);
    expect(projectFolders(join(wt, "pkg"))).toEqual([wt, join(repo, ".git")]);
    const plain = join(root, "plain");
    mkdirSync(plain);
    // No repository above (the temp folder has none): the folder itself.
    expect(projectFolders(plain)).toEqual([plain]);
  });
});

describe("modes and flags", () => {
  it("parses the modes, knows when it is inside, and reads pi's sandbox flags before anything loads", () => {
    expect(["off", "on", "strict", "ON", "", undefined].map(parseSandboxMode)).toEqual([
      "off",
      "on",
      "strict",
      undefined,
      undefined,
      undefined,
    ]);
    expect(insideSandbox({ PI_ORCH_SANDBOXED: "strict" })).toBe("strict");
    expect(insideSandbox({ PI_ORCH_SANDBOXED: "yes" })).toBeUndefined();
    expect(
      sandboxFlags(["--mode", "rpc", "--sandbox=strict", "--sandbox-write", "/a", "--session-dir", "/s", "task"]),
    ).toEqual({ mode: "strict", writable: ["/a"], dirs: ["/s"], dirKinds: ["session"], readOnly: false });
    expect(sandboxFlags(["--home", "/h", "--session-dir=/s"])).toMatchObject({
      dirs: ["/h", "/s"],
      dirKinds: ["home", "session"],
    });
    expect(sandboxFlags(["--sandbox", "on", "--help"]).readOnly).toBe(true);
    // After `--` nothing is a flag.
    expect(sandboxFlags(["--", "--sandbox", "on"]).mode).toBeUndefined();
  });
});

describe("programFolders", () => {
  it("shows a program under /tmp by the outermost project it is installed in, and nothing outside /tmp", () => {
    // Under /tmp itself (strict's private folder), whatever TMPDIR says.
    const root = mkdtempSync("/tmp/pi-orch-sbx-prog-");
    dirs.push({ path: root, cleanup: () => rmSync(root, { recursive: true, force: true }) });
    const dep = join(root, "pkg", "node_modules", "dep");
    mkdirSync(join(root, "pkg", "dist", "cli"), { recursive: true });
    mkdirSync(dep, { recursive: true });
    writeFileSync(join(root, "pkg", "package.json"), "{}");
    writeFileSync(join(dep, "package.json"), "{}");
    writeFileSync(join(dep, "cli.js"), "");
    writeFileSync(join(root, "pkg", "dist", "cli", "pi.cjs"), "");
    writeFileSync(join(root, "loose.js"), "");
    expect(
      programFolders([
        "/usr/bin/env",
        join(root, "pkg", "dist", "cli", "pi.cjs"),
        join(dep, "cli.js"),
        join(root, "loose.js"),
        "--mode",
        "rpc",
      ]),
    ).toEqual([join(root, "pkg"), join(root, "pkg"), join(root, "loose.js")]);
  });
});

describe("chooseSandbox and PI_ORCH_SANDBOX", () => {
  const flags = (mode?: string) => ({ ...sandboxFlags([]), ...(mode ? { mode } : {}) });
  it("takes off, on and strict from the variable, saying nothing", () => {
    expect(chooseSandbox(flags(), { PI_ORCH_SANDBOX: "strict" })).toEqual({ mode: "strict" });
    expect(chooseSandbox(flags(), { PI_ORCH_SANDBOX: "off" })).toEqual({ mode: "off" });
  });

  it("says so of a value that is no mode, and never runs unboxed for it (a typo of strict)", () => {
    const choice = chooseSandbox(flags("strict"), { PI_ORCH_SANDBOX: "strcit" });
    expect(choice.mode).toBe("strict");
    expect(choice.warning).toBe(
      "pi: PI_ORCH_SANDBOX=strcit is not off, on or strict; using the default (on where bubblewrap works)",
    );
  });
});
