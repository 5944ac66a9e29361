/**
 * Tool arguments that fail their schema, each with the error lines pi 1.6.0 words for it
 * (`  - path: message`, in pi's order), or, for arguments pi's coercion makes valid, the
 * value the tool gets. test/worker/arg-errors.test.ts holds ours to these lines;
 * test/integration/tool-argument-errors-oracle.test.ts holds pi 1.6.0's own validation to
 * them, so the lines are pi's and not only ours.
 */
import type { TSchema } from "typebox";
import * as Type from "typebox/type";

/** One table row: a schema, the arguments the model sent, and pi's verdict. */
export interface ArgumentCase {
  name: string;
  schema: TSchema;
  args: Record<string, unknown>;
  /** The error lines, or absent when the (coerced) arguments pass. */
  errors?: string[];
  /** The arguments the tool runs with, when they pass. */
  value?: Record<string, unknown>;
}

/** pi-ai's StringEnum: a string schema with an `enum` (what pi's own tools and many extensions use). */
const StringEnum = (values: string[]) => Type.Unsafe<string>({ type: "string", enum: values });

const Edit = Type.Object(
  {
    path: Type.String(),
    edits: Type.Array(Type.Object({ oldText: Type.String(), newText: Type.String() }), { minItems: 1 }),
  },
  { additionalProperties: false },
);

const Contact = Type.Object({
  name: Type.String({ minLength: 2, maxLength: 8 }),
  mail: Type.String({ format: "email" }),
  site: Type.Optional(Type.String({ format: "uri" })),
  id: Type.Optional(Type.String({ format: "uuid" })),
  born: Type.Optional(Type.String({ format: "date" })),
  at: Type.Optional(Type.String({ format: "date-time" })),
  host: Type.Optional(Type.String({ format: "hostname" })),
  ip: Type.Optional(Type.String({ format: "ipv4" })),
  custom: Type.Optional(Type.String({ format: "not-a-known-format" })),
  code: Type.Optional(Type.String({ pattern: "^[A-Z]{3}-\\d+$" })),
  address: Type.Optional(
    Type.Object({
      street: Type.String(),
      zip: Type.String({ pattern: "^\\d{5}$" }),
      geo: Type.Optional(Type.Object({ lat: Type.Number({ minimum: -90, maximum: 90 }), lon: Type.Number() })),
    }),
  ),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 3, uniqueItems: true })),
});

const Shape = Type.Union([
  Type.Object({ kind: Type.Literal("circle"), radius: Type.Number({ exclusiveMinimum: 0 }) }),
  Type.Object({ kind: Type.Literal("square"), side: Type.Number() }),
]);

const MANY = Array.from({ length: 23 }, (_, i) => `v${i}`);

/** The table. */
export const ARGUMENT_CASES: ArgumentCase[] = [
  { name: "missing required properties", schema: Edit, args: {}, errors: ["  - path: missing", "  - edits: missing"] },
  {
    name: "wrong types that do not coerce",
    schema: Type.Object({ path: Type.String(), limit: Type.Optional(Type.Number()), all: Type.Boolean() }),
    args: { path: { name: "a" }, limit: "ten", all: "maybe" },
    errors: [
      "  - path: expected string, got object",
      "  - limit: expected number, got string",
      "  - all: expected boolean, got string",
    ],
  },
  {
    name: "an array where a string belongs, and an integer's report",
    schema: Type.Object({ command: Type.String(), n: Type.Integer() }),
    args: { command: ["ls", "-la"], n: "1.5x" },
    errors: ["  - command: expected string, got array", "  - n: expected integer, got string"],
  },
  {
    name: "values the coercion makes valid",
    schema: Type.Object({
      n: Type.Number(),
      i: Type.Integer(),
      b: Type.Boolean(),
      s: Type.String(),
      list: Type.Array(Type.String()),
      opt: Type.Optional(Type.Number()),
    }),
    args: { n: "5", i: "7", b: "true", s: 42, list: "one", opt: null },
    value: { n: 5, i: 7, b: true, s: "42", list: ["one"] },
  },
  {
    name: "nested objects and array items, with dotted paths",
    schema: Edit,
    args: { path: "a.ts", edits: [{ oldText: "x", newText: "y" }, { oldText: { a: 1 } }, "z"] },
    errors: [
      "  - edits.1.newText: missing",
      "  - edits.1.oldText: expected string, got object",
      "  - edits.2: expected object, got string",
    ],
  },
  {
    name: "unknown fields of a closed object, and too few items",
    schema: Edit,
    args: { path: "a.ts", edits: [], force: true, "a/b~c": 1 },
    errors: ["  - edits: expected at least 1 items", "  - force: unknown field", "  - a/b~c: unknown field"],
  },
  {
    name: "enum, with its values listed",
    schema: Type.Object({ mode: StringEnum(["fast", "slow"]) }),
    args: { mode: "medium" },
    errors: ['  - mode: expected one of ["fast","slow"]'],
  },
  {
    name: "a long enum cut after 20 values",
    schema: Type.Object({ v: StringEnum(MANY) }),
    args: { v: "none" },
    errors: [`  - v: expected one of ${JSON.stringify(MANY.slice(0, 20)).slice(0, -1)}, ... and 3 more]`],
  },
  {
    name: "a literal, and a union of literals (the first one is named)",
    schema: Type.Object({
      version: Type.Literal(2),
      level: Type.Union([Type.Literal("low"), Type.Literal("high")]),
    }),
    args: { version: 3, level: "mid" },
    errors: ["  - version: expected 2", '  - level: expected "low"'],
  },
  {
    name: "a union of types blames its first branch",
    schema: Type.Object({ target: Type.Union([Type.String(), Type.Array(Type.String())]) }),
    args: { target: { path: "x" } },
    errors: ["  - target: expected string, got object"],
  },
  {
    name: "a union of objects blames the branch declaring most keys",
    schema: Type.Object({
      where: Type.Union([
        Type.Object({ line: Type.Integer() }),
        Type.Object({ from: Type.Integer(), to: Type.Integer() }),
      ]),
    }),
    args: { where: { from: 1, to: "end" } },
    errors: ["  - where.to: expected integer, got string"],
  },
  {
    name: "a tagged union follows its tag",
    schema: Type.Object({ shape: Shape }),
    args: { shape: { kind: "circle", radius: 0 } },
    errors: ["  - shape.radius: expected > 0"],
  },
  {
    name: "a tagged union with an unknown tag",
    schema: Type.Object({ shape: Shape }),
    args: { shape: { kind: "triangle" } },
    errors: ['  - shape.kind: expected one of ["circle","square"]'],
  },
  {
    name: "formats pi checks, and one it does not know",
    schema: Contact,
    args: {
      name: "Al",
      mail: "not-an-address",
      site: "no scheme",
      id: "123",
      born: "2024-13-01",
      at: "yesterday",
      host: "-bad-",
      ip: "300.1.1.1",
      custom: "anything",
    },
    errors: [
      "  - mail: expected format email",
      "  - site: expected format uri",
      "  - id: expected format uuid",
      "  - born: expected format date",
      "  - at: expected format date-time",
      "  - host: expected format hostname",
      "  - ip: expected format ipv4",
    ],
  },
  {
    name: "string lengths count code points, patterns, nested paths",
    schema: Contact,
    args: {
      name: "😀",
      mail: "a@b.co",
      code: "abc-1",
      address: { zip: "1234", geo: { lat: 91, lon: "east" } },
      tags: ["a", "", "a", "b"],
    },
    errors: [
      "  - name: expected at least 2 characters",
      "  - code: expected to match ^[A-Z]{3}-\\d+$",
      "  - address.street: missing",
      "  - address.zip: expected to match ^\\d{5}$",
      "  - address.geo.lat: expected <= 90",
      "  - address.geo.lon: expected number, got string",
      "  - tags.1: expected at least 1 characters",
      "  - tags: expected at most 3 items",
      "  - tags: expected unique items",
    ],
  },
  {
    name: "several bounds of one number",
    schema: Type.Object({
      a: Type.Number({ minimum: 1, multipleOf: 0.5 }),
      b: Type.Integer({ exclusiveMaximum: 10 }),
      c: Type.Number({ multipleOf: 0.1 }),
      d: Type.String({ maxLength: 3 }),
    }),
    args: { a: 0.3, b: 10, c: 0.35, d: "long" },
    errors: [
      "  - a: expected >= 1",
      "  - a: expected a multiple of 0.5",
      "  - b: expected < 10",
      "  - c: expected a multiple of 0.1",
      "  - d: expected at most 3 characters",
    ],
  },
  {
    name: "a record's values (patternProperties)",
    schema: Type.Object({ env: Type.Record(Type.String(), Type.Number()) }),
    args: { env: { A: 1, B: "x", C: [] } },
    errors: ["  - env.B: expected number, got string", "  - env.C: expected number, got array"],
  },
  {
    name: "a nullable value",
    schema: Type.Object({ note: Type.Union([Type.String(), Type.Null()]) }),
    args: { note: { text: "x" } },
    errors: ["  - note: expected string, got object"],
  },
  {
    name: "a plain JSON Schema: type lists, dependencies, not, if/then, contains",
    schema: Type.Unsafe({
      type: "object",
      properties: {
        id: { type: ["string", "integer"] },
        user: { type: "string" },
        password: { type: "string" },
        mode: { not: { const: "root" } },
        items: { type: "array", contains: { type: "integer" } },
        kind: { type: "string" },
        size: { type: "number" },
      },
      dependentRequired: { user: ["password"] },
      if: { properties: { kind: { const: "big" } }, required: ["kind"] },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's keyword
      then: { properties: { size: { minimum: 100 } } },
      minProperties: 2,
    }),
    args: { id: [1], user: "me", mode: "root", items: ["a"], kind: "big", size: 5 },
    errors: [
      "  - id: expected string or integer, got array",
      "  - mode: must not match the schema in not",
      "  - items: expected at least 1 matching item",
      "  - password: required when user is present",
      "  - size: expected >= 100",
    ],
  },
  {
    name: "references to $defs",
    schema: Type.Unsafe({
      type: "object",
      $defs: { Point: { type: "object", properties: { x: { type: "number" } }, required: ["x"] } },
      properties: { from: { $ref: "#/$defs/Point" }, to: { $ref: "#/$defs/Point" } },
      required: ["from"],
    }),
    args: { from: {}, to: { x: "far" } },
    errors: ["  - from.x: missing", "  - to.x: expected number, got string"],
  },
  {
    name: "a closed intersection (unevaluatedProperties: false)",
    schema: Type.Object({
      both: Type.Intersect([Type.Object({ a: Type.Number() }), Type.Object({ b: Type.String() })], {
        unevaluatedProperties: false,
      }),
    }),
    args: { both: { a: 1, b: "x", c: true } },
    errors: ["  - both.c: unknown field"],
  },
  {
    name: "unevaluated properties with a schema of their own",
    schema: Type.Unsafe({
      type: "object",
      properties: { kind: { type: "string" } },
      anyOf: [{ properties: { x: { type: "number" } } }],
      unevaluatedProperties: { type: "string" },
    }),
    args: { kind: "k", x: 1, y: 5 },
    errors: ["  - y: expected string, got integer"],
  },
  {
    name: "unevaluated items after a tuple's prefix",
    schema: Type.Unsafe({
      type: "object",
      properties: { list: { type: "array", prefixItems: [{ type: "string" }], unevaluatedItems: false } },
    }),
    args: { list: ["a", 1, 2] },
    errors: ["  - list.1: unexpected item", "  - list.2: unexpected item"],
  },
  {
    name: "oneOf that more than one branch matches",
    schema: Type.Unsafe({
      type: "object",
      properties: { n: { oneOf: [{ type: "number" }, { type: "integer" }] } },
    }),
    args: { n: 3 },
    errors: ["  - n: matches more than one alternative"],
  },
];
