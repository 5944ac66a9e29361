import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionStore } from "../../../worker/session/session-file.js";
import { exportSessionJsonl } from "../../../worker/session/export-jsonl.js";
import { assistant, useTempDir, user } from "./helpers.js";

const { tmp, track } = useTempDir();

const read = (path: string) =>
  readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

describe("exportSessionJsonl (pi 1.6's exportToJsonl)", () => {
  it("writes a new header and the current branch only, each entry linked to the one before it", () => {
    const store = track(SessionStore.create({ dir: join(tmp(), "s"), cwd: "/w", parentSession: "/old.jsonl" }));
    const model = store.append({ type: "model_change", provider: "faux", modelId: "faux-1" });
    const first = store.append({ type: "message", message: user("first") });
    store.append({ type: "message", message: assistant("left branch") });
    store.setLeaf(first.id);
    store.append({ type: "label", targetId: model.id, label: "start" });
    const kept = store.append({ type: "message", message: assistant("kept branch") });

    const out = exportSessionJsonl(store, "out/branch.jsonl", tmp());
    expect(out).toBe(join(tmp(), "out/branch.jsonl"));
    const lines = read(out);
    expect(lines[0]).toEqual({
      type: "session",
      version: 3,
      id: store.sessionId,
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      cwd: "/w",
    });
    const body = lines.slice(1);
    expect(body.map((e) => e.id)).toEqual(store.pathToLeaf().map((e) => e.id));
    expect(body.map((e) => e.message?.content?.[0]?.text ?? e.type)).not.toContain("left branch");
    expect(body.at(-1).id).toBe(kept.id);
    expect(body.map((e) => e.parentId)).toEqual([null, ...body.slice(0, -1).map((e) => e.id)]);
    // Loads again as a session of its own.
    const again = track(SessionStore.open(out));
    expect(again.pathToLeaf().map((e) => e.id)).toEqual(body.map((e) => e.id));
  });

  it("exports a session whose file is not written yet, and one kept in memory", () => {
    const fresh = track(SessionStore.create({ dir: join(tmp(), "s"), cwd: "/w" }));
    fresh.append({ type: "thinking_level_change", thinkingLevel: "high" });
    expect(read(exportSessionJsonl(fresh, "a.jsonl", tmp())).map((e) => e.type)).toEqual([
      "session",
      "thinking_level_change",
    ]);
    const memory = SessionStore.inMemory({ cwd: "/w" });
    memory.append({ type: "message", message: user("hi") });
    expect(read(exportSessionJsonl(memory, join(tmp(), "b.jsonl"), "/elsewhere")).map((e) => e.type)).toEqual([
      "session",
      "message",
    ]);
  });
});
