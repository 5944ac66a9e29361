import { copyFileSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { branchedEntries, cloneSession, forkMessages, forkSession } from "../../../worker/session/fork.js";
import { SessionStore } from "../../../worker/session/session-file.js";
import { assistant, PI_SESSION_FIXTURE, useTempDir, user } from "./helpers.js";

const { tmp, track } = useTempDir();

/** A session with two turns on the current branch and one abandoned branch. */
function twoTurnSession() {
  const store = track(SessionStore.create({ dir: join(tmp(), "src"), cwd: "/w" }));
  store.append({ type: "model_change", provider: "faux", modelId: "faux-1" });
  const q1 = store.append({ type: "message", message: user("first question") });
  const a1 = store.append({ type: "message", message: assistant("first answer") });
  const abandoned = store.append({ type: "message", message: user("abandoned") });
  store.setLeaf(a1.id);
  const q2 = store.append({ type: "message", message: user("second question") });
  store.append({ type: "message", message: assistant("second answer") });
  return { store, q1, a1, q2, abandoned };
}

describe("fork and clone", () => {
  it("lists the user messages of every branch, in file order, as pi does", () => {
    const { store, q1, q2, abandoned } = twoTurnSession();
    expect(forkMessages(store.entries)).toEqual([
      { entryId: q1.id, text: "first question" },
      { entryId: abandoned.id, text: "abandoned" },
      { entryId: q2.id, text: "second question" },
    ]);
  });

  it("forks at a user message of another branch with that branch's path", () => {
    const { store, abandoned } = twoTurnSession();
    const fork = forkSession(store, abandoned.id, tmp());
    expect(fork.text).toBe("abandoned");
    const forked = track(SessionStore.open(fork.path));
    expect(forked.buildContext().messages).toEqual([user("first question"), assistant("first answer")]);
  });

  it("forks before a user message into a new file that names its parent, leaving the original byte-identical", () => {
    const { store, q2 } = twoTurnSession();
    const before = readFileSync(store.path);
    const out = join(tmp(), "out");

    const fork = forkSession(store, q2.id, out);
    expect(fork.text).toBe("second question");
    expect(dirname(fork.path)).toBe(out);
    expect(readFileSync(store.path).equals(before)).toBe(true);

    const forked = track(SessionStore.open(fork.path));
    expect(basename(fork.path)).toContain(forked.sessionId);
    expect(forked.sessionId).not.toBe(store.sessionId);
    expect(forked.header).toMatchObject({ cwd: "/w", parentSession: store.path });
    expect(forked.buildContext()).toEqual({
      messages: [user("first question"), assistant("first answer")],
      model: { provider: "faux", modelId: "faux-1" },
    });
    expect(forked.entries).toHaveLength(3);
  });

  it("forks at the first message into a session with no messages, keeping the model setting", () => {
    const { store, q1 } = twoTurnSession();
    const fork = forkSession(store, q1.id, tmp());
    expect(fork.text).toBe("first question");
    const forked = track(SessionStore.open(fork.path));
    expect(forked.entries.map((e) => e.type)).toEqual(["model_change"]);
    expect(forked.buildContext().messages.length).toBe(0);
  });

  it("refuses to fork at an assistant message or an unknown id", () => {
    const { store, a1 } = twoTurnSession();
    expect(() => forkSession(store, a1.id, tmp())).toThrow(/not a user message/);
    expect(() => forkSession(store, "ffffffff", tmp())).toThrow(/no such entry/);
    expect(readdirSync(tmp())).toEqual(["src"]);
  });

  it("clones the whole current path (without the abandoned branch)", () => {
    const { store } = twoTurnSession();
    const before = readFileSync(store.path);
    const path = cloneSession(store, tmp());
    expect(readFileSync(store.path).equals(before)).toBe(true);

    const clone = track(SessionStore.open(path));
    expect(clone.header.parentSession).toBe(store.path);
    expect(clone.entries).toEqual(store.pathToLeaf());
    expect(clone.leafId).toBe(store.leafId);
    expect(clone.buildContext()).toEqual(store.buildContext());
  });

  it("clones a session written by pi", () => {
    const source = join(tmp(), basename(PI_SESSION_FIXTURE));
    copyFileSync(PI_SESSION_FIXTURE, source);
    const store = track(SessionStore.open(source));
    const clone = track(SessionStore.open(cloneSession(store, join(tmp(), "clones"))));
    expect(readFileSync(source, "utf8")).toBe(readFileSync(PI_SESSION_FIXTURE, "utf8"));
    expect(clone.buildContext()).toEqual(store.buildContext());
    expect(readFileSync(clone.path, "utf8").split("\n").slice(1)).toEqual(
      readFileSync(PI_SESSION_FIXTURE, "utf8").split("\n").slice(1),
    );
  });

  it("re-chains the path without its labels and writes the current labels after it (pi's createBranchedSession)", () => {
    const store = track(SessionStore.create({ dir: join(tmp(), "src"), cwd: "/w" }));
    const q1 = store.append({ type: "message", message: user("first question") });
    const a1 = store.append({ type: "message", message: assistant("first answer") });
    store.setLabel(a1.id, "old");
    store.setLabel(a1.id, "checkpoint");
    const q2 = store.append({ type: "message", message: user("second question") });
    store.setLabel(q2.id, "cleared");
    store.setLabel(q2.id, undefined);
    // A compaction whose kept part starts at a label keeps from the entry after it.
    const labelled = store.append({ type: "label", targetId: q1.id, label: "start" });
    const a2 = store.append({ type: "message", message: assistant("second answer") });
    const compaction = store.append({
      type: "compaction",
      summary: "s",
      firstKeptEntryId: labelled.id,
      tokensBefore: 1,
      details: undefined,
      fromHook: false,
    });
    const out = branchedEntries(store.entries, store.pathToLeaf());
    const kinds = out.map((e) => [e.type, e.parentId && out.findIndex((p) => p.id === e.parentId)]);
    expect(kinds).toEqual([
      ["message", null],
      ["message", 0],
      ["message", 1],
      ["message", 2],
      ["compaction", 3],
      ["label", 4],
      ["label", 5],
    ]);
    expect(out.map((e) => e.id).slice(0, 5)).toEqual([q1.id, a1.id, q2.id, a2.id, compaction.id]);
    expect((out[4] as { firstKeptEntryId: string }).firstKeptEntryId).toBe(a2.id);
    // The labels as the session has them now, in the order they were first set.
    expect(out.slice(5).map((e) => [(e as { targetId: string }).targetId, (e as { label: string }).label])).toEqual([
      [a1.id, "checkpoint"],
      [q1.id, "start"],
    ]);
  });
});
