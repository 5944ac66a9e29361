/**
 * The faux model's answer to a read, through the built `pi -p` on real files: a read the
 * tool cut (2000 lines or 50 KB) is told with the file's real length, not the count of
 * lines that came back plus the tool's notice.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../support/rpc-worker.js";

const PI = resolve(import.meta.dirname, "../../dist/cli/pi.js");
const dirs: { path: string; cleanup: () => void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

function fauxRead(name: string, content: string): string {
  const dir = tempDir();
  dirs.push(dir);
  writeFileSync(join(dir.path, name), content);
  const r = spawnSync(
    process.execPath,
    [PI, "-p", "--provider", "faux", "--no-session", "--home", join(dir.path, "home"), `read ${name}`],
    { cwd: dir.path, encoding: "utf8", timeout: 30_000 },
  );
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.split("\n")[0]!;
}

describe("the faux model reading a file", () => {
  it.each([
    { what: "a short file", name: "short.txt", content: "a\nb\nc", want: "short.txt has 3 lines:" },
    { what: "one line", name: "one.txt", content: "only", want: "one.txt has 1 line:" },
    {
      what: "past the 2000-line cut",
      name: "long.txt",
      content: Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join("\n"),
      want: "long.txt has 3000 lines; lines 1-2000 came back:",
    },
    {
      what: "past the 50 KB cut",
      name: "wide.txt",
      content: Array.from({ length: 1000 }, () => "x".repeat(99)).join("\n"),
      want: "wide.txt has 1000 lines; lines 1-512 came back:",
    },
  ])("$what", ({ name, content, want }) => {
    expect(fauxRead(name, content)).toBe(want);
  });
});
