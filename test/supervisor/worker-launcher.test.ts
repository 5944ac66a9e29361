import { describe, expect, it } from "vitest";
import { encodeSpawn, launcherSupport, parseLauncherLine } from "../../supervisor/worker-launcher.js";

describe("the workers' launcher protocol", () => {
  it("frames a spawn as its byte length and NUL-separated fields, arguments counted, the environment last", () => {
    const text = encodeSpawn(7, {
      file: "node",
      args: ["-e", "ü\n", ""],
      cwd: "/tmp",
      env: { A: "1", GONE: undefined, B: "x=y" },
      fd3: true,
    });
    const [len, ...rest] = text.split("\n");
    const payload = rest.join("\n");
    expect(Number(len)).toBe(Buffer.byteLength(payload));
    expect(payload.split("\0")).toEqual(["spawn", "7", "node", "/tmp", "1", "3", "-e", "ü\n", "", "A=1", "B=x=y"]);
  });

  it.each([
    ["ready", { kind: "ready" }],
    ["started 3 1234 5 6 7", { kind: "started", id: 3, pid: 1234, fds: [5, 6, 7] }],
    ["started 3 1234 5 6 7 8\n", { kind: "started", id: 3, pid: 1234, fds: [5, 6, 7, 8] }],
    ["failed 4 2", { kind: "failed", id: 4, errno: 2 }],
    ["exit 1234 3", { kind: "exit", pid: 1234, code: 3 }],
    ["signal 1234 15", { kind: "signal", pid: 1234, signal: "SIGTERM" }],
    ["signal 1234 9", { kind: "signal", pid: 1234, signal: "SIGKILL" }],
    ["started 3 1234", null],
    ["exit x 3", null],
    ["ready 5", null],
    ["hello", null],
  ])("reads the launcher's line %j", (line, parsed) => {
    expect(parseLauncherLine(line)).toEqual(parsed);
  });

  it("is off with PI_ORCH_WORKER_SESSIONS=each, and says why", () => {
    expect(launcherSupport({ ...process.env, PI_ORCH_WORKER_SESSIONS: "each" })).toEqual({
      ok: false,
      reason: "PI_ORCH_WORKER_SESSIONS=each",
    });
    expect(launcherSupport({ ...process.env, PATH: "/nonexistent" })).toMatchObject({ ok: false });
  });
});
