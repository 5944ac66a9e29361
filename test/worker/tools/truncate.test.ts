import { existsSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  formatSize,
  truncateHead,
  truncateLine,
  truncateTail,
  utf8Suffix,
} from "../../../worker/tools/truncate.js";

const lines = (n: number, prefix = "line") => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`).join("\n");

// pi 1.6.0's own truncate module (installed by the e2e setup; skipped until then) is the oracle for truncateHead:
// extensions get our truncateHead as pi's, so every field must be what pi's returns.
const UPSTREAM_TRUNCATE = join(
  import.meta.dirname,
  "../../upstream/node_modules/@earendil-works/pi-coding-agent/dist/core/tools/truncate.js",
);

describe.skipIf(!existsSync(UPSTREAM_TRUNCATE))("truncateHead, against upstream pi's (needs test/upstream)", () => {
  let upstream: { truncateHead: typeof truncateHead };
  beforeAll(async () => {
    upstream = await import(UPSTREAM_TRUNCATE);
  });

  const wide = Array.from({ length: 100 }, () => "x".repeat(1023)).join("\n");
  it.each([
    { name: "short text", text: "a\nb", opts: {} },
    { name: "empty text", text: "", opts: {} },
    { name: "empty text, no lines allowed", text: "", opts: { maxLines: 0 } },
    { name: "a lone newline", text: "\n", opts: { maxLines: 1 } },
    { name: "a final newline at the line limit", text: "a\nb\n", opts: { maxLines: 2 } },
    { name: "a final newline past the line limit", text: "a\nb\nc\n", opts: { maxLines: 2 } },
    { name: "a final newline, one line", text: "a\nb\n", opts: { maxLines: 1 } },
    { name: "a final newline within both limits", text: "a\nb\n", opts: { maxLines: 3 } },
    { name: "empty lines kept at the line limit", text: "a\n\n\n", opts: { maxLines: 2 } },
    { name: "the first lines at the line limit", text: lines(5), opts: { maxLines: 2 } },
    { name: "whole lines at the byte limit", text: "aaaa\nbbbb\ncccc", opts: { maxBytes: 10 } },
    { name: "a line that would pass the byte limit", text: "aaaa\nbbbb\ncccc", opts: { maxBytes: 9 } },
    { name: "a final newline past the byte limit", text: "aaaa\nbbbb\ncccc\n", opts: { maxBytes: 14 } },
    { name: "a final newline that alone passes the byte limit", text: "x\n", opts: { maxBytes: 1 } },
    { name: "both limits cutting at once", text: "ab\ncd\nef", opts: { maxLines: 2, maxBytes: 5 } },
    { name: "an overlong first line", text: "abcdefghij\nk", opts: { maxBytes: 4 } },
    { name: "an overlong only line", text: "abcdefghij", opts: { maxBytes: 4 } },
    { name: "multi-byte characters at the byte limit", text: "é€😀\n€€\n😀", opts: { maxBytes: 12 } },
    { name: "CRLF lines", text: "a\r\nb\r\nc\r\n", opts: { maxLines: 2 } },
    { name: "the default limits, by lines", text: `${lines(2500)}\n`, opts: {} },
    { name: "the default limits, by bytes", text: wide, opts: {} },
    { name: "no line limit (grep, find, ls)", text: `${wide}\n`, opts: { maxLines: Number.MAX_SAFE_INTEGER } },
  ])("$name", ({ text, opts }) => {
    expect(truncateHead(text, opts)).toEqual(upstream.truncateHead(text, opts));
  });

  it("counts a final newline as the end of the last line, as pi 1.6 does", () => {
    // The difference the truncated-tool oracle showed: 3000 lines and a final newline are 3000 (0.73: 3001).
    const r = truncateHead(`${lines(3000)}\n`, { maxLines: 10 });
    expect(r.totalLines).toBe(3000);
    expect(r.content).toBe(lines(10));
  });

  it("keeps nothing of an overlong first line", () => {
    const r = truncateHead("😀".repeat(10), { maxBytes: 5 });
    expect(r).toMatchObject({
      content: "",
      firstLineExceedsLimit: true,
      truncatedBy: "bytes",
      outputLines: 0,
      outputBytes: 0,
    });
  });

  it("uses 2000 lines and 50 KB by default", () => {
    expect(DEFAULT_MAX_LINES).toBe(2000);
    expect(DEFAULT_MAX_BYTES).toBe(51200);
    expect(truncateHead(lines(2500)).outputLines).toBe(2000);
    expect(truncateHead(wide)).toMatchObject({ truncatedBy: "bytes", outputLines: 50, maxBytes: DEFAULT_MAX_BYTES });
  });
});

describe.skipIf(!existsSync(UPSTREAM_TRUNCATE))("truncateTail, against upstream pi's (needs test/upstream)", () => {
  let upstream: { truncateTail: typeof truncateTail };
  beforeAll(async () => {
    upstream = await import(UPSTREAM_TRUNCATE);
  });

  it.each([
    { name: "short text", text: "a\nb", opts: {} },
    { name: "empty text", text: "", opts: {} },
    { name: "empty text, no lines allowed", text: "", opts: { maxLines: 0 } },
    { name: "a lone newline", text: "\n", opts: { maxLines: 1 } },
    { name: "the last lines at the line limit", text: lines(5), opts: { maxLines: 2 } },
    { name: "a final newline at the line limit", text: "a\nb\n", opts: { maxLines: 2 } },
    { name: "a final newline past the line limit", text: "a\nb\nc\n", opts: { maxLines: 2 } },
    { name: "a final newline, one line", text: "a\nb\n", opts: { maxLines: 1 } },
    { name: "whole lines at the byte limit", text: "aaaa\nbbbb\ncccc", opts: { maxBytes: 10 } },
    { name: "a final newline past the byte limit", text: "aaaa\nbbbb\ncccc\n", opts: { maxBytes: 9 } },
    { name: "the end of an overlong last line", text: "a\nabcdefghij", opts: { maxBytes: 4 } },
    { name: "an overlong last line with one line allowed", text: "a\nabcdefghij", opts: { maxLines: 1, maxBytes: 4 } },
    { name: "the end of an overlong line, cut inside a character", text: "😀".repeat(10), opts: { maxBytes: 5 } },
    { name: "multi-byte characters at the byte limit", text: "é€😀\n€€\n😀", opts: { maxBytes: 12 } },
    { name: "the default limits, by lines", text: `${lines(2500)}\n`, opts: {} },
    {
      name: "the default limits, by bytes",
      text: Array.from({ length: 100 }, () => "x".repeat(1023)).join("\n"),
      opts: {},
    },
  ])("$name", ({ text, opts }) => {
    expect(truncateTail(text, opts)).toEqual(upstream.truncateTail(text, opts));
  });

  it("never splits a UTF-8 character when keeping the end of an overlong line", () => {
    for (const ch of ["é", "€", "😀"]) {
      const r = truncateTail(ch.repeat(10), { maxBytes: 5 });
      expect(r.lastLinePartial).toBe(true);
      expect(r.content).toBe(ch.repeat(Math.floor(5 / Buffer.byteLength(ch))));
    }
  });
});

describe("byte-safe slicing and sizes", () => {
  it.each([
    ["héllo", 2, "lo"],
    ["héllo", 3, "llo"],
    ["€€", 4, "€"],
    ["abc", 10, "abc"],
  ])("%j's end cut to %i bytes", (text, bytes, suffix) => {
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

describe.skipIf(!existsSync(UPSTREAM_TRUNCATE))("truncateLine, against upstream pi's (needs test/upstream)", () => {
  let upstream: { truncateLine: typeof truncateLine };
  beforeAll(async () => {
    upstream = await import(UPSTREAM_TRUNCATE);
  });

  // Extensions get ours as pi's, and grep's lines are cut with it.
  it.each([
    { name: "a short line", line: "abc", max: undefined },
    { name: "a line at grep's 500", line: "x".repeat(500), max: undefined },
    { name: "a line past grep's 500", line: "x".repeat(501), max: undefined },
    { name: "a cut between the halves of a surrogate pair", line: `${"x".repeat(499)}😀tail`, max: undefined },
    { name: "a cut after a whole surrogate pair", line: `${"x".repeat(498)}😀tail`, max: undefined },
    { name: "a lone high surrogate at the cut", line: `ab\uD83Dcd`, max: 3 },
    { name: "a limit of 0", line: "abc", max: 0 },
    { name: "an empty line", line: "", max: 0 },
  ])("$name", ({ line, max }) => {
    expect(truncateLine(line, max)).toEqual(upstream.truncateLine(line, max));
  });

  it("cuts at 500 characters by default and marks the cut", () => {
    expect(truncateLine(`${"x".repeat(500)}y`)).toEqual({
      text: `${"x".repeat(500)}... [truncated]`,
      wasTruncated: true,
    });
  });
});
