/** Which line is which: a built-in command, `!cmd` / `!!cmd`, or a prompt; and the `/` completion list. */
import { describe, expect, it } from "vitest";
import { completions, lineIntent } from "../../../cli/tui/slash-commands.js";

describe("lineIntent", () => {
  it.each([
    ["/session", "builtin session "],
    ["/name  my task ", "builtin name my task"],
    ["/compact keep the API notes", "builtin compact keep the API notes"],
    ["/nosuch thing", "prompt"],
    ["list the files", "prompt"],
  ])("%s", (line, want) => {
    const got = lineIntent(line);
    expect(got.kind === "builtin" ? `builtin ${got.command.name} ${got.args}` : got.kind).toBe(want);
  });

  it("tells !cmd (to the model) from !!cmd (kept out of its context)", () => {
    expect(lineIntent("!ls -la")).toMatchObject({ kind: "bash", command: "ls -la", excludeFromContext: false });
    expect(lineIntent("!!git status")).toMatchObject({ kind: "bash", command: "git status", excludeFromContext: true });
  });
});

describe("completions", () => {
  it("lists built-ins and the session's own commands by prefix, built-ins first, each once", () => {
    const own = [
      { name: "sessions-report", description: "(extension)" },
      { name: "session", description: "an extension's own /session" },
    ];
    expect(completions("/sess", own).map((c) => c.name)).toEqual(["session", "sessions-report"]);
    expect(completions("/qu", []).map((c) => c.name)).toEqual(["quit"]);
    expect(completions("list", own)).toEqual([]);
  });

  describe("a built-in this worker cannot do", () => {
    it("gives way to the session's own command of its name", () => {
      const own = [{ name: "mcp", description: "(extension)" }];
      expect(lineIntent("/mcp reconnect probe")).toMatchObject({ kind: "builtin", command: { name: "mcp" } });
      expect(lineIntent("/mcp reconnect probe", own)).toEqual({ kind: "prompt" });
      expect(completions("/mc", own)).toEqual(own);
      expect(lineIntent("/session", [{ name: "session", description: "(extension)" }]).kind).toBe("builtin");
    });
  });
});
