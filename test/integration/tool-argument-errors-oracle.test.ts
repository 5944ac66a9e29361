/**
 * Tool calls whose arguments fail their schema, on our worker and on upstream pi 1.6.0 as
 * the oracle: the tool result text the model reads (`Validation failed for tool "x":` and
 * one `  - path: message` line per problem, then the arguments), its `details: {}` and
 * `isError`, and pi's coercion before the check. The same mock model script calls an
 * extension's tools (TypeBox with formats, nested objects, unions, enums, a closed
 * intersection; a plain JSON Schema with type lists, references and dependencies), the
 * built-in read, edit, bash and write with wrong types, and a tool that does not exist; the
 * transcripts (events, messages, and what the next request carries to the model) must be
 * equal. Then pi's own validation function (pi-ai's
 * `validateToolArguments`, which its agent loop calls) words the unit table of
 * test/worker/arg-errors-cases.ts, and arguments changed at random from that table, as
 * ours does. Skipped when test/upstream is not installed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { checkToolArguments } from "../../worker/agent/arg-errors.js";
import { useOracleFixture } from "../support/oracle-fixture.js";
import { transcriptsOf } from "../support/oracle-transcript.js";
import { PI16_PACKAGE } from "../support/upstream-pi16.js";
import { UPSTREAM } from "../support/upstream-oracle.js";
import { ARGUMENT_CASES } from "../worker/arg-errors-cases.js";

const { servers, dirs, dir } = useOracleFixture();

const EXTENSION = String.raw`
import { Type } from "typebox";
import { StringEnum } from "@earendil-works/pi-ai";

const echo = async (_id, params) => ({ content: [{ type: "text", text: "ran with " + JSON.stringify(params) }], details: {} });

export default function (pi) {
  pi.registerTool({
    name: "contact",
    label: "contact",
    description: "saves a contact",
    parameters: Type.Object({
      name: Type.String({ minLength: 2, maxLength: 20 }),
      mail: Type.String({ format: "email" }),
      site: Type.Optional(Type.String({ format: "uri" })),
      born: Type.Optional(Type.String({ format: "date" })),
      id: Type.Optional(Type.String({ format: "uuid" })),
      role: Type.Optional(StringEnum(["admin", "user"])),
      level: Type.Optional(Type.Union([Type.Literal("low"), Type.Literal("high")])),
      address: Type.Optional(
        Type.Object(
          {
            street: Type.String(),
            zip: Type.String({ pattern: "^\\d{5}$" }),
            geo: Type.Optional(Type.Object({ lat: Type.Number({ minimum: -90, maximum: 90 }), lon: Type.Number() })),
          },
          { additionalProperties: false },
        ),
      ),
      tags: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 2 })),
      shape: Type.Optional(
        Type.Union([
          Type.Object({ kind: Type.Literal("circle"), radius: Type.Number({ exclusiveMinimum: 0 }) }),
          Type.Object({ kind: Type.Literal("square"), side: Type.Integer() }),
        ]),
      ),
      meta: Type.Optional(
        Type.Intersect([Type.Object({ a: Type.Number() }), Type.Object({ b: Type.String() })], {
          unevaluatedProperties: false,
        }),
      ),
      age: Type.Optional(Type.Integer({ minimum: 0 })),
      vip: Type.Optional(Type.Boolean()),
    }),
    execute: echo,
  });
  pi.registerTool({
    name: "lookup",
    label: "lookup",
    description: "looks a record up (a plain JSON Schema, as MCP servers send them)",
    parameters: {
      type: "object",
      $defs: { Range: { type: "object", properties: { from: { type: "integer" }, to: { type: "integer" } }, required: ["from"] } },
      properties: {
        key: { type: ["string", "integer"] },
        limit: { type: ["integer", "null"] },
        range: { $ref: "#/$defs/Range" },
        user: { type: "string" },
        token: { type: "string" },
        sort: { enum: ["asc", "desc", 1, -1] },
      },
      required: ["key"],
      dependentRequired: { user: ["token"] },
    },
    execute: echo,
  });
}
`;

type Call = { name: string; arguments: Record<string, unknown> };

/** The calls of the model, one turn each: every kind of failure, and arguments the coercion makes valid. */
const CALLS: Call[] = [
  { name: "contact", arguments: {} },
  {
    name: "contact",
    arguments: {
      name: "A",
      mail: "not-a-mail",
      site: "no scheme",
      born: "2024-13-40",
      id: "123",
      role: "root",
      level: "mid",
      tags: ["a", "", "c"],
      age: -1,
    },
  },
  {
    name: "contact",
    arguments: {
      name: { first: "Ann" },
      mail: ["a@b.co"],
      address: { street: 5, zip: "12", geo: { lat: 100, lon: "east" }, city: "Oslo" },
      shape: { kind: "circle", radius: 0 },
      vip: "maybe",
    },
  },
  { name: "contact", arguments: { name: "Ann", mail: "a@b.co", shape: { kind: "triangle" } } },
  { name: "contact", arguments: { name: "Ann", mail: "a@b.co", shape: { kind: "square", side: "two" } } },
  { name: "contact", arguments: { name: "Ann", mail: "a@b.co", meta: { a: "1", b: "x", c: true } } },
  { name: "contact", arguments: { name: "Ann", mail: "a@b.co", age: "42", vip: "true", tags: "solo", site: null } },
  { name: "lookup", arguments: { key: [1], limit: "many", range: { to: "9" }, user: "me", sort: "up" } },
  { name: "lookup", arguments: { key: 7, limit: "5", range: { from: "1" }, sort: "1" } },
  { name: "read", arguments: {} },
  { name: "read", arguments: { path: { file: "a.txt" } } },
  { name: "bash", arguments: { command: ["ls", "-la"], timeout: "soon" } },
  { name: "bash", arguments: { command: "echo ran", timeout: 0 } },
  { name: "bash", arguments: { command: "echo ran", timeout: "3000000" } },
  { name: "edit", arguments: { path: "a.txt", edits: "not json" } },
  { name: "edit", arguments: { path: "a.txt", edits: [{ oldText: "a" }, { oldText: ["x"], newText: "y" }] } },
  { name: "edit", arguments: { oldText: "a", newText: "b" } },
  { name: "edit", arguments: { path: "a.txt", edits: '{"oldText":"a"}' } },
  { name: "edit", arguments: { edits: { oldText: "a", newText: "b" } } },
  { name: "edit", arguments: { path: "a.txt", edits: [], note: "x" } },
  { name: "write", arguments: { path: "a.txt" } },
  { name: "teleport", arguments: { to: "mars" } },
  // pi's built-in counts are Type.Number: a string is a wrong type, a number of any kind is valid.
  { name: "read", arguments: { path: "a.txt", offset: "start", limit: "all" } },
  { name: "grep", arguments: { pattern: "x", context: "two", limit: [5] } },
  { name: "find", arguments: { pattern: "*", limit: "all" } },
  { name: "ls", arguments: { limit: "all" } },
];

describe.skipIf(!UPSTREAM["1.6.0"].installed)("tool argument errors: our worker and upstream pi 1.6.0", () => {
  it("answers the model with the same tool results for arguments that fail their schema", async () => {
    const extension = join(dir("tool-argument-errors-"), "tools.ts");
    writeFileSync(extension, EXTENSION);
    const args = ["-e", extension, "--tools", "+grep,+find,+ls"];
    const t = await transcriptsOf(servers, dirs, { pi: "1.6.0", args }, async (s) => {
      const replies = CALLS.map((call, i) => ({ toolCalls: [{ id: `call-${i}`, ...call }] }));
      await s.run("call the tools", ...replies, { text: "done" });
    });
    expect(t.ours.lines).toEqual(t.upstream.lines);
    expect(t.ours.requests.map((r) => r.messages)).toEqual(t.upstream.requests.map((r) => r.messages));
    // Upstream's own words, so a change on either side is told apart from a difference.
    const results = (t.upstream.lines as { type: string; message?: { role: string; content: { text: string }[] } }[])
      .filter((l) => l.type === "message_end" && l.message?.role === "toolResult")
      .map((l) => l.message);
    expect(results).toHaveLength(CALLS.length);
    expect(results[0]).toMatchObject({
      isError: true,
      details: {},
      content: [
        { type: "text", text: expect.stringContaining('tool "contact":\n  - name: missing\n  - mail: missing') },
      ],
    });
    const text = JSON.stringify(results);
    for (const line of [
      "mail: expected format email",
      "address.geo.lon: expected number, got string",
      "address.city: unknown field",
      'shape.kind: expected one of [\\"circle\\",\\"square\\"]',
      "key: expected string or integer, got array",
      "token: required when user is present",
      "command: expected string, got array",
      "edits.0: expected object, got string",
      "meta.c: unknown field",
      "Edit tool input is invalid. edits must contain at least one replacement.",
      "Invalid timeout: must be a finite number of seconds",
      "Invalid timeout: maximum is 2147483.647 seconds",
      "Tool teleport not found",
      "limit: expected number, got string",
      'ran with {\\"name\\":\\"Ann\\",\\"mail\\":\\"a@b.co\\",\\"age\\":42,\\"vip\\":true,\\"tags\\":[\\"solo\\"]}',
    ])
      expect(text).toContain(line);
  }, 120_000);

  it("runs an edit with fields pi's schema does not name, as pi does", async () => {
    const t = await transcriptsOf(
      servers,
      dirs,
      { pi: "1.6.0", prepareProject: (p) => writeFileSync(join(p, "a.txt"), "hello world\n") },
      async (s) => {
        const edit = { path: "a.txt", edits: [{ oldText: "hello", newText: "bye", replaceAll: false }], dryRun: false };
        await s.run("edit", { toolCalls: [{ id: "e1", name: "edit", arguments: edit }] }, { text: "done" });
        s.note(readFileSync(join(s.project, "a.txt"), "utf8"));
      },
    );
    const outcome = (lines: unknown[]) =>
      (lines as { type: string; isError?: boolean }[])
        .filter((l) => l.type === "tool_execution_end")
        .map((l) => l.isError);
    expect(outcome(t.ours.lines)).toEqual([false]);
    expect(outcome(t.upstream.lines)).toEqual([false]);
    expect(t.ours.notes).toEqual(["bye world\n"]);
    expect(t.upstream.notes).toEqual(t.ours.notes);
  }, 60_000);

  it("runs grep and ls with counts of 0, below 0 and with a fraction, as pi does", async () => {
    const t = await transcriptsOf(
      servers,
      dirs,
      {
        pi: "1.6.0",
        args: ["--tools", "+grep,+ls"],
        prepareProject: (p) => writeFileSync(join(p, "a.txt"), "one\ntwo\nneedle\nfour\nfive\nsix\n"),
      },
      async (s) => {
        const calls = [
          { name: "grep", arguments: { pattern: "needle", context: 1.5, limit: 0 } },
          { name: "grep", arguments: { pattern: "needle", context: -2, limit: -4 } },
          { name: "grep", arguments: { pattern: "needle", context: 0.5, limit: 2.5 } },
          { name: "ls", arguments: { limit: 0 } },
          { name: "ls", arguments: { limit: -1.5 } },
        ];
        await s.run("search", ...calls.map((c, i) => ({ toolCalls: [{ id: `n${i}`, ...c }] })), { text: "done" });
      },
    );
    // The text and outcome only: grep's and ls's `details` are still our own (backend, counts).
    const results = (lines: unknown[]) =>
      (lines as { type: string; message?: { role: string; isError: boolean; content: { text: string }[] } }[])
        .filter((l) => l.type === "message_end" && l.message?.role === "toolResult")
        .map((l) => ({ text: l.message!.content[0]!.text, isError: l.message!.isError }));
    expect(results(t.ours.lines)).toEqual(results(t.upstream.lines));
    expect(results(t.upstream.lines).map((r) => r.text)).toEqual([
      "a.txt-2- two\na.txt:3: needle\na.txt-4- four",
      "a.txt:3: needle",
      "a.txt:3: needle",
      "a.txt",
      "a.txt",
    ]);
  }, 60_000);

  it("words the unit table, and arguments changed at random from it, as pi-ai's validateToolArguments", async () => {
    const validation = join(PI16_PACKAGE, "../pi-ai/dist/utils/validation.js");
    const { validateToolArguments } = (await import(pathToFileURL(validation).href)) as {
      validateToolArguments(
        tool: { name: string; parameters: unknown },
        call: { name: string; arguments: unknown },
      ): unknown;
    };
    const pi = (schema: unknown, args: unknown) => {
      try {
        return {
          ok: true,
          value: validateToolArguments({ name: "t", parameters: schema }, { name: "t", arguments: args }),
        };
      } catch (error) {
        return { ok: false, text: (error as Error).message };
      }
    };
    for (const c of ARGUMENT_CASES) {
      expect(checkToolArguments("t", c.schema, c.args), c.name).toEqual(pi(c.schema, structuredClone(c.args)));
    }
    const random = seeded(20261206);
    let compared = 0;
    for (const c of ARGUMENT_CASES) {
      for (let n = 0; n < 100; n++) {
        const args = vary(c.args, random, 0) as Record<string, unknown>;
        expect(checkToolArguments("t", c.schema, args), `${c.name}: ${JSON.stringify(args)}`).toEqual(
          pi(c.schema, structuredClone(args)),
        );
        compared++;
      }
    }
    expect(compared).toBe(ARGUMENT_CASES.length * 100);
  });
});

/** A repeatable pseudo-random source in [0, 1). */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

/** Values a model might send in the wrong place: numeric and boolean strings, nulls, empty containers. */
const ATOMS: unknown[] = [
  ...["", "0", "1", "5", "-3", "3.5", "abc", "true", "false", "null", "TRUE", "a@b.co", "2024-01-01", "ABC-12"],
  ...["12345", "circle", "square", "fast", "😀x", "v3", "big", "root"],
  ...[null, 0, 1, 2, -1, 3.5, 100, 91, true, false, [], {}, ["x"], [1, 2], { a: 1 }],
];

/** `value` with members dropped, replaced, added or varied in turn, at random. */
function vary(value: unknown, random: () => number, depth: number): unknown {
  const atom = () => ATOMS[Math.floor(random() * ATOMS.length)];
  if (depth > 3) return atom();
  const r = random();
  if (Array.isArray(value)) {
    if (r < 0.3) return atom();
    return [
      ...value.map((x) => (random() < 0.5 ? vary(x, random, depth + 1) : x)),
      ...(random() < 0.2 ? [atom()] : []),
    ];
  }
  if (typeof value === "object" && value !== null) {
    if (r < 0.15 && depth > 0) return atom();
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(value)) {
      const q = random();
      if (q >= 0.15) out[k] = q < 0.6 ? vary(x, random, depth + 1) : x;
    }
    if (random() < 0.2) out[["extra", "kind", "x", "side", "radius", "password"][Math.floor(random() * 6)]] = atom();
    return out;
  }
  return r < 0.7 ? atom() : value;
}
