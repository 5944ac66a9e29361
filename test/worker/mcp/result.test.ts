/** MCP results past 20 KB keep their start and end, as pi 1.6.0 cuts them. */
import { describe, expect, it } from "vitest";
import { truncateMiddle } from "../../../worker/mcp/result.js";

describe("truncateMiddle", () => {
  it("keeps what fits, cuts the middle of the rest at character boundaries", () => {
    expect(truncateMiddle("short", 100)).toBeUndefined();
    const cut = truncateMiddle(`${"é".repeat(30)}\n${"z".repeat(30)}`, 20)!;
    expect(cut.content).toMatch(/^é{5}…\d+ chars truncated…z{10}$/);
    expect(cut.totalLines).toBe(2);
    expect(cut.totalBytes).toBe(91);
  });
});
