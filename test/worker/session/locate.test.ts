import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  classifySessionStart,
  defaultSessionDir,
  encodeCwd,
  findSessionById,
  isValidSessionId,
  latestSession,
  resolveSessionArg,
  sessionIdFromFileName,
} from "../../../worker/session/locate.js";
import { useTempDir } from "./helpers.js";

const { tmp } = useTempDir();

const HEADER = (id: string, cwd = "/w") =>
  `${JSON.stringify({ type: "session", version: 3, id, timestamp: "t", cwd })}\n`;
const line = (entry: object) => `${JSON.stringify(entry)}\n`;
const OPENING =
  line({ type: "model_change", id: "m", parentId: null, provider: "faux", modelId: "faux-1" }) +
  line({ type: "thinking_level_change", id: "t", parentId: "m", thinkingLevel: "off" });
const USER = line({ type: "message", id: "u", parentId: "t", message: { role: "user", content: "hi", timestamp: 1 } });

/** Write a session file named like ours (a user message after the opening entries unless `body` says), with mtime `seconds` after the epoch. */
function session(dir: string, time: string, id: string, seconds: number, body = OPENING + USER, cwd = "/w"): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${time}_${id}.jsonl`);
  writeFileSync(path, HEADER(id, cwd) + body);
  utimesSync(path, seconds, seconds);
  return path;
}

describe("locating sessions", () => {
  it.each([
    ["/home/me/app", "--home-me-app--"],
    ["/", "----"],
    ["C:\\Users\\me", "--C--Users-me--"],
  ])("encodes cwd %s like pi: %s", (cwd, encoded) => {
    expect(encodeCwd(cwd)).toBe(encoded);
  });

  it("puts sessions under $PI_ORCH_HOME/sessions/<encoded cwd>", () => {
    expect(defaultSessionDir("/home/me/app", "/h")).toBe("/h/sessions/--home-me-app--");
  });

  it("reads the session id out of a file name", () => {
    expect(sessionIdFromFileName("/x/2026-11-30T17-49-42-138Z_01a22d93-ab79.jsonl")).toBe("01a22d93-ab79");
    expect(sessionIdFromFileName("notes.jsonl")).toBeUndefined();
  });

  it.each([
    ["job-42", true],
    ["a", true],
    ["v1.2_x", true],
    ["01a22d93-ab79-7000-8000-000000000000", true],
    ["", false],
    ["-x", false],
    ["x.", false],
    ["bad/id", false],
    ["a b", false],
  ])("a --session-id %j is valid: %s (pi's rule)", (id, valid) => {
    expect(isValidSessionId(id)).toBe(valid);
  });

  it("finds a session by its header's exact id, only for the same cwd (--session-id)", () => {
    const dir = tmp();
    const mine = session(dir, "2026-01-01T00-00-00-000Z", "job-42", 1, OPENING, "/w");
    session(dir, "2026-01-02T00-00-00-000Z", "job-43", 2, OPENING, "/elsewhere");
    expect(findSessionById(dir, "job-42", "/w")).toBe(mine);
    expect(findSessionById(dir, "job-4", "/w")).toBeUndefined();
    expect(findSessionById(dir, "job-43", "/w")).toBeUndefined();
    expect(findSessionById(join(dir, "missing"), "job-42", "/w")).toBeUndefined();
  });

  it("resolves a unique id prefix, and lists candidates when it is ambiguous or unknown", () => {
    const dir = tmp();
    const a = session(dir, "2026-01-01T00-00-00-000Z", "abc12345-0000", 1);
    const b = session(dir, "2026-01-02T00-00-00-000Z", "abd99999-0000", 2);
    expect(resolveSessionArg("abc", dir)).toBe(a);
    expect(resolveSessionArg("ABD9", dir)).toBe(b);
    expect(() => resolveSessionArg("ab", dir)).toThrow(/ambiguous[\s\S]*abc12345-0000[\s\S]*abd99999-0000/);
    expect(() => resolveSessionArg("zz", dir)).toThrow(/no session id starts with "zz"[\s\S]*abc12345/);
    expect(() => resolveSessionArg("zz", join(dir, "missing"))).toThrow(/has no sessions/);
  });

  it("takes anything path-like as a path that must exist", () => {
    const dir = tmp();
    const a = session(dir, "2026-01-01T00-00-00-000Z", "abc", 1);
    expect(resolveSessionArg(a, "/elsewhere")).toBe(a);
    expect(() => resolveSessionArg(join(dir, "gone.jsonl"), dir)).toThrow(/does not exist/);
  });

  it("picks the latest session by mtime for --continue, ignoring files that are not sessions", () => {
    const dir = tmp();
    expect(latestSession(dir)).toBeUndefined();
    expect(latestSession(join(dir, "missing"))).toBeUndefined();
    session(dir, "2026-01-01T00-00-00-000Z", "old", 100);
    const touched = session(dir, "2026-01-02T00-00-00-000Z", "touched", 300);
    session(dir, "2026-01-03T00-00-00-000Z", "newer-name", 200);
    writeFileSync(join(dir, "zzz.jsonl"), "not json\n");
    expect(latestSession(dir)).toBe(touched);
  });

  it("skips for --continue in /x/y the newer session of /x-y, whose folder name is the same", () => {
    const dir = tmp();
    expect(encodeCwd("/x/y")).toBe(encodeCwd("/x-y"));
    const mine = session(dir, "2026-01-01T00-00-00-000Z", "mine", 100, OPENING + USER, "/x/y");
    const other = session(dir, "2026-01-02T00-00-00-000Z", "other", 200, OPENING + USER, "/x-y");
    expect(latestSession(dir, "/x/y")).toBe(mine);
    expect(latestSession(dir, "/x-y")).toBe(other);
    expect(latestSession(dir, "/elsewhere")).toBeUndefined();
    expect(latestSession(dir)).toBe(other);
  });

  it("breaks an mtime tie by the later file name", () => {
    const dir = tmp();
    session(dir, "2026-01-01T00-00-00-000Z", "a", 100);
    const later = session(dir, "2026-01-02T00-00-00-000Z", "b", 100);
    expect(latestSession(dir)).toBe(later);
  });

  it("skips for --continue a session that holds only its opening entries (a worker that stopped before its first prompt)", () => {
    const dir = tmp();
    const talked = session(dir, "2026-01-01T00-00-00-000Z", "talked", 100);
    session(dir, "2026-01-02T00-00-00-000Z", "empty", 200, OPENING);
    session(dir, "2026-01-03T00-00-00-000Z", "header-only", 300, "");
    expect(latestSession(dir)).toBe(talked);
    const named = session(
      dir,
      "2026-01-04T00-00-00-000Z",
      "named",
      400,
      OPENING + line({ type: "session_info", id: "i", parentId: "t", name: "x" }),
    );
    expect(latestSession(dir)).toBe(named);
  });

  it.each([
    ["not JSON", "nope\n", true, "not-session"],
    ["another record first", line({ type: "message" }), true, "not-session"],
    ["the header alone", HEADER("a"), true, "opening-only"],
    ["header and opening entries", HEADER("a") + OPENING, true, "opening-only"],
    ["a user message", HEADER("a") + OPENING + USER, true, "conversation"],
    ["a damaged line after the header", `${HEADER("a")}{torn\n${OPENING}`, true, "conversation"],
    ["a head cut short inside the opening entries", HEADER("a") + OPENING.slice(0, 30), false, "conversation"],
  ] as const)("classifies a file's start: %s", (_what, text, whole, expected) => {
    expect(classifySessionStart(text, whole)).toBe(expected);
  });
});
