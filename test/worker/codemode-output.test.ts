import { describe, expect, it } from "vitest";
import { budgetOutput, failureText, joinText, layoutOutput } from "../../worker/codemode/output.js";

describe("a codemode result's layout", () => {
  it("numbers several text items and puts console lines in one block after them", () => {
    const items = layoutOutput([
      { type: "text", text: "a" },
      { type: "text", text: "log 1", console: true },
      { type: "text", text: "b\n" },
      { type: "text", text: "log 2", console: true },
    ]);
    expect(joinText(items)).toEqual([
      {
        type: "text",
        text: "==> text 1/2 <==\na\n==> text 2/2 <==\nb\n<console_output>\nlog 1\nlog 2\n</console_output>",
      },
    ]);
  });

  it("leaves a single text item unnumbered and keeps images in place", () => {
    const image = { type: "image" as const, data: "iVBORw0KGgo=", mimeType: "image/png" };
    expect(joinText(layoutOutput([{ type: "text", text: "one" }, image]))).toEqual([
      { type: "text", text: "one" },
      image,
    ]);
  });

  it("keeps the start and end of text past the token budget and hands back the whole text", () => {
    const text = "x".repeat(30) + "y".repeat(30);
    const { items, spill } = budgetOutput([{ type: "text", text }], 10);
    expect(spill).toBe(text);
    expect(items).toEqual([
      {
        type: "text",
        text: `Warning: truncated output (original token count: 15)\nTotal output lines: 1\n\n${"x".repeat(20)}…5 tokens truncated…${"y".repeat(20)}`,
      },
    ]);
    expect(budgetOutput([{ type: "text", text: "short" }], 10)).toEqual({ items: [{ type: "text", text: "short" }] });
  });

  it("says what stopped a script and which calls it had made", () => {
    expect(failureText({ kind: "timeout", message: "Execution timed out after 5 ms" }, [])).toBe(
      "Script timed out: Execution timed out after 5 ms\n\nNo tool calls were made.",
    );
    expect(
      failureText({ kind: "script", name: "TypeError", message: "x" }, [
        { name: "read", status: "ok" },
        { name: "bash", status: "cancelled" },
      ]),
    ).toBe("TypeError: x\n\nTool calls made before the failure (they are not undone): read (ok), bash (cancelled)");
  });
});
