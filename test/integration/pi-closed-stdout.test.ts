/**
 * `pi --help | head -1`: a reader that closes the pipe early is its own choice, so the
 * built `pi` exits 0 without a stack trace. The read end is closed before `pi` starts
 * (a bash wrapper waits for it), so every write meets EPIPE; no timing is involved.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { PI } from "../support/orch-cli.js";

let home = "";

beforeAll(() => {
  if (!existsSync(PI)) throw new Error("dist/ is missing: run npm run build first");
});

afterEach(() => {
  if (home) rmSync(home, { recursive: true, force: true });
  home = "";
});

/** Run `pi ARGS` with stdout a pipe nobody reads any more; its exit code and stderr. */
function runWithClosedStdout(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", 'read -r _; exec "$0" "$@"', process.execPath, PI, ...args], {
      stdio: ["pipe", "pipe", "pipe"],
      cwd: home,
      env: { ...process.env, PI_ORCH_HOME: join(home, "home"), ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" },
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr }));
    child.stdout.on("close", () => child.stdin.end("go\n"));
    child.stdout.destroy();
  });
}

describe("pi with a closed stdout", () => {
  it.each([["--help"], ["--list-models"]])(
    "pi %s exits 0 without an EPIPE trace, and leaves no session behind",
    async (flag) => {
      home = mkdtempSync(join(tmpdir(), "pi-closed-stdout-"));
      const r = await runWithClosedStdout([flag]);
      expect(r.stderr).not.toContain("EPIPE");
      expect(r.code).toBe(0);
      expect(existsSync(join(home, "home", "sessions"))).toBe(false);
    },
  );
});
