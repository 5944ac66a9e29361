import * as Type from "typebox/type";
import { describe, expect, it } from "vitest";
import { checkToolArguments, shownPath } from "../../worker/agent/arg-errors.js";
import { ARGUMENT_CASES } from "./arg-errors-cases.js";

describe("tool argument errors, worded as pi 1.6 words them", () => {
  it.each(ARGUMENT_CASES.filter((c) => c.errors))("$name", ({ schema, args, errors }) => {
    const checked = checkToolArguments("tool", schema, args);
    expect(checked).toEqual({
      ok: false,
      text: `Validation failed for tool "tool":\n${errors?.join("\n")}\n\nReceived arguments:\n${JSON.stringify(args, null, 2)}`,
    });
  });

  it.each(ARGUMENT_CASES.filter((c) => c.value))("$name", ({ schema, args, value }) => {
    expect(checkToolArguments("tool", schema, args)).toEqual({ ok: true, value });
  });

  it("writes the whole text as pi does: the tool's name, one line per problem, the arguments as received", () => {
    const schema = Type.Object({ path: Type.String(), limit: Type.Optional(Type.Number()) });
    expect(checkToolArguments("read", schema, { path: ["a"], limit: "all" })).toEqual({
      ok: false,
      text: [
        'Validation failed for tool "read":',
        "  - path: expected string, got array",
        "  - limit: expected number, got string",
        "",
        "Received arguments:",
        "{",
        '  "path": [',
        '    "a"',
        "  ],",
        '  "limit": "all"',
        "}",
      ].join("\n"),
    });
  });

  it("shows the arguments it was given, not their coerced form", () => {
    const schema = Type.Object({ n: Type.Number(), s: Type.String() });
    const checked = checkToolArguments("t", schema, { n: "5", s: {} });
    expect(checked.ok).toBe(false);
    expect(!checked.ok && checked.text.endsWith('{\n  "n": "5",\n  "s": {}\n}')).toBe(true);
  });

  it.each([
    ["", "root"],
    ["/path", "path"],
    ["/edits/0/oldText", "edits.0.oldText"],
    ["/a~1b/c~0d", "a/b.c~d"],
    ["/", ""],
  ])("shows the pointer %j as %j", (pointer, shown) => {
    expect(shownPath(pointer)).toBe(shown);
  });
});
