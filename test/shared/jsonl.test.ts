import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import {
  fitLine,
  JsonlWriter,
  LineSplitter,
  type LineTooLongError,
  jsonBytesOfFrozen,
  parseJsonLine,
  peekLineHead,
  withItemsWire,
  wireOf,
  withWire,
} from "../../shared/jsonl.js";

function split(chunks: (string | Buffer)[], maxLineBytes?: number) {
  const lines: string[] = [];
  const errors: LineTooLongError[] = [];
  const s = new LineSplitter({ maxLineBytes, onLine: (l) => lines.push(l), onError: (e) => errors.push(e) });
  for (const c of chunks) s.push(c);
  s.end();
  return { lines, errors };
}

describe("LineSplitter", () => {
  it.each([
    ["one line", ['{"a":1}\n'], ['{"a":1}']],
    ["two lines in one chunk", ["a\nb\n"], ["a", "b"]],
    ["a line split across chunks", ['{"a"', ":1}\n"], ['{"a":1}']],
    ["CRLF strips the CR", ["a\r\nb\r\n"], ["a", "b"]],
    ["a final line without LF", ["a\nb"], ["a", "b"]],
    ["U+2028 and U+2029 stay inside the line", ['{"t":"x\u2028y\u2029z"}\n'], ['{"t":"x\u2028y\u2029z"}']],
    ["a lone CR in the middle is kept", ["a\rb\n"], ["a\rb"]],
    ["empty lines are passed on", ["\n\n"], ["", ""]],
  ])("%s", (_name, chunks, expected) => {
    expect(split(chunks).lines).toEqual(expected);
  });

  it("keeps multi-byte characters split across chunks intact", () => {
    const bytes = Buffer.from('{"t":"héllo ✓"}\n', "utf8");
    const chunks = [...bytes].map((b) => Buffer.from([b]));
    expect(split(chunks).lines).toEqual(['{"t":"héllo ✓"}']);
  });

  it("rejects a line over the limit with an error and resumes after it", () => {
    const { lines, errors } = split(["ok\n", "x".repeat(50), "x".repeat(50), "\nnext\n"], 64);
    expect(lines).toEqual(["ok", "next"]);
    expect(errors).toHaveLength(1);
    expect(errors[0].message).toMatch(/exceeds the 64-byte limit/);
    expect(errors[0].seenBytes).toBe(100);
  });

  it("never buffers more than the limit of an endless line", () => {
    const errors: LineTooLongError[] = [];
    const s = new LineSplitter({ maxLineBytes: 1024, onLine: () => undefined, onError: (e) => errors.push(e) });
    for (let i = 0; i < 1000; i++) s.push("y".repeat(1000));
    expect((s as unknown as { size: number }).size).toBe(0);
    s.push("\n");
    expect(errors).toHaveLength(1);
  });
});

describe("the head of an oversized line", () => {
  it("is kept (first 256 bytes) so a reader can tell what it was", () => {
    const big = `{"type":"agent_end","id":"r-7","messages":[${'"x",'.repeat(100)}"y"]}`;
    const { errors } = split([big.slice(0, 30), big.slice(30), "\n"], 64);
    expect(errors).toHaveLength(1);
    expect(errors[0].head).toBe(big.slice(0, 256));
    expect(peekLineHead(errors[0].head)).toEqual({ type: "agent_end", id: "r-7" });
  });

  it.each([
    ['{"type":"response","id":"a1","command":"prompt"', { type: "response", id: "a1" }],
    ['{"id":"z","type":"prompt","message":"aaaa', { type: "prompt", id: "z" }],
    ['{"message":"aaaa', {}],
    ["not json at all", {}],
  ])("peekLineHead(%j)", (head, expected) => {
    expect(peekLineHead(head)).toEqual(expected);
  });
});

describe("fitLine", () => {
  const agentEnd = {
    type: "agent_end",
    messages: Array.from({ length: 200 }, (_, i) => ({
      role: "toolResult",
      i,
      content: [{ type: "text", text: "z".repeat(60_000) }],
    })),
  };
  it("leaves a line that fits alone", () => {
    expect(fitLine({ type: "x", a: "b" }, 100)).toEqual({ line: '{"type":"x","a":"b"}', cut: false });
  });

  it("cuts long strings of a 12 MB agent_end to fit, keeping every message and its shape", () => {
    const max = 4 * 1024 * 1024;
    const { line, cut } = fitLine(agentEnd, max);
    expect(cut).toBe(true);
    expect(Buffer.byteLength(line)).toBeLessThanOrEqual(max);
    const back = JSON.parse(line) as typeof agentEnd;
    expect(back.type).toBe("agent_end");
    expect(back.messages.map((m) => m.i)).toEqual(agentEnd.messages.map((m) => m.i));
    expect(back.messages[0].content[0].text).toMatch(/characters cut: the event was over 4194304 bytes\]$/);
  });

  it("counts bytes, not characters", () => {
    const { line } = fitLine({ type: "t", text: "é".repeat(3000) }, 4096);
    expect(Buffer.byteLength(line)).toBeLessThanOrEqual(4096);
  });

  it("keeps only the type when no string cut is enough", () => {
    const many = { type: "agent_end", messages: Array.from({ length: 5000 }, (_, i) => ({ i })) };
    expect(JSON.parse(fitLine(many, 1000).line)).toEqual({
      type: "agent_end",
      truncated: true,
      bytes: JSON.stringify(many).length,
    });
  });

  it("is what JsonlWriter with a limit writes", async () => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on("data", (c: Buffer) => chunks.push(c));
    const writer = new JsonlWriter(out, 4 * 1024 * 1024);
    await writer.write(agentEnd);
    await writer.flush();
    const text = Buffer.concat(chunks).toString("utf8");
    expect(text.endsWith("\n")).toBe(true);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(4 * 1024 * 1024 + 1);
  });
});

describe("parseJsonLine", () => {
  it("parses an object", () => expect(parseJsonLine('{"a":1}')).toEqual({ ok: true, value: { a: 1 } }));
  it("names the problem for bad JSON", () => {
    const r = parseJsonLine("{nope");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(/not valid JSON/);
  });
});

describe("JsonlWriter", () => {
  it("writes one line per object, in order", async () => {
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on("data", (c) => chunks.push(c.toString()));
    const w = new JsonlWriter(out);
    void w.write({ a: 1 });
    void w.write({ b: "x\u2028y" });
    await w.flush();
    await new Promise((r) => setImmediate(r));
    expect(chunks.join("")).toBe('{"a":1}\n{"b":"x\u2028y"}\n');
  });

  it("waits for drain when the stream's buffer is full", async () => {
    const written: string[] = [];
    let release: (() => void) | null = null;
    const slow = new Writable({
      highWaterMark: 16,
      write(chunk, _enc, cb) {
        written.push(chunk.toString());
        release = () => cb();
      },
    });
    const w = new JsonlWriter(slow);
    const first = w.write({ payload: "x".repeat(32) });
    const second = w.write({ n: 2 });
    await new Promise((r) => setImmediate(r));
    expect(written).toHaveLength(1);
    let secondDone = false;
    void second.then(() => (secondDone = true));
    await new Promise((r) => setImmediate(r));
    expect(secondDone).toBe(false);
    release!();
    await first;
    await new Promise((r) => setImmediate(r));
    release!();
    await second;
    expect(written).toHaveLength(2);
  });

  it("says it is behind while the stream's buffer is full, until every queued line is handed over", async () => {
    let release: (() => void) | null = null;
    const slow = new Writable({
      highWaterMark: 16,
      write(_chunk, _enc, cb) {
        release = () => cb();
      },
    });
    const w = new JsonlWriter(slow);
    expect(w.behind()).toBeUndefined();
    void w.write({ payload: "x".repeat(32) });
    void w.write({ n: 2 });
    await new Promise((r) => setImmediate(r));
    const behind = w.behind();
    expect(behind).toBeInstanceOf(Promise);
    let caughtUp = false;
    void behind!.then(() => (caughtUp = true));
    release!();
    await new Promise((r) => setImmediate(r));
    release!();
    await behind;
    expect(caughtUp).toBe(true);
    expect(w.behind()).toBeUndefined();
  });

  it("sends a value's attached wire text instead of serialising it again", async () => {
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on("data", (c) => chunks.push(c.toString()));
    const w = new JsonlWriter(out);
    const value = withWire({ id: "x", type: "get_state" }, '{"id":"x","type":"get_state"}');
    expect(Object.keys(value)).toEqual(["id", "type"]);
    void w.write(value);
    await w.flush();
    await new Promise((r) => setImmediate(r));
    expect(chunks.join("")).toBe('{"id":"x","type":"get_state"}\n');
  });

  it("attaches a list's JSON made from each frozen entry's own bytes, once per entry", () => {
    const text = (wire: ReturnType<typeof wireOf>) =>
      typeof wire === "string" ? wire : Buffer.concat(wire!).toString();
    const a = Object.freeze({ name: "a", n: 1 });
    const b = Object.freeze({ name: "b", note: 'line\u2028sep "q" é' });
    const list = withItemsWire<object>([a, b]);
    expect(Object.keys(list)).toEqual(["0", "1"]);
    expect(text(wireOf(list))).toBe(JSON.stringify([a, b]));
    // What a writer sends follows the list as it is when written.
    const c = Object.freeze({ name: "c", n: 3 });
    list.push(c);
    expect(JSON.parse(text(wireOf(list)))).toEqual([a, b, c]);
    expect(text(wireOf(withItemsWire([])))).toBe("[]");
    expect(wireOf({ plain: true })).toBeUndefined();
  });

  it("keeps the JSON of frozen values only: a value that may still change is serialised each time", () => {
    const frozen = Object.freeze({ n: 1 });
    expect(jsonBytesOfFrozen(frozen).toString()).toBe('{"n":1}');
    expect(jsonBytesOfFrozen(frozen)).toBe(jsonBytesOfFrozen(frozen));
    const open = { n: 1 };
    expect(jsonBytesOfFrozen(open).toString()).toBe('{"n":1}');
    open.n = 2;
    expect(jsonBytesOfFrozen(open).toString()).toBe('{"n":2}');
  });

  it("sends attached byte chunks as one line, and cuts one over the line limit as any value", async () => {
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on("data", (c) => chunks.push(c.toString()));
    const w = new JsonlWriter(out, 64);
    void w.write(withItemsWire([Object.freeze({ a: 1 }), Object.freeze({ b: "é" })]));
    const long = withItemsWire([Object.freeze({ type: "big", text: "x".repeat(200) })]);
    void w.write(long);
    await w.flush();
    await new Promise((r) => setImmediate(r));
    const lines = chunks.join("").split("\n");
    expect(lines[0]).toBe('[{"a":1},{"b":"é"}]');
    expect(lines[1]).toBe(fitLine([{ type: "big", text: "x".repeat(200) }], 64).line);
    expect(Buffer.byteLength(lines[1]!)).toBeLessThanOrEqual(64);
    expect(lines[2]).toBe("");
  });

  it("writes ready lines at once when nothing is queued, and after the queued objects otherwise", async () => {
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on("data", (c) => chunks.push(c.toString()));
    const w = new JsonlWriter(out);
    expect(w.writeText('{"t":1}\n{"t":2}\n')).toBeUndefined();
    void w.write({ a: 1 });
    void w.writeText('{"t":3}\n');
    await w.flush();
    await new Promise((r) => setImmediate(r));
    expect(chunks.join("")).toBe('{"t":1}\n{"t":2}\n{"a":1}\n{"t":3}\n');
  });

  it("makes ready lines wait for drain, and what follows them too", async () => {
    const written: string[] = [];
    let release: (() => void) | null = null;
    const slow = new Writable({
      highWaterMark: 16,
      write(chunk, _enc, cb) {
        written.push(chunk.toString());
        release = () => cb();
      },
    });
    const w = new JsonlWriter(slow);
    const first = w.writeText(`${"x".repeat(32)}\n`);
    expect(first).toBeInstanceOf(Promise);
    const second = w.writeText("y\n");
    expect(second).toBeInstanceOf(Promise);
    await new Promise((r) => setImmediate(r));
    expect(written).toHaveLength(1);
    release!();
    await first;
    await new Promise((r) => setImmediate(r));
    release!();
    await second;
    expect(written).toEqual([`${"x".repeat(32)}\n`, "y\n"]);
  });
});
