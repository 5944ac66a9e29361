/**
 * The store of `--no-session`: pi 1.6's in-memory SessionManager. The same entries, ids,
 * links and projection as a session file (context edits and compactions applied), and
 * nothing written anywhere; a fork of it is a new session in memory.
 */
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { branchInMemory } from "../../../worker/session/fork.js";
import { SessionStore } from "../../../worker/session/session-file.js";
import { assistant, useTempDir, user } from "./helpers.js";

const { tmp, track } = useTempDir();

/** The same script of appends on a store: a reply a retry omits, then a compaction keeping the last turn. */
function script(store: SessionStore) {
  store.append({ type: "model_change", provider: "faux", modelId: "faux-1" });
  store.append({ type: "thinking_level_change", thinkingLevel: "off" });
  const first = store.append({ type: "message", message: user("first") });
  const failed = store.append({ type: "message", message: { ...assistant("boom"), stopReason: "error" } });
  store.append({ type: "context_edit", targetId: failed.id, replacement: null });
  store.append({ type: "message", message: assistant("one") });
  const second = store.append({ type: "message", message: user("second") });
  store.append({ type: "message", message: assistant("two") });
  store.append({ type: "compaction", summary: "first, one", firstKeptEntryId: second.id, tokensBefore: 10 });
  return { first, second };
}

/** An entry without its random id and time: its type, parent position and content. */
function shapes(store: SessionStore) {
  const at = new Map(store.entries.map((e, i) => [e.id, i]));
  return store.entries.map(({ id: _id, timestamp: _t, parentId, ...rest }) => ({
    ...rest,
    parent: parentId === null ? null : at.get(parentId),
    ...("targetId" in rest ? { targetId: at.get(rest.targetId as string) } : {}),
    ...("firstKeptEntryId" in rest ? { firstKeptEntryId: at.get(rest.firstKeptEntryId as string) } : {}),
  }));
}

describe("SessionStore kept in memory (--no-session)", () => {
  it("holds the same tree and projection as a session file, and writes nothing", () => {
    const dir = tmp();
    const memory = track(SessionStore.inMemory({ cwd: dir, id: "0e0e0e0e-1111-4222-8333-444455556666" }));
    const file = track(SessionStore.create({ dir, cwd: dir }));
    script(memory);
    script(file);
    expect(readdirSync(dir)).toEqual([file.path.slice(dir.length + 1)]);

    expect(memory.path).toBeUndefined();
    expect(memory.hasFile()).toBe(false);
    expect(file.hasFile()).toBe(true);
    expect(memory.sessionId).toBe("0e0e0e0e-1111-4222-8333-444455556666");
    expect(memory.header).toMatchObject({ type: "session", version: 3, cwd: dir });
    expect(shapes(memory)).toEqual(shapes(file));
    // A compaction summary's time is its entry's: the clock aside, the same projection.
    const untimed = (store: SessionStore) =>
      JSON.parse(JSON.stringify(store.buildContext()).replace(/"timestamp":\d+/g, '"timestamp":0'));
    expect(untimed(memory)).toEqual(untimed(file));
    expect(memory.buildContext().messages.map((m) => m.role)).toEqual(["compactionSummary", "user", "assistant"]);
    expect(memory.entries.every((e, i) => e.parentId === (i === 0 ? null : memory.entries[i - 1]!.id))).toBe(true);
    expect(memory.leafId).toBe(memory.entries.at(-1)!.id);
    expect(memory.unwrittenEntries).toBe(0);
    expect(() => memory.checkWritable(1 << 30)).not.toThrow();
  });

  it("branches, labels and names in memory; a closed one refuses appends and says it has no file", () => {
    const memory = track(SessionStore.inMemory({ cwd: "/w" }));
    const { first } = script(memory);
    memory.setLeaf(first.id);
    const other = memory.append({ type: "message", message: assistant("another one") });
    expect(other.parentId).toBe(first.id);
    expect(memory.tree()).toHaveLength(1);
    memory.setLabel(first.id, "start");
    expect(memory.labelOf(first.id)).toBe("start");
    memory.append({ type: "session_info", name: " named " });
    expect(memory.sessionName).toBe("named");
    expect(() => memory.setLeaf("nope")).toThrow(/kept in memory, --no-session\): has no entry "nope"/);
    memory.close();
    expect(() => memory.append({ type: "session_info", name: "x" })).toThrow(/kept in memory.*is closed/);
  });

  it("forks and clones into a new session in memory with the entries of the path", () => {
    const memory = track(SessionStore.inMemory({ cwd: "/w" }));
    const { second } = script(memory);
    const fork = branchInMemory(memory, second.id);
    track(fork.store);
    expect(fork.text).toBe("second");
    expect(fork.store.hasFile()).toBe(false);
    expect(fork.store.sessionId).not.toBe(memory.sessionId);
    expect(fork.store.header.parentSession).toBeUndefined();
    expect(fork.store.entries).toEqual(memory.pathToEntry(second.parentId));
    expect(fork.store.buildContext().messages.map((m) => m.role)).toEqual(["user", "assistant"]);

    const clone = track(branchInMemory(memory).store);
    expect(clone.entries).toEqual(memory.pathToLeaf());
    expect(clone.buildContext()).toEqual(memory.buildContext());
    expect(() => branchInMemory(memory, "nope")).toThrow(/cannot fork at "nope"/);
  });
});
