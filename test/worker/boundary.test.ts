import { describe, expect, it } from "vitest";
import { checkDrafts, previewBoundary } from "../../worker/core/boundary.js";
import type { SessionEntry } from "../../shared/schema/session.js";
import { assistant, user } from "./session/helpers.js";

const branch: SessionEntry[] = [
  { type: "message", id: "u1", parentId: null, timestamp: "2026-12-05T12:00:00.000Z", message: user("hi") },
  { type: "message", id: "a1", parentId: "u1", timestamp: "2026-12-05T12:00:01.000Z", message: assistant("hello") },
  {
    type: "model_change",
    id: "m1",
    parentId: "a1",
    timestamp: "2026-12-05T12:00:02.000Z",
    provider: "p",
    modelId: "x",
  },
];

describe("checkDrafts", () => {
  it("turns pi's three draft kinds into entries; a custom message is hidden unless it says display", () => {
    expect(
      checkDrafts(
        [
          { type: "custom", customType: "state", data: { n: 1 } },
          { type: "custom_message", customType: "note", content: "look again" },
          { type: "context_edit", targetId: "a1", replacement: null },
        ],
        branch,
      ),
    ).toEqual([
      { type: "custom", customType: "state", data: { n: 1 } },
      { type: "custom_message", customType: "note", content: "look again", display: false },
      { type: "context_edit", targetId: "a1", replacement: null },
    ]);
  });

  it.each([
    ["not a list", { type: "custom" }, "entries must be an array"],
    ["an unknown type", [{ type: "label" }], 'entries[0]: type "label" is not a boundary entry'],
    ["a compaction without a summary", [{ type: "compaction" }], "entries[0]: summary must be a string"],
    [
      "a compaction whose kept entry is not an id",
      [{ type: "compaction", summary: "s", firstKeptEntryId: 3 }],
      "entries[0]: firstKeptEntryId must be an entry id, or null to keep nothing before it",
    ],
    ["no customType", [{ type: "custom" }], "entries[0]: customType must be a string"],
    [
      "an edit of an entry not on the branch",
      [{ type: "context_edit", targetId: "nope", replacement: null }],
      "is not on this branch",
    ],
    [
      "an edit of a settings entry",
      [{ type: "context_edit", targetId: "m1", replacement: null }],
      "Entry m1 does not contribute editable model content",
    ],
    [
      "a replacement without content",
      [{ type: "context_edit", targetId: "u1", replacement: {} }],
      "replacement must be null or {content}",
    ],
    [
      "content the store would refuse",
      [{ type: "custom_message", customType: "n", content: [{ type: "text" }] }],
      "entries[0]: ",
    ],
    [
      "a replacement of the wrong type",
      [{ type: "context_edit", targetId: "u1", replacement: { content: 42 } }],
      "entries[0]: ",
    ],
    [
      "data that is not JSON",
      [{ type: "custom", customType: "s", data: { n: 1n } }],
      "entries[0] cannot be written as JSON",
    ],
  ])("refuses %s", (_name, drafts, message) => {
    expect(() => checkDrafts(drafts, branch)).toThrow(message);
  });
});

describe("previewBoundary", () => {
  it("shows the context the drafts make, and whether one more request can follow", () => {
    const ending = previewBoundary(branch, [], []);
    expect(ending.contextMessages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(ending.canContinue).toBe(false);
    const withNote = previewBoundary(
      branch,
      checkDrafts([{ type: "custom_message", customType: "n", content: "more" }], branch),
      [],
    );
    expect(withNote.contextMessages.map((m) => m.role)).toEqual(["user", "assistant", "custom"]);
    expect(withNote.canContinue).toBe(true);
    const withoutAnswer = previewBoundary(
      branch,
      checkDrafts([{ type: "context_edit", targetId: "a1", replacement: null }], branch),
      [],
    );
    expect(withoutAnswer.contextMessages.map((m) => m.role)).toEqual(["user"]);
    expect(withoutAnswer.canContinue).toBe(true);
    expect(previewBoundary(branch, [], [user("queued")]).canContinue).toBe(true);
  });
});
