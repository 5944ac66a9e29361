import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { coerceArguments } from "../../worker/agent/coerce-arguments.js";

const SCHEMA = Type.Object({
  n: Type.Number(),
  i: Type.Optional(Type.Integer()),
  tags: Type.Array(Type.String()),
  flag: Type.Optional(Type.Boolean()),
  note: Type.Optional(Type.String()),
  maybe: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

describe("tool call arguments coerced to their schema, as pi 1.5+", () => {
  it("converts numeric and boolean strings and wraps a single value into an array", () => {
    expect(coerceArguments(SCHEMA, { n: "5", i: "3", tags: "x", flag: "true" })).toEqual({
      n: 5,
      i: 3,
      tags: ["x"],
      flag: true,
    });
  });

  it("leaves out an optional null the schema refuses, and keeps one it accepts", () => {
    expect(coerceArguments(SCHEMA, { n: 1, tags: [], note: null, maybe: null })).toEqual({
      n: 1,
      tags: [],
      maybe: null,
    });
  });

  it("never changes its input, and leaves what it cannot convert for the check to report", () => {
    const input = { n: "many", tags: "x" };
    expect(coerceArguments(SCHEMA, input)).toEqual({ n: "many", tags: ["x"] });
    expect(input).toEqual({ n: "many", tags: "x" });
  });

  it("coerces a plain JSON Schema as one built with TypeBox (an extension's or an MCP server's)", () => {
    const plain = Type.Unsafe({
      type: "object",
      properties: {
        count: { type: "number" },
        id: { type: ["integer", "null"] },
        none: { type: ["integer", "null"] },
        level: { enum: [1, 2, "x"] },
        limits: { type: "object", additionalProperties: { type: "number" } },
      },
    });
    expect(coerceArguments(plain, { count: "4", id: "5", none: "", level: "2", limits: { a: "3", b: "z" } })).toEqual({
      count: 4,
      id: 5,
      none: null,
      level: 2,
      limits: { a: 3, b: "z" },
    });
  });

  it("keeps the null of a referenced optional property, which conversion then makes a string", () => {
    const refs = Type.Unsafe({
      type: "object",
      $defs: { Name: { type: "string" } },
      properties: { name: { $ref: "#/$defs/Name" }, note: { type: "string" } },
    });
    expect(coerceArguments(refs, { name: null, note: null })).toEqual({ name: "null" });
  });
});
