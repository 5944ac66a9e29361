/**
 * The routing fast path's scan must never disagree with `JSON.parse`: whenever it names a
 * type, the line parses, is an object, and that is its `type`. It may only refuse (null)
 * what the parser then handles. Checked on hand-picked lines, on lines built at random,
 * and on random corruptions of valid lines.
 */
import { describe, expect, it } from "vitest";
import { scanEventType, scannedToolCallId } from "../../shared/event-type.js";
import { seededRandom as random } from "../support/seeded-random.js";

/**
 * The invariant: a named type is `JSON.parse(line).type` of a valid object line, and the
 * tool call id read with it is the parsed one ("" when there is none; null: not read).
 */
function agrees(line: string): boolean {
  const type = scanEventType(line);
  if (type === null) return true;
  const id = scannedToolCallId();
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return false;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const parsed = value as { type?: unknown; toolCallId?: unknown };
  if (parsed.type !== type) return false;
  if (id === null) return true;
  return typeof parsed.toolCallId === "string" ? id === parsed.toolCallId : id === "" && !("toolCallId" in parsed);
}

const partial = {
  role: "assistant",
  content: [{ type: "text", text: 'Some "quoted" text,\nover two lines \\ with a backslash, é, 😀 and \u2028.' }],
  usage: { input: 10, output: 200, cost: { total: 0.0012 } },
  stopReason: null,
  timestamp: 1733480000000,
};

describe("scanEventType", () => {
  it("names the type of the events a stream is made of, as JSON.parse reads it", () => {
    const lines = [
      {
        type: "message_update",
        t: 1733480000000.123,
        n: 12,
        assistantMessageEvent: { type: "text_delta", delta: "a" },
      },
      { type: "message_update", message: partial, assistantMessageEvent: { type: "text_delta", partial } },
      { type: "tool_execution_update", toolCallId: "t1", partialResult: { content: [{ type: "text", text: "x\ty" }] } },
      // The type after nested objects that have a type of their own, and after arrays.
      { message: { type: "inner" }, list: [[], [{ type: "x" }], {}], type: "message_update" },
      { type: "turn_start", empty: {}, nothing: null, yes: true, no: false, n: [-0, 1e5, -2.5e-3, 0.5, 10] },
    ];
    for (const value of lines) {
      const line = JSON.stringify(value);
      expect(scanEventType(line)).toBe(value.type);
      expect(agrees(line)).toBe(true);
    }
    // A key given twice: JSON.parse keeps the last.
    expect(scanEventType('{"type":"agent_end","type":"message_update"}')).toBe("message_update");
    expect(scanEventType('{"type":"message_update","a":{"type":"agent_end"},"type":"x"}')).toBe("x");
    // Spaces between tokens are JSON.
    expect(scanEventType('{ "type" : "message_update" , "a" : [ 1 , { } ] }')).toBe("message_update");
  });

  it("reads a top-level tool call id with the type, and says when it did not", () => {
    const idOf = (line: string) => {
      expect(scanEventType(line)).toBe("tool_execution_update");
      expect(agrees(line)).toBe(true);
      return scannedToolCallId();
    };
    expect(idOf('{"type":"tool_execution_update","toolCallId":"toolu_1","args":{"toolCallId":"x"}}')).toBe("toolu_1");
    expect(idOf('{"toolCallId":"a","type":"tool_execution_update","toolCallId":"b"}')).toBe("b");
    expect(idOf('{"type":"tool_execution_update","args":{"toolCallId":"x"}}')).toBe("");
    expect(idOf('{"type":"tool_execution_update","toolCallId":""}')).toBe("");
    // Escaped or not a string: not read (the ring parses the event for it).
    expect(idOf('{"type":"tool_execution_update","toolCallId":"t\\u0031"}')).toBeNull();
    expect(idOf('{"type":"tool_execution_update","toolCallId":7}')).toBeNull();
    expect(idOf('{"type":"tool_execution_update","toolCallId":null,"n":[1]}')).toBeNull();
  });

  it("leaves to the parser what it cannot be sure of without decoding", () => {
    const unsure = [
      // A top-level key or the type written with escapes: the parser decodes them.
      '{"type":"message_update","\\u0074ype":"agent_end"}',
      '{"type":"agent\\u005fend"}',
      '{"type":"message_update\\""}',
      // Not an object, or no string type.
      '["type","message_update"]',
      '"message_update"',
      "{}",
      '{"a":1}',
      '{"type":1}',
      '{"type":null}',
      '{"type":{"type":"message_update"}}',
      // Whitespace the writer of a line would not put there: before, after, tabs.
      ' {"type":"message_update"}',
      '{"type":"message_update"} ',
      '{"type":\t"message_update"}',
    ];
    for (const line of unsure) expect(scanEventType(line), line).toBeNull();
    // A nested key written with escapes is not the type: the scan still names it.
    expect(scanEventType('{"a":{"\\u0074ype":"x"},"type":"message_update"}')).toBe("message_update");
  });

  it("refuses every line that is not valid JSON", () => {
    const bad = [
      "",
      "{",
      '{"type":"message_update"',
      '{"type":"message_update"}}',
      '{"type":"message_update"}{}',
      '{"type":"message_update",}',
      '{"type":"message_update",,"a":1}',
      '{"type" "message_update"}',
      '{"type":"message_update" "a":1}',
      '{type:"message_update"}',
      "{'type':'message_update'}",
      '{"type":"message_update","a":[1,]}',
      '{"type":"message_update","a":[1 2]}',
      '{"type":"message_update","a":{"b"}}',
      '{"type":"message_update","a":{"b":}}',
      '{"type":"message_update","a":[}',
      '{"type":"message_update","a":{]}',
      '{"type":"message_update","a":01}',
      '{"type":"message_update","a":1.}',
      '{"type":"message_update","a":.5}',
      '{"type":"message_update","a":+1}',
      '{"type":"message_update","a":-}',
      '{"type":"message_update","a":1e}',
      '{"type":"message_update","a":1e+}',
      '{"type":"message_update","a":NaN}',
      '{"type":"message_update","a":Infinity}',
      '{"type":"message_update","a":tru}',
      '{"type":"message_update","a":nul}',
      '{"type":"message_update","a":True}',
      '{"type":"message_update","a":"\\x41"}',
      '{"type":"message_update","a":"\\u12"}',
      '{"type":"message_update","a":"\\u12G4"}',
      '{"type":"message_update","a":"\\"}',
      '{"type":"message_update","a":"tab\there"}',
      '{"type":"message_update","a":"new\nline"}',
      '{"type":"message_update","a":"nul\u0000"}',
      '{"type":"message_update","a":"unterminated}',
      '{"type":"message_update","a":"x"\u00a0}',
      '{"type":"message_update"}\u00a0',
    ];
    for (const line of bad) {
      expect(() => JSON.parse(line), line).toThrow();
      expect(scanEventType(line), line).toBeNull();
    }
  });

  it("agrees with JSON.parse on random objects", () => {
    const rnd = random(1);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
    const keys = ["type", "t", "message", "content", "text", "delta", "toolCallId", "a", "é", "\u2028", '"', "\\"];
    const strings = [
      "",
      "message_update",
      "x",
      'q"uote',
      "back\\slash",
      "new\nline",
      "tab\t",
      "\u0001",
      "é😀",
      "\ud800",
    ];
    const value = (depth: number): unknown => {
      const r = rnd();
      if (depth > 4 || r < 0.3) return pick<unknown>([null, true, false, 0, -1.5, 1e21, 123456789, ...strings]);
      if (r < 0.5) return Array.from({ length: Math.floor(rnd() * 4) }, () => value(depth + 1));
      const o: Record<string, unknown> = {};
      for (let i = Math.floor(rnd() * 5); i > 0; i--) o[pick(keys)] = value(depth + 1);
      return o;
    };
    let named = 0;
    for (let i = 0; i < 20_000; i++) {
      const o = value(1);
      const top = o !== null && typeof o === "object" && !Array.isArray(o) ? (o as Record<string, unknown>) : null;
      if (top && rnd() < 0.7) top.type = pick(["message_update", "tool_execution_update", "turn_end", 'a"b', "a\\b"]);
      if (top && rnd() < 0.3) top.toolCallId = value(3);
      const line = JSON.stringify(o);
      expect(agrees(line), line).toBe(true);
      if (scanEventType(line) !== null) named++;
      // Without an escape anywhere, a string type is always named.
      if (top && typeof top.type === "string" && !line.includes("\\")) expect(scanEventType(line), line).toBe(top.type);
    }
    expect(named).toBeGreaterThan(2_000);
  });

  it("agrees with JSON.parse on random corruptions of valid lines", () => {
    const rnd = random(2);
    const seeds = [
      JSON.stringify({ type: "message_update", t: 1.5, n: -12, e: 1e-7, a: { type: "text_delta", delta: "a b" } }),
      JSON.stringify({ type: "message_update", message: partial }),
      JSON.stringify({ type: "tool_execution_update", toolCallId: "t1", list: [1, [2, [3]], { x: null }], ok: true }),
      '{"type":"message_update","s":"\\u00e9\\n\\"\\\\\\/\\b\\f\\r\\t"}',
    ];
    const alphabet = '{}[]",:\\/ utrefalsn0123456789.-+eE\u0000\t\n\u00a0é\ud83d';
    let named = 0;
    for (let i = 0; i < 50_000; i++) {
      let line = seeds[i % seeds.length]!;
      for (let m = 1 + Math.floor(rnd() * 3); m > 0; m--) {
        const at = Math.floor(rnd() * (line.length + 1));
        const ch = alphabet[Math.floor(rnd() * alphabet.length)]!;
        const r = rnd();
        if (r < 0.35) line = line.slice(0, at) + line.slice(at + 1);
        else if (r < 0.7) line = line.slice(0, at) + ch + line.slice(at);
        else line = line.slice(0, at) + ch + line.slice(at + 1);
      }
      expect(agrees(line), line).toBe(true);
      if (scanEventType(line) !== null) named++;
    }
    // Some corruptions are still valid JSON (a digit more, a space): those are named too.
    expect(named).toBeGreaterThan(100);
  });
});
