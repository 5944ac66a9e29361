/**
 * Telling a configuration error from a crash at start-up, as a table: each row is the
 * previous exit before ready (if any) and this one, and what follows.
 */
import { describe, expect, it } from "vitest";
import { judgeStartupExit, type StartupFailure } from "../../supervisor/config-error.js";

const exit = (code: number | null, stderrTail = "", over: { signal?: string; spawnError?: string } = {}) => ({
  code,
  signal: over.signal ?? null,
  spawnError: over.spawnError ?? null,
  stderrTail,
  file: "pi",
});
// pi 1.6.0's words, its error line first.
const PROVIDER =
  "Error: --provider requires --model (for example: --provider mock --model <pattern>)\nWarning: No models available.\n  /pi/docs/models.md\n";

describe("judgeStartupExit", () => {
  it.each<{
    name: string;
    previous: StartupFailure | null;
    exit: ReturnType<typeof exit>;
    want: ReturnType<typeof judgeStartupExit>;
  }>([
    {
      name: "a program that cannot be spawned: failed at once",
      previous: null,
      exit: exit(null, "", { spawnError: "spawn nosuch ENOENT" }),
      want: {
        kind: "config_error",
        reason: expect.stringMatching(/^could not start the worker "pi": spawn nosuch ENOENT; is it installed/),
      },
    },
    {
      name: "the usage code 2: failed at once with its last line",
      previous: null,
      exit: exit(2, "usage...\nerror: unknown option --bogus\n"),
      want: { kind: "config_error", reason: "the worker refused its configuration: error: unknown option --bogus" },
    },
    {
      name: "a first exit 1 (pi 1.6.0's --provider without --model): one more start, at once",
      previous: null,
      exit: exit(1, PROVIDER),
      want: { kind: "retry_now", remember: { code: 1, said: PROVIDER.trim() } },
    },
    {
      name: "the same exit 1 again: failed with its words",
      previous: { code: 1, said: PROVIDER.trim() },
      exit: exit(1, PROVIDER),
      want: {
        kind: "config_error",
        reason:
          "the worker exited with code 1 before it was ready, twice with the same error: Error: --provider requires --model (for example: --provider mock --model <pattern>)",
      },
    },
    {
      name: "the same words with another pid or time are the same",
      previous: { code: 1, said: "listen EADDRINUSE #.#.#.#:# (pid #)" },
      exit: exit(1, "listen EADDRINUSE 127.0.0.1:4123 (pid 99)\n"),
      want: { kind: "config_error", reason: expect.stringContaining("twice with the same error: listen EADDRINUSE") },
    },
    {
      name: "twice silent with the same code: failed, saying it said nothing",
      previous: { code: 3, said: "" },
      exit: exit(3, ""),
      want: {
        kind: "config_error",
        reason: "the worker exited with code 3 before it was ready, twice, saying nothing on stderr",
      },
    },
    {
      name: "other words the second time: a crash, the restart policy decides",
      previous: { code: 1, said: "first error" },
      exit: exit(1, "second error\n"),
      want: { kind: "policy", remember: { code: 1, said: "second error" } },
    },
    {
      name: "another code with the same words: the policy decides",
      previous: { code: 1, said: "boom" },
      exit: exit(4, "boom\n"),
      want: { kind: "policy", remember: { code: 4, said: "boom" } },
    },
    {
      name: "killed by a signal: not its configuration, nothing remembered",
      previous: { code: 1, said: "boom" },
      exit: exit(null, "boom\n", { signal: "SIGKILL" }),
      want: { kind: "policy", remember: null },
    },
  ])("$name", ({ previous, exit: e, want }) => {
    expect(judgeStartupExit(previous, e)).toEqual(want);
  });
});
