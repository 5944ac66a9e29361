import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { checker, compileChecker, INTERPRETED_CHECKS } from "../../shared/validate.js";
import { RpcCommandSchemas } from "../../shared/schema/rpc.js";

const Entry = Type.Object({
  type: Type.Literal("model_change"),
  provider: Type.String(),
  modelId: Type.String({ minLength: 1 }),
  tags: Type.Optional(Type.Array(Type.Union([Type.Literal("a"), Type.Literal("b")]))),
});

const cases: { name: string; schema: Parameters<typeof checker>[0]; value: unknown }[] = [
  {
    name: "a valid entry",
    schema: Entry,
    value: { type: "model_change", provider: "faux", modelId: "faux-1", tags: ["a"] },
  },
  { name: "a missing field", schema: Entry, value: { type: "model_change", provider: "faux" } },
  { name: "a wrong literal and type", schema: Entry, value: { type: "other", provider: 1, modelId: "" } },
  {
    name: "a bad union member in an array",
    schema: Entry,
    value: { type: "model_change", provider: "p", modelId: "m", tags: ["c"] },
  },
  { name: "not an object", schema: Entry, value: "text" },
  { name: "a valid rpc prompt", schema: RpcCommandSchemas.prompt, value: { type: "prompt", message: "hi" } },
  { name: "an rpc prompt without its message", schema: RpcCommandSchemas.prompt, value: { type: "prompt" } },
];

describe("checker", () => {
  it.each(cases)("answers the same for $name whether it interprets or has compiled the schema", ({ schema, value }) => {
    // A schema object of its own per case: the checker keeps its count per schema.
    const fresh = structuredClone(schema);
    const check = checker(fresh);
    const interpreted = check(value);
    for (let i = 1; i < INTERPRETED_CHECKS; i++) check(value);
    const compiled = check(value);
    expect(compiled).toEqual(interpreted);
  });

  it.each(cases)("answers the same for $name when compiled ahead, as a snapshot's build does", ({ schema, value }) => {
    const interpreted = checker(structuredClone(schema))(value);
    // A checker made before its schema is compiled ahead, and one made after.
    const before = structuredClone(schema);
    const early = checker(before);
    compileChecker(before);
    const after = structuredClone(schema);
    compileChecker(after);
    for (const check of [early, checker(before), checker(after)]) {
      expect(check(value)).toEqual(interpreted);
      expect(check(value)).toEqual(interpreted);
    }
  });

  it("names each failing field by its path", () => {
    const result = checker(structuredClone(Entry))({ type: "model_change", provider: 1, modelId: "m" });
    expect(result).toEqual({ ok: false, errors: [expect.stringMatching(/^\/provider: /)] });
  });
});
