/**
 * When a new session's file appears, side by side with upstream pi 1.6.0: pi writes it
 * with the first user or assistant message (the header and every entry before it at once),
 * so a session nobody talked in leaves no file. The same script on both sides: a named
 * session left by `new_session` before any prompt, then a prompt in the new one; the folder
 * must hold the same files with entries of the same shape. Then a worker killed before its
 * first prompt, resumed with `--session` at the file it named: the same on both sides too.
 * Skipped when test/upstream is not installed.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { entryShape as shape } from "../support/session-shape.js";
import { startOracle, UPSTREAM, type Implementation } from "../support/upstream-oracle.js";

type Line = Record<string, any>;

const { server, dirs } = useOracleFixture();
const IMPLS: Implementation[] = ["ours", "upstream"];

const entriesOf = (file: string): Line[] =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);

interface Side {
  /** Whether each file named by `get_state` existed at each step. */
  seen: Record<string, boolean>;
  files: string[];
  written: Line[];
  resumedLeft: boolean;
  resumed: Line[];
}

async function script(impl: Implementation): Promise<Side> {
  const { w, home } = startOracle(impl, server, dirs, { pi: "1.6.0", sessions: true });
  const sessions = join(home, "sessions");
  const file = async () => (await w.request({ type: "get_state" })).data.sessionFile as string;
  const seen: Record<string, boolean> = {};
  const first = await file();
  seen.atStart = existsSync(first);
  expect(await w.request({ type: "set_session_name", name: "never used" })).toMatchObject({ success: true });
  seen.afterName = existsSync(first);
  expect(await w.request({ type: "new_session" })).toMatchObject({ success: true, data: { cancelled: false } });
  const second = await file();
  seen.firstAfterNew = existsSync(first);
  seen.secondBeforePrompt = existsSync(second);
  server.enqueue({ text: "hello" });
  const from = w.received.length;
  expect(await w.request({ type: "prompt", message: "hi" }, 30_000)).toMatchObject({ success: true });
  await w.event("agent_settled", 30_000, from);
  seen.secondAfterPrompt = existsSync(second);
  const files = readdirSync(sessions, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(".jsonl"));
  const written = entriesOf(second);
  w.kill();

  // Killed before its first prompt, then resumed at the file it named.
  const { w: w2 } = startOracle(impl, server, dirs, { pi: "1.6.0", sessions: true });
  const named = (await w2.request({ type: "get_state" })).data.sessionFile as string;
  w2.kill();
  await w2.exited;
  const resumedLeft = existsSync(named);
  const { w: w3 } = startOracle(impl, server, dirs, { pi: "1.6.0", args: ["--session", named] });
  expect((await w3.request({ type: "get_state" })).data.sessionFile).toBe(named);
  server.enqueue({ text: "again" });
  const from3 = w3.received.length;
  expect(await w3.request({ type: "prompt", message: "after the kill" }, 30_000)).toMatchObject({ success: true });
  await w3.event("agent_settled", 30_000, from3);
  const resumed = entriesOf(named);
  w3.kill();
  return { seen, files, written, resumedLeft, resumed };
}

describe.skipIf(!UPSTREAM["1.6.0"].installed)("a new session's file, side by side with pi 1.6.0", () => {
  it("is written with the first message: none for a session left before it, none for a worker killed before it", async () => {
    const sides = {} as Record<Implementation, Side>;
    for (const impl of IMPLS) sides[impl] = await script(impl);
    const { ours, upstream } = sides;
    expect(upstream.seen).toEqual({
      atStart: false,
      afterName: false,
      firstAfterNew: false,
      secondBeforePrompt: false,
      secondAfterPrompt: true,
    });
    expect(ours.seen).toEqual(upstream.seen);
    expect(upstream.files).toHaveLength(1);
    expect(ours.files).toHaveLength(1);
    expect(shape(ours.written)).toEqual(shape(upstream.written));
    expect(ours.written[0]).toMatchObject({ type: "session", version: 3 });
    expect(upstream.resumedLeft).toBe(false);
    expect(ours.resumedLeft).toBe(false);
    expect(shape(ours.resumed)).toEqual(shape(upstream.resumed));
  });
});
