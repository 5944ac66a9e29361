import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { JsonlWriter, LineSplitter, LineTooLongError, parseJsonLine } from "../../shared/jsonl.js";

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
});
