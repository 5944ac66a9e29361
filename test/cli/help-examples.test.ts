/**
 * Every command of the built `pi-orch`, subcommands included, shows an example in its
 * --help (the README promises one for each), and a wrong flag points at that command's
 * own help. The commands are read from the help itself, so a new one is covered.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

const BIN = resolve(import.meta.dirname, "../../dist/cli/pi-orch.js");

function help(path: string[]): string {
  const r = spawnSync(process.execPath, [BIN, ...path, "--help"], {
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

/** The command names of a help text's "Commands:" section (aliases and `help` left out). Pure. */
function commandsOf(text: string): string[] {
  const section = text.split("\nCommands:\n")[1]?.split("\n\n")[0] ?? "";
  return section
    .split("\n")
    .map((line) => /^ {2}([a-z][\w-]*)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name !== "help");
}

function allCommands(): string[][] {
  const out: string[][] = [];
  const walk = (path: string[]) => {
    for (const name of commandsOf(help(path))) {
      out.push([...path, name]);
      walk([...path, name]);
    }
  };
  walk([]);
  return out;
}

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error("dist/cli/pi-orch.js is missing: run npm run build first");
});

describe("pi-orch --help of every command", () => {
  it("has an example, subcommands included", () => {
    const commands = allCommands();
    expect(commands).toContainEqual(["spawn"]);
    expect(commands).toContainEqual(["worktrees", "rm"]);
    expect(commands).toContainEqual(["report", "merge"]);
    const without = commands.filter((path) => !/\nExamples?:\n {2}pi-orch /.test(help(path))).map((p) => p.join(" "));
    expect(without).toEqual([]);
  }, 60_000);

  it("points a wrong flag of a subcommand at that subcommand's help", () => {
    const r = spawnSync(process.execPath, [BIN, "worktrees", "rm", "x", "--no-such-flag"], { encoding: "utf8" });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("(run pi-orch worktrees rm --help for usage)");
  });
});
