import { describe, expect, it } from "vitest";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  countLines,
  formatSize,
  truncateHead,
  truncateLine,
  truncateTail,
  utf8Prefix,
  utf8Suffix,
} from "../../../worker/tools/truncate.js";

const lines = (n: number, prefix = "line") => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`).join("\n");

describe("countLines", () => {
  it.each([
    ["", 0],
    ["a", 1],
    ["a\n", 1],
    ["a\nb", 2],
    ["a\nb\n", 2],
    ["\n", 1],
    ["\n\n", 2],
  ])("counts %j as %i lines", (text, expected) => {
    expect(countLines(text)).toBe(expected);
  });
});

describe("truncateHead", () => {
  it.each([
    { name: "leaves short text alone", text: "a\nb\n", opts: {}, content: "a\nb\n", by: null, outLines: 2, total: 2 },
    { name: "leaves empty text alone", text: "", opts: {}, content: "", by: null, outLines: 0, total: 0 },
    { name: "keeps the first lines at the line limit", text: lines(5), opts: { maxLines: 2 }, content: "line1\nline2", by: "lines", outLines: 2, total: 5 },
    { name: "does not count a trailing newline as a line", text: "a\nb\n", opts: { maxLines: 2 }, content: "a\nb\n", by: null, outLines: 2, total: 2 },
    { name: "keeps whole lines at the byte limit", text: "aaaa\nbbbb\ncccc", opts: { maxBytes: 10 }, content: "aaaa\nbbbb", by: "bytes", outLines: 2, total: 3 },
    { name: "stops before a line that would pass the byte limit", text: "aaaa\nbbbb\ncccc", opts: { maxBytes: 9 }, content: "aaaa\nbbbb", by: "bytes", outLines: 2, total: 3 },
    { name: "reports lines when both limits would cut at once", text: "ab\ncd\nef", opts: { maxLines: 2, maxBytes: 5 }, content: "ab\ncd", by: "lines", outLines: 2, total: 3 },
    { name: "cuts an overlong first line inside", text: "abcdefghij\nk", opts: { maxBytes: 4 }, content: "abcd", by: "bytes", outLines: 1, total: 2 },
  ])("$name", ({ text, opts, content, by, outLines, total }) => {
    const r = truncateHead(text, opts);
    expect(r.content).toBe(content);
    expect(r.truncatedBy).toBe(by);
    expect(r.truncated).toBe(by !== null);
    expect(r.outputLines).toBe(outLines);
    expect(r.totalLines).toBe(total);
    expect(r.totalBytes).toBe(Buffer.byteLength(text));
    expect(r.outputBytes).toBe(Buffer.byteLength(content));
  });

  it("never splits a UTF-8 character when cutting an overlong line", () => {
    // "é" is 2 bytes, "€" 3, "😀" 4: a 5-byte cut falls inside each of them somewhere.
    for (const ch of ["é", "€", "😀"]) {
      const r = truncateHead(ch.repeat(10), { maxBytes: 5 });
      expect(r.partialLine).toBe(true);
      expect(r.outputBytes).toBeLessThanOrEqual(5);
      expect(r.content).toBe(ch.repeat(Math.floor(5 / Buffer.byteLength(ch))));
      expect(r.content).not.toContain("\uFFFD");
    }
  });

  it("uses 2000 lines and 50 KB by default", () => {
    expect(DEFAULT_MAX_LINES).toBe(2000);
    expect(DEFAULT_MAX_BYTES).toBe(51200);
    expect(truncateHead(lines(2500)).outputLines).toBe(2000);
    const wide = truncateHead(Array.from({ length: 100 }, () => "x".repeat(1023)).join("\n"));
    expect(wide.truncatedBy).toBe("bytes");
    expect(wide.outputBytes).toBeLessThanOrEqual(DEFAULT_MAX_BYTES);
    expect(wide.outputLines).toBe(50);
  });
});

describe("truncateTail", () => {
  it.each([
    { name: "leaves short text alone", text: "a\nb", opts: {}, content: "a\nb", by: null, outLines: 2 },
    { name: "keeps the last lines at the line limit", text: lines(5), opts: { maxLines: 2 }, content: "line4\nline5", by: "lines", outLines: 2 },
    { name: "keeps the trailing newline", text: "a\nb\nc\n", opts: { maxLines: 2 }, content: "b\nc\n", by: "lines", outLines: 2 },
    { name: "keeps whole lines at the byte limit", text: "aaaa\nbbbb\ncccc", opts: { maxBytes: 10 }, content: "bbbb\ncccc", by: "bytes", outLines: 2 },
    { name: "counts the trailing newline against the byte limit", text: "aaaa\nbbbb\ncccc\n", opts: { maxBytes: 9 }, content: "cccc\n", by: "bytes", outLines: 1 },
    { name: "keeps the end of an overlong last line", text: "a\nabcdefghij", opts: { maxBytes: 4 }, content: "ghij", by: "bytes", outLines: 1 },
  ])("$name", ({ text, opts, content, by, outLines }) => {
    const r = truncateTail(text, opts);
    expect(r.content).toBe(content);
    expect(r.truncatedBy).toBe(by);
    expect(r.outputLines).toBe(outLines);
    expect(r.totalBytes).toBe(Buffer.byteLength(text));
    expect(r.outputBytes).toBe(Buffer.byteLength(content));
  });

  it("never splits a UTF-8 character when keeping the end of an overlong line", () => {
    for (const ch of ["é", "€", "😀"]) {
      const r = truncateTail(ch.repeat(10), { maxBytes: 5 });
      expect(r.partialLine).toBe(true);
      expect(r.content).toBe(ch.repeat(Math.floor(5 / Buffer.byteLength(ch))));
    }
  });
});

describe("byte-safe slicing and sizes", () => {
  it.each([
    ["héllo", 2, "h", "lo"],
    ["héllo", 3, "hé", "llo"],
    ["€€", 4, "€", "€"],
    ["abc", 10, "abc", "abc"],
  ])("%j cut to %i bytes", (text, bytes, prefix, suffix) => {
    expect(utf8Prefix(text, bytes)).toBe(prefix);
    expect(utf8Suffix(text, bytes)).toBe(suffix);
  });

  it.each([
    [0, "0B"],
    [1023, "1023B"],
    [1024, "1.0KB"],
    [51200, "50.0KB"],
    [3 * 1024 * 1024, "3.0MB"],
  ])("formats %i bytes as %s", (bytes, text) => {
    expect(formatSize(bytes)).toBe(text);
  });
});

describe("truncateLine", () => {
  it.each([
    ["abc", 3, "abc", false],
    ["abcd", 3, "abc… [line cut at 3 chars]", true],
    ["", 0, "", false],
  ])("cuts %j at %i characters", (line, max, text, truncated) => {
    expect(truncateLine(line, max)).toEqual({ text, truncated });
  });
});
