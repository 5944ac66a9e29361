/**
 * shared/schema/session.ts against pi 1.6.0's docs/session-format.md: its example lines
 * (those that are whole JSON) are entries of their type, and what is not one says why.
 */
import { describe, expect, it } from "vitest";
import { checkSessionEntry } from "../../shared/schema/session.js";

const at = { parentId: "e5f6g7h8", timestamp: "2024-12-03T14:08:00.000Z" };

describe("checkSessionEntry", () => {
  it.each<[string, Record<string, unknown>]>([
    [
      "pi 1.6's usage entry (cache warming)",
      {
        type: "usage",
        id: "f6g7h8i9",
        ...at,
        kind: "cache_warm",
        provider: "anthropic",
        model: "claude-sonnet-4-5",
        usage: {
          input: 0,
          output: 0,
          cacheRead: 50000,
          cacheWrite: 0,
          totalTokens: 50000,
          cost: { input: 0, output: 0, cacheRead: 0.015, cacheWrite: 0, total: 0.015 },
        },
      },
    ],
    ["a session_info without a name (it clears the name)", { type: "session_info", id: "k1", ...at }],
    ["a label cleared", { type: "label", id: "j0", ...at, targetId: "a1b2c3d4" }],
    [
      "a context_edit leaving its target out",
      { type: "context_edit", id: "g6", ...at, targetId: "c3", replacement: null },
    ],
    [
      "a branch summary with the summary's usage",
      {
        type: "branch_summary",
        id: "g7",
        ...at,
        fromId: "f6",
        summary: "Branch explored approach A...",
        usage: {
          input: 10,
          output: 5,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: 15,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
      },
    ],
  ])("takes %s", (_name, entry) => {
    const checked = checkSessionEntry(entry);
    expect(checked.ok ? [] : checked.errors).toEqual([]);
  });

  it.each<[string, unknown, RegExp]>([
    ["an unknown type", { type: "bookmark", id: "x", ...at }, /\/type: "bookmark" is not an entry type of pi 1\.6\.0/],
    ["a line without an id", { type: "label", ...at, targetId: "a" }, /required properties id/],
    [
      "a usage entry without its usage",
      { type: "usage", id: "u", ...at, kind: "k", provider: "p", model: "m" },
      /usage/,
    ],
    ["not an object", "a line", /\//],
  ])("refuses %s, naming the field", (_name, value, error) => {
    const checked = checkSessionEntry(value);
    expect(checked.ok).toBe(false);
    expect(checked.ok ? "" : checked.errors.join("; ")).toMatch(error);
  });
});
