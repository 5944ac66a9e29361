/**
 * Our own schema check (shared/schema-check.ts) against TypeBox's, on our schemas: for every
 * schema it covers, it must give TypeBox's answer, valid or not, for values made from the
 * schema and for those values broken in one place. (shared/validate.ts asks TypeBox again
 * whenever ours fails a value, so a value ours passed wrongly is the failure that would matter;
 * the test holds it to both.) The checks a worker's start makes must be covered by ours, so
 * that a start does not load TypeBox (test/integration/schema-data.test.ts shows it does not).
 */
import { inspect } from "node:util";
import { Check } from "typebox/schema";
import { describe, expect, it } from "vitest";
import * as runQueueJobs from "../../cli/run/queue-jobs.js";
import * as runReport from "../../cli/run/report-schema.js";
import * as runTasks from "../../cli/run/tasks.js";
import { compileOwnCheck } from "../../shared/schema-check.js";
import * as agent from "../../shared/schema/agent.js";
import * as events from "../../shared/schema/events.js";
import * as ipc from "../../shared/schema/ipc.js";
import * as keybindings from "../../shared/schema/keybindings.js";
import * as mcp from "../../shared/schema/mcp.js";
import * as messages from "../../shared/schema/messages.js";
import * as packages from "../../shared/schema/packages.js";
import * as rpc from "../../shared/schema/rpc.js";
import * as session from "../../shared/schema/session.js";
import * as supervisorEvents from "../../shared/schema/supervisor-events.js";
import * as faux from "../../worker/providers/faux.js";
import * as models from "../../worker/providers/models.js";
import * as settings from "../../worker/resources/settings.js";
import { seededRandom } from "../support/seeded-random.js";

type Node = Record<string, unknown>;
const isRecord = (v: unknown): v is Node => typeof v === "object" && v !== null && !Array.isArray(v);
/** A TypeBox schema: TypeBox marks each with its hidden `~kind`. */
const isSchema = (v: unknown): v is Node => isRecord(v) && Object.hasOwn(v, "~kind");

/** Every schema the modules export, by name (a record of schemas, like `RpcCommandSchemas`, by `Name.key`). */
function schemasOf(modules: Record<string, Record<string, unknown>>): Map<string, Node> {
  const out = new Map<string, Node>();
  for (const [file, m] of Object.entries(modules))
    for (const [name, v] of Object.entries(m)) {
      if (isSchema(v)) out.set(`${file}.${name}`, v);
      else if (isRecord(v) && Object.values(v).some(isSchema))
        for (const [key, s] of Object.entries(v)) if (isSchema(s)) out.set(`${file}.${name}.${key}`, s);
    }
  return out;
}

const SCHEMAS = schemasOf({
  agent,
  events,
  ipc,
  keybindings,
  mcp,
  messages,
  packages,
  rpc,
  session,
  supervisorEvents,
  faux,
  models,
  settings,
  runQueueJobs,
  runReport,
  runTasks,
});

/** Values that break a schema in every way our schemas can be broken (and some they cannot). */
const ODD: unknown[] = [
  undefined,
  null,
  true,
  0,
  -0,
  -1,
  1.5,
  2 ** 53,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  10n,
  "",
  "x",
  "😀",
  "\ud800",
  "a\r\nb",
  [],
  [1],
  [undefined],
  {},
  { a: 1 },
  Object.create(null),
];

/** A value made from `schema`, usually one that passes it. */
function sample(schema: unknown, rnd: () => number, depth = 0): unknown {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
  if (!isRecord(schema) || depth > 6) return pick(ODD);
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.anyOf)) return sample(pick(schema.anyOf), rnd, depth + 1);
  const type = Array.isArray(schema.type) ? pick(schema.type) : schema.type;
  switch (type) {
    case "object": {
      const out: Node = {};
      const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      for (const [key, sub] of Object.entries(isRecord(schema.properties) ? schema.properties : {})) {
        if (required.includes(key) || rnd() < 0.6) out[key] = rnd() < 0.05 ? undefined : sample(sub, rnd, depth + 1);
      }
      if (isRecord(schema.patternProperties))
        for (const sub of Object.values(schema.patternProperties))
          for (const key of ["a", "x-1", "Key_2"].filter(() => rnd() < 0.5)) out[key] = sample(sub, rnd, depth + 1);
      if (isRecord(schema.additionalProperties) && rnd() < 0.5)
        out[pick(["extra", "b", "z9"])] = sample(schema.additionalProperties, rnd, depth + 1);
      return out;
    }
    case "array": {
      const min = typeof schema.minItems === "number" ? schema.minItems : 0;
      const max = typeof schema.maxItems === "number" ? schema.maxItems : min + 3;
      const n = min + Math.floor(rnd() * (Math.min(max, min + 3) - min + 1));
      return Array.from({ length: n }, () => sample(schema.items, rnd, depth + 1));
    }
    case "string": {
      const min = typeof schema.minLength === "number" ? schema.minLength : 0;
      const base = pick(["", "a", "model-1", "😀😀", "é", "two words", "\ud83d"]);
      return base.length >= min ? base : base + "x".repeat(min - base.length + Math.floor(rnd() * 2) - 1);
    }
    case "integer":
      return pick([0, 1, -1, 7, 1000, typeof schema.minimum === "number" ? schema.minimum : 3]);
    case "number":
      return pick([0, 0.5, -2.25, 1e6, typeof schema.minimum === "number" ? schema.minimum : 3]);
    case "boolean":
      return rnd() < 0.5;
    case "null":
      return null;
    case "undefined":
    case "void":
      return undefined;
    default:
      return pick(ODD);
  }
}

/** `value` with one place in it broken: a member replaced, removed or added, an element replaced. */
function breakOne(value: unknown, rnd: () => number): unknown {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
  if (Array.isArray(value) && value.length > 0 && rnd() < 0.7) {
    const copy = [...value];
    const i = Math.floor(rnd() * copy.length);
    copy[i] = rnd() < 0.5 ? breakOne(copy[i], rnd) : pick(ODD);
    return copy;
  }
  if (isRecord(value) && Object.getPrototypeOf(value) === Object.prototype && rnd() < 0.8) {
    const copy: Node = { ...value };
    const keys = Object.keys(copy);
    const r = rnd();
    if (keys.length > 0 && r < 0.4) {
      const key = pick(keys);
      copy[key] = rnd() < 0.5 ? breakOne(copy[key], rnd) : pick(ODD);
    } else if (keys.length > 0 && r < 0.6) delete copy[pick(keys)];
    else if (r < 0.8) copy[pick(["unknown", "extra", "constructor", "toString", "__proto__"])] = pick(ODD);
    else return pick(ODD);
    return copy;
  }
  return pick(ODD);
}

describe("our schema check", () => {
  it("finds our schemas to test", () => {
    expect(SCHEMAS.size).toBeGreaterThan(100);
  });

  it("covers every check a worker's start makes", () => {
    const start = [
      ...Object.values(rpc.RpcCommandSchemas),
      ...Object.values(session.KNOWN_ENTRY_SCHEMAS),
      session.SessionHeader,
      session.EntryBase,
      settings.SettingsFile,
    ];
    for (const schema of start) expect(compileOwnCheck(schema), JSON.stringify(schema)).toBeTypeOf("function");
  });

  it("gives TypeBox's answer on values made from each schema, and on them broken in one place", () => {
    const rnd = seededRandom(30);
    let covered = 0;
    let passed = 0;
    let failed = 0;
    for (const [name, schema] of SCHEMAS) {
      const own = compileOwnCheck(schema);
      if (own === undefined) continue;
      covered++;
      for (let i = 0; i < 60; i++) {
        const made = sample(schema, rnd);
        for (const value of [made, breakOne(made, rnd), breakOne(breakOne(made, rnd), rnd)]) {
          const theirs = Check(schema, value);
          if (own(value) !== theirs)
            expect.fail(`${name}: ours ${own(value)}, TypeBox ${theirs} for ${inspect(value)}`);
          if (theirs) passed++;
          else failed++;
        }
      }
      for (const value of ODD) expect(own(value), `${name}: ${inspect(value)}`).toBe(Check(schema, value));
    }
    // Both answers are tried often, on most of the schemas.
    expect(covered).toBeGreaterThan(SCHEMAS.size * 0.9);
    expect(passed).toBeGreaterThan(1000);
    expect(failed).toBeGreaterThan(1000);
  });

  it("gives TypeBox's answer for each keyword at its edges", () => {
    const cases: [Node, unknown[]][] = [
      [{ type: "string", minLength: 2 }, ["a", "ab", "😀", "😀😀", "\ud800\ud800", "é"]],
      [{ type: "string", maxLength: 2 }, ["abc", "ab", "😀😀", "😀😀😀", "a😀"]],
      [{ type: "string", pattern: "^[a-z]+$" }, ["abc", "ABC", "", "a\nb"]],
      [{ type: "number", minimum: 1, maximum: 2 }, [0.5, 1, 2, 2.5, Number.NaN, 1n, 3n]],
      [{ exclusiveMinimum: 0, exclusiveMaximum: 1 }, [0, 0.5, 1, "x", 0n]],
      [{ type: "integer" }, [1, 1.5, -0, 2 ** 60, Number.NaN]],
      [{ type: ["string", "null"] }, ["a", null, 1, undefined]],
      [{ type: "array", items: { type: "string" }, minItems: 1, maxItems: 2 }, [[], ["a"], ["a", 1], ["a", "b", "c"]]],
      [
        { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
        [{ a: "x" }, {}, { a: undefined }, { a: 1 }, Object.create({ a: "x" }), []],
      ],
      [
        { type: "object", properties: { a: { type: "string" } } },
        [{ a: undefined }, {}, { a: 1 }, { b: 1 }, Object.create({ a: 1 })],
      ],
      [
        { type: "object", properties: { constructor: { type: "string" } }, required: ["constructor"] },
        [{}, { constructor: "x" }, { constructor: 1 }],
      ],
      [
        {
          type: "object",
          properties: { a: { type: "string" } },
          patternProperties: { "^x-": { type: "number" } },
          additionalProperties: false,
        },
        [{ a: "x" }, { a: "x", "x-1": 1 }, { "x-1": "no" }, { b: 1 }, { "a.": 1 }],
      ],
      [{ type: "object", additionalProperties: { type: "boolean" } }, [{}, { a: true }, { a: 1 }]],
      [{ anyOf: [{ const: "a" }, { const: 1 }, { type: "null" }] }, ["a", 1, null, "b", true]],
      [{ type: "undefined" }, [undefined, null]],
      [{}, [undefined, 1, {}]],
    ];
    for (const [schema, values] of cases) {
      const own = compileOwnCheck(schema);
      expect(own, JSON.stringify(schema)).toBeTypeOf("function");
      for (const value of values)
        expect(own!(value), `${JSON.stringify(schema)}: ${inspect(value)}`).toBe(Check(schema, value));
    }
  });

  it("leaves to TypeBox a schema with a keyword it does not check", () => {
    for (const schema of [
      { type: "string", format: "email" },
      { enum: ["a", "b"] },
      { $ref: "#/$defs/a" },
      { oneOf: [{ type: "string" }] },
      { const: { a: 1 } },
      { type: "array", items: [{ type: "string" }] },
      { type: "string", "~refine": [] },
      { type: "object", properties: { a: { type: "string", format: "uri" } } },
      { type: "madeup" },
      { unknownKeyword: 1 },
    ])
      expect(compileOwnCheck(schema), JSON.stringify(schema)).toBeUndefined();
  });
});
