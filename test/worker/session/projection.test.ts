import { describe, expect, it } from "vitest";
import { buildSessionProjection, pathTo } from "../../../worker/session/context.js";
import type { SessionEntry } from "../../../shared/schema/session.js";
import { brief, PROJECTION_CASES } from "./projection-cases.js";

const project = (entries: SessionEntry[], leafId: string) =>
  buildSessionProjection(pathTo(new Map(entries.map((e) => [e.id, e])), leafId));

describe("buildSessionProjection", () => {
  it.each(PROJECTION_CASES)("$name", ({ entries, leafId, expected }) => {
    expect(project(entries, leafId).messages.map(brief)).toEqual(expected);
  });

  it("keeps the raw entries unchanged and says which entry each message came from", () => {
    const { entries, leafId } = PROJECTION_CASES.find((c) => c.name.startsWith("replacements"))!;
    const before = JSON.stringify(entries);
    const projection = project(entries, leafId);
    expect(JSON.stringify(entries)).toBe(before);
    expect(projection.entries.filter((e) => e.messages.length > 0).map((e) => e.source.id)).toEqual(["u1", "a1", "t1"]);
    expect(projection.entries.filter((e) => e.messages.length === 0).map((e) => e.source.id)).toEqual([
      "e1",
      "e2",
      "e3",
    ]);
  });
});
