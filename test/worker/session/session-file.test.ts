import { appendFileSync, copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionStore } from "../../../worker/session/session-file.js";
import { assistant, PI_SESSION_FIXTURE, toolResult, useTempDir, user } from "./helpers.js";

const { tmp, track } = useTempDir();

function lines(path: string): string[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "");
}

describe("SessionStore", () => {
  it("names a new file <time>_<id>.jsonl and writes it with the first user message, as pi does", () => {
    const dir = join(tmp(), "nested");
    const store = track(SessionStore.create({ dir, cwd: "/work/app" }));
    expect(basename(store.path)).toMatch(
      new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d-\\d{3}Z_${store.sessionId}\\.jsonl$`),
    );
    expect(store.header).toMatchObject({ type: "session", version: 3, cwd: "/work/app" });
    expect(store.leafId).toBeNull();
    expect(store.buildContext()).toEqual({ messages: [] });
    // The folder is made at once (the sandbox binds it); setup entries alone leave no file.
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const model = store.append({ type: "model_change", provider: "faux", modelId: "faux-1" });
    store.append({ type: "session_info", name: "named before any message" });
    expect(existsSync(store.path)).toBe(false);
    const first = store.append({ type: "message", message: user("hi") });
    expect(lines(store.path).map((l) => JSON.parse(l))).toEqual([store.header, ...store.entries]);
    expect(lines(store.path).map((l) => JSON.parse(l).id)).toEqual([
      store.sessionId,
      model.id,
      expect.any(String),
      first.id,
    ]);
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
    store.append({ type: "message", message: assistant("hello") });
    expect(lines(store.path)).toHaveLength(5);
  });

  it("leaves no file for a session closed before anyone talked in it", () => {
    const store = track(SessionStore.create({ dir: tmp(), cwd: "/w" }));
    store.append({ type: "thinking_level_change", thinkingLevel: "high" });
    store.close();
    expect(existsSync(store.path)).toBe(false);
  });

  it("writes a kept assistant message as the first line of a new file too", () => {
    const store = track(SessionStore.create({ dir: tmp(), cwd: "/w" }));
    const kept = store.appendOrKeep({ type: "message", message: assistant("first") });
    expect(kept.error).toBeUndefined();
    expect(lines(store.path).map((l) => JSON.parse(l))).toEqual([store.header, kept.entry]);
  });

  it("writes each append before returning and reads the same tree back", () => {
    const store = track(SessionStore.create({ dir: tmp(), cwd: "/w" }));
    const model = store.append({ type: "model_change", provider: "faux", modelId: "faux-1" });
    const thinking = store.append({ type: "thinking_level_change", thinkingLevel: "high" });
    const first = store.append({ type: "message", message: user("hi") });
    expect(lines(store.path)).toHaveLength(4);
    const reply = store.append({ type: "message", message: assistant("hello") });
    store.append({ type: "session_info", name: " My session " });

    expect(model.parentId).toBeNull();
    expect(thinking.parentId).toBe(model.id);
    expect(first.parentId).toBe(thinking.id);
    expect(reply.parentId).toBe(first.id);
    expect(model.id).toMatch(/^[0-9a-f]{8}$/);
    expect(Number.isNaN(Date.parse(reply.timestamp))).toBe(false);

    const reopened = track(SessionStore.open(store.path));
    expect(reopened.header).toEqual(store.header);
    expect(reopened.entries).toEqual(store.entries);
    expect(reopened.leafId).toBe(store.leafId);
    expect(reopened.buildContext()).toEqual({
      messages: [user("hi"), assistant("hello")],
      // the assistant reply came later than the model_change, so its model wins (as in pi)
      model: { provider: "faux", modelId: "faux-1" },
      thinkingLevel: "high",
      name: "My session",
    });
    expect(reopened.buildContext().messages.length).toBe(2);
    expect(reopened.sessionName).toBe("My session");
  });

  it("loads the session file recorded from pi 0.73.1", () => {
    const path = join(tmp(), basename(PI_SESSION_FIXTURE));
    copyFileSync(PI_SESSION_FIXTURE, path);
    const store = track(SessionStore.open(path));
    const context = store.buildContext();
    expect(context.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(context.model).toEqual({ provider: "mock", modelId: "mock-1" });
    expect(context.thinkingLevel).toBe("off");
    expect(store.sessionId).toBe("01a22d93-ab79-7674-89f2-a4d4e5d04b0d");
    expect(store.header.cwd).toBe("/home/user/project");
    expect(store.leafId).toBe("8f4fda3a");

    store.append({ type: "message", message: user("and now?") });
    expect(readFileSync(path, "utf8").startsWith(readFileSync(PI_SESSION_FIXTURE, "utf8"))).toBe(true);
    expect(track(SessionStore.open(path)).buildContext().messages.length).toBe(5);
  });

  it("skips a torn last line with a warning, keeps every line before it, and appends on a fresh line", () => {
    const store = track(SessionStore.create({ dir: tmp(), cwd: "/w" }));
    store.append({ type: "message", message: user("one") });
    store.append({ type: "message", message: assistant("two") });
    store.close();
    const intact = readFileSync(store.path, "utf8");
    appendFileSync(store.path, '{"type":"message","id":"deadbeef","parentId":"');

    const warnings: string[] = [];
    const reopened = track(SessionStore.open(store.path, { warn: (m) => warnings.push(m) }));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("line 4");
    expect(readFileSync(store.path, "utf8")).toBe(intact);
    expect(reopened.buildContext().messages).toEqual([user("one"), assistant("two")]);

    reopened.append({ type: "message", message: user("three") });
    const again = track(SessionStore.open(store.path, { warn: (m) => warnings.push(m) }));
    expect(warnings).toHaveLength(1);
    expect(again.buildContext().messages).toEqual([user("one"), assistant("two"), user("three")]);
  });

  it("repairs a complete last line that lacks its newline", () => {
    const store = track(SessionStore.create({ dir: tmp(), cwd: "/w" }));
    store.append({ type: "message", message: user("one") });
    store.close();
    writeFileSync(store.path, readFileSync(store.path, "utf8").trimEnd());
    const reopened = track(SessionStore.open(store.path));
    reopened.append({ type: "message", message: assistant("two") });
    expect(lines(store.path)).toHaveLength(3);
    expect(track(SessionStore.open(store.path)).buildContext().messages.length).toBe(2);
  });

  it("loads an entry whose parent is missing as a root, as pi does, with a warning naming the line", () => {
    const path = join(tmp(), "broken.jsonl");
    const source = readFileSync(PI_SESSION_FIXTURE, "utf8").split("\n");
    writeFileSync(path, `${[source[0], source[1], source[3], source[4]].join("\n")}\n`);
    const warnings: string[] = [];
    const store = track(SessionStore.open(path, { warn: (m) => warnings.push(m) }));
    expect(warnings).toEqual([
      `session file ${path}: line 3: entry "555c42da" has parentId "449a2eb6", which is not in this file; it is treated as a root`,
    ]);
    expect(store.pathToLeaf().map((e) => e.id)).toEqual(["555c42da", "4e812be6"]);
    expect(store.tree().map((n) => n.entry.id)).toEqual(["230c0ac4", "555c42da"]);
    const next = store.append({ type: "message", message: user("go on") });
    expect(next.parentId).toBe("4e812be6");
    expect(readFileSync(path, "utf8").startsWith([source[0], source[1], source[3], source[4]].join("\n"))).toBe(true);
  });

  it("skips a damaged middle line with a warning naming it, and keeps everything else", () => {
    const path = join(tmp(), "damaged.jsonl");
    const source = readFileSync(PI_SESSION_FIXTURE, "utf8").split("\n");
    source[2] = source[2].slice(0, 30);
    writeFileSync(path, source.join("\n"));
    const warnings: string[] = [];
    const store = track(SessionStore.open(path, { warn: (m) => warnings.push(m) }));
    expect(warnings[0]).toBe(
      `session file ${path}: line 3 is not valid JSON; it is skipped (the lines around it load)`,
    );
    // The entry after the skipped one lost its parent: it starts the path, and nothing else is lost.
    expect(warnings[1]).toMatch(
      /line 4: entry "555c42da" has parentId "449a2eb6", which is not in this file; it is treated as a root/,
    );
    expect(store.entries).toHaveLength(5);
    expect(store.buildContext().messages.length).toBe(4);
  });

  it("refuses a file that is not a session, or a missing file", () => {
    const path = join(tmp(), "other.jsonl");
    writeFileSync(path, '{"hello":"world"}\n');
    expect(() => SessionStore.open(path)).toThrow(/line 1 is not a session header/);
    expect(() => SessionStore.open(join(tmp(), "nope.jsonl"))).toThrow(/does not exist/);
    writeFileSync(path, '{"type":"session","vers');
    expect(() => SessionStore.open(path)).toThrow(/has no complete session header/);
  });

  it("keeps an invalid known entry uninterpreted, naming its line and field", () => {
    const path = join(tmp(), "invalid.jsonl");
    const source = readFileSync(PI_SESSION_FIXTURE, "utf8").split("\n");
    source[2] = source[2].replace('"thinkingLevel":"off"', '"thinkingLevel":"loud"');
    writeFileSync(path, source.join("\n"));
    const warnings: string[] = [];
    const store = track(SessionStore.open(path, { warn: (m) => warnings.push(m) }));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /line 3: entry "449a2eb6" is not a valid thinking_level_change entry \(\/thinkingLevel: .*\); it is kept but not shown to the model/,
    );
    expect(store.buildContext().thinkingLevel).toBeUndefined();
    expect(store.buildContext().messages.length).toBe(4);
  });

  it("keeps custom and label entries and unknown roles out of the context; a branch summary is in it", () => {
    const path = join(tmp(), "extra.jsonl");
    const base = readFileSync(PI_SESSION_FIXTURE, "utf8");
    const extra = [
      { type: "custom", id: "c0000001", parentId: "8f4fda3a", timestamp: "t", customType: "ext", data: { n: 1 } },
      { type: "label", id: "c0000002", parentId: "c0000001", timestamp: "t", targetId: "555c42da", label: "x" },
      { type: "branch_summary", id: "c0000003", parentId: "c0000002", timestamp: "t", fromId: "x", summary: "s" },
      {
        type: "message",
        id: "c0000004",
        parentId: "c0000003",
        timestamp: "t",
        message: { role: "custom", customType: "ext", content: "hidden", display: false, timestamp: 5 },
      },
    ];
    writeFileSync(path, `${base + extra.map((e) => JSON.stringify(e)).join("\n")}\n`);
    const store = track(SessionStore.open(path));
    expect(store.pathToLeaf().map((e) => e.type)).toEqual([
      "model_change",
      "thinking_level_change",
      "message",
      "message",
      "message",
      "message",
      "custom",
      "label",
      "branch_summary",
      "message",
    ]);
    expect(store.buildContext().messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "assistant",
      "branchSummary",
      "custom",
    ]);
    expect(store.labelOf("555c42da")).toBe("x");
    const next = store.append({ type: "message", message: user("after") });
    expect(next.parentId).toBe("c0000004");
  });

  it("branches with setLeaf: the new path leaves the old branch out", () => {
    const store = track(SessionStore.create({ dir: tmp(), cwd: "/w" }));
    const q1 = store.append({ type: "message", message: user("q1") });
    const a1 = store.append({ type: "message", message: assistant("a1") });
    store.append({ type: "message", message: user("q2") });
    store.append({ type: "message", message: assistant("a2") });

    store.setLeaf(a1.id);
    const q2b = store.append({ type: "message", message: user("q2b") });
    expect(q2b.parentId).toBe(a1.id);
    expect(store.buildContext().messages).toEqual([user("q1"), assistant("a1"), user("q2b")]);

    const reopened = track(SessionStore.open(store.path));
    expect(reopened.leafId).toBe(q2b.id);
    expect(reopened.pathToLeaf().map((e) => e.id)).toEqual([q1.id, a1.id, q2b.id]);
    expect(reopened.entries).toHaveLength(5);

    reopened.setLeaf(null);
    expect(reopened.pathToLeaf()).toEqual([]);
    expect(reopened.append({ type: "message", message: user("fresh") }).parentId).toBeNull();
    expect(() => reopened.setLeaf("00000000")).toThrow(/has no entry "00000000"/);
  });

  it("replaces the history before the first kept entry with the compaction summary", () => {
    const store = track(SessionStore.create({ dir: tmp(), cwd: "/w" }));
    store.append({ type: "message", message: user("old question") });
    store.append({ type: "message", message: assistant("old answer") });
    const kept = store.append({ type: "message", message: user("recent question") });
    store.append({ type: "message", message: assistant("", ["c1"]) });
    store.append({ type: "message", message: toolResult("c1", "out") });
    const compaction = store.append({
      type: "compaction",
      summary: "## Goal\nstuff",
      firstKeptEntryId: kept.id,
      tokensBefore: 1234,
    });
    store.append({ type: "message", message: user("next") });

    const messages = track(SessionStore.open(store.path)).buildContext().messages;
    expect(messages).toEqual([
      {
        role: "compactionSummary",
        summary: "## Goal\nstuff",
        tokensBefore: 1234,
        timestamp: Date.parse(compaction.timestamp),
      },
      user("recent question"),
      assistant("", ["c1"]),
      toolResult("c1", "out"),
      user("next"),
    ]);
    // The summarized entries stay in the file.
    expect(lines(store.path)).toHaveLength(8);
  });

  it("refuses to append an entry that would not load again, and appends after close", () => {
    const store = track(SessionStore.create({ dir: tmp(), cwd: "/w" }));
    const bad = { type: "thinking_level_change", thinkingLevel: "loud" } as unknown as Parameters<
      SessionStore["append"]
    >[0];
    store.append({ type: "message", message: user("hi") });
    expect(() => store.append(bad)).toThrow(/refused to append an invalid thinking_level_change entry/);
    expect(lines(store.path)).toHaveLength(2);
    store.close();
    expect(() => store.append({ type: "session_info", name: "x" })).toThrow(/is closed/);
  });
});
