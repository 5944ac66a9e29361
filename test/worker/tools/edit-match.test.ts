import { mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checker } from "../../../shared/validate.js";
import { applyEdits, EditError, unifiedDiff, type TextEdit } from "../../../worker/tools/edit-match.js";
import { EditParams, editTool, prepareEditArguments } from "../../../worker/tools/edit.js";
import type { ToolContext } from "../../../worker/types.js";

interface Applies {
  name: string;
  file: string;
  edits: TextEdit[];
  expected: string;
  firstChangedLine?: number;
  normalized?: boolean;
}

const applies: Applies[] = [
  {
    name: "exact match",
    file: "a\nb\nc\n",
    edits: [{ oldText: "b", newText: "B" }],
    expected: "a\nB\nc\n",
    firstChangedLine: 2,
    normalized: false,
  },
  {
    name: "smart quotes in oldText, ASCII in the file: newText is written as given",
    file: 'const s = "hi";\nnext();\n',
    edits: [{ oldText: "const s = \u201Chi\u201D;", newText: "const s = \u201Cbye\u201D;" }],
    expected: "const s = \u201Cbye\u201D;\nnext();\n",
    normalized: true,
  },
  {
    name: "ASCII quotes in oldText, smart quotes in the file: ASCII newText stays ASCII",
    file: "say(\u2018hi\u2019)\n",
    edits: [{ oldText: "say('hi')", newText: "say('yo')" }],
    expected: "say('yo')\n",
  },
  {
    name: "the issue's case: console.log('world') is not turned into curly quotes",
    file: "before();\nconsole.log(\u2018hello\u2019)\nafter();\n",
    edits: [{ oldText: "console.log('hello')", newText: "console.log('world')" }],
    expected: "before();\nconsole.log('world')\nafter();\n",
    normalized: true,
  },
  {
    name: "the issue's case: break--here is not turned into an em dash and a hyphen",
    file: "x = 1; // break\u2014here\n",
    edits: [{ oldText: "x = 1; // break-here", newText: "x = 1; // break--here" }],
    expected: "x = 1; // break--here\n",
  },
  {
    name: "dashes: an en dash in the file matches '-'",
    file: "a \u2013 b\n",
    edits: [{ oldText: "a - b", newText: "a - c" }],
    expected: "a - c\n",
  },
  {
    name: "dashes: an em dash and a minus sign in oldText match '-'",
    file: "x = y - z; // a-b\n",
    edits: [{ oldText: "x = y \u2212 z; // a\u2014b", newText: "x = y + z; // a\u2014b" }],
    expected: "x = y + z; // a\u2014b\n",
  },
  {
    name: "special spaces: NBSP in the file matches a space",
    file: "x\u00A0=\u00A01\n",
    edits: [{ oldText: "x = 1", newText: "x = 2" }],
    expected: "x = 2\n",
  },
  {
    name: "trailing white space: the match ends before it, so white space after the match stays",
    file: "foo  \nbar\t\nrest\n",
    edits: [{ oldText: "foo\nbar", newText: "foo\nbaz" }],
    expected: "foo\nbaz\t\nrest\n",
  },
  {
    name: "NFKC: a ligature in the file matches its letters",
    file: "\uFB01le = 1\n",
    edits: [{ oldText: "file = 1", newText: "file = 2" }],
    expected: "file = 2\n",
  },
  {
    name: "CRLF: LF oldText matches, CRLF is kept and used for new lines",
    file: "a\r\nb\r\nc\r\n",
    edits: [{ oldText: "b\nc", newText: "B\nnew\nC" }],
    expected: "a\r\nB\r\nnew\r\nC\r\n",
  },
  {
    name: "CRLF: CRLF oldText matches too",
    file: "a\r\nb\r\nc\r\n",
    edits: [{ oldText: "a\r\nb", newText: "A\r\nB" }],
    expected: "A\r\nB\r\nc\r\n",
    firstChangedLine: 1,
  },
  {
    name: "mixed line endings: bytes outside the edit stay identical",
    file: "a\r\nb\nc\r\n",
    edits: [{ oldText: "c", newText: "C" }],
    expected: "a\r\nb\nC\r\n",
  },
  {
    name: "BOM is kept",
    file: "\uFEFFa\nb\n",
    edits: [{ oldText: "a", newText: "A" }],
    expected: "\uFEFFA\nb\n",
  },
  {
    name: "multi-edit: several disjoint edits at once",
    file: "one\ntwo\nthree\nfour\n",
    edits: [
      { oldText: "three", newText: "3" },
      { oldText: "one", newText: "1" },
    ],
    expected: "1\ntwo\n3\nfour\n",
    firstChangedLine: 1,
  },
  {
    name: "multi-edit: every oldText is matched against the original, not the result",
    file: "a\nb\n",
    edits: [
      { oldText: "a", newText: "b" },
      { oldText: "b", newText: "c" },
    ],
    expected: "b\nc\n",
  },
  {
    name: "adjacent (touching) edits are not overlapping",
    file: "abcdef",
    edits: [
      { oldText: "abc", newText: "X" },
      { oldText: "def", newText: "Y" },
    ],
    expected: "XY",
  },
];

interface Refuses {
  name: string;
  file: string;
  edits: TextEdit[];
  error: RegExp;
}

const refuses: Refuses[] = [
  {
    name: "not found",
    file: "a\nb\n",
    edits: [{ oldText: "zzz", newText: "y" }],
    error: /oldText was not found in f\.txt\. It must match the file exactly/,
  },
  {
    name: "ambiguous (exact)",
    file: "x\nx\n",
    edits: [{ oldText: "x", newText: "y" }],
    error: /occurs 2 times in f\.txt.*add surrounding lines/,
  },
  {
    name: "ambiguous (normalized)",
    file: '\u201Cx\u201D\n\u00ABx\u00BB\n"x"\n',
    edits: [{ oldText: "\u201Ex\u201C", newText: "y" }],
    error: /occurs 2 times/,
  },
  {
    name: "overlapping edits",
    file: "abcdef",
    edits: [
      { oldText: "abc", newText: "X" },
      { oldText: "cde", newText: "Y" },
    ],
    error: /edits\[0\] and edits\[1\] overlap in f\.txt\. Merge them into one edit/,
  },
  { name: "no-op edit", file: "a\nb\n", edits: [{ oldText: "b", newText: "b" }], error: /edits\[0\] changes nothing/ },
  {
    name: "no-op after normalization",
    file: 'q = "a"\n',
    edits: [{ oldText: "q = \u201Ca\u201D", newText: 'q = "a"' }],
    error: /changes nothing/,
  },
  { name: "empty oldText", file: "a\n", edits: [{ oldText: "", newText: "b" }], error: /oldText is empty/ },
  { name: "no edits", file: "a\n", edits: [], error: /No edits given/ },
  {
    name: "one of several edits not found names its index",
    file: "a\nb\n",
    edits: [
      { oldText: "a", newText: "A" },
      { oldText: "q", newText: "Q" },
    ],
    error: /edits\[1\]\.oldText was not found/,
  },
];

describe("applyEdits", () => {
  it.each(applies)("$name", ({ file, edits, expected, firstChangedLine, normalized }) => {
    const result = applyEdits(file, edits, "f.txt");
    expect(result.text).toBe(expected);
    if (firstChangedLine !== undefined) expect(result.firstChangedLine).toBe(firstChangedLine);
    if (normalized !== undefined) expect(result.normalized).toBe(normalized);
    expect(result.diff).toMatch(/^--- a\/f\.txt\n\+\+\+ b\/f\.txt\n@@ /);
  });

  it.each(refuses)("refuses: $name", ({ file, edits, error }) => {
    expect(() => applyEdits(file, edits, "f.txt")).toThrow(EditError);
    expect(() => applyEdits(file, edits, "f.txt")).toThrow(error);
  });

  it("reports a unified diff with context and the first changed line", () => {
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
    const result = applyEdits(
      `${lines.join("\n")}\n`,
      [{ oldText: "line 10\n", newText: "line ten\nline 10.5\n" }],
      "f.txt",
    );
    expect(result.firstChangedLine).toBe(10);
    expect(result.diff).toBe(
      [
        "--- a/f.txt",
        "+++ b/f.txt",
        "@@ -7,7 +7,8 @@",
        " line 7",
        " line 8",
        " line 9",
        "-line 10",
        "+line ten",
        "+line 10.5",
        " line 11",
        " line 12",
        " line 13",
      ].join("\n"),
    );
  });

  it("marks a missing final newline in the diff", () => {
    expect(unifiedDiff("a\nb", "a\nc", "f").diff).toContain(
      "-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file",
    );
  });
});

describe("edit arguments", () => {
  const check = checker(EditParams);
  const shapes: { name: string; raw: unknown }[] = [
    { name: "edits as a JSON string", raw: { path: "f.txt", edits: JSON.stringify([{ oldText: "a", newText: "b" }]) } },
    { name: "a single top-level oldText/newText", raw: { path: "f.txt", oldText: "a", newText: "b" } },
  ];
  it.each(shapes)("normalizes $name into edits[]", ({ raw }) => {
    const prepared = prepareEditArguments(raw);
    expect(prepared).toEqual({ path: "f.txt", edits: [{ oldText: "a", newText: "b" }] });
    expect(check(prepared).ok).toBe(true);
  });

  it("leaves the canonical shape alone and lets validation reject garbage", () => {
    const canonical = { path: "f.txt", edits: [{ oldText: "a", newText: "b" }] };
    expect(prepareEditArguments(canonical)).toEqual(canonical);
    expect(check(prepareEditArguments({ path: "f.txt", edits: "not json" })).ok).toBe(false);
  });

  it("wraps one replacement, given as an object or a JSON string, in the call's own arguments (as pi)", () => {
    const raw = { path: "f.txt", edits: { oldText: "a", newText: "b" } };
    expect(prepareEditArguments(raw)).toBe(raw);
    expect(raw).toEqual({ path: "f.txt", edits: [{ oldText: "a", newText: "b" }] });
    const text = { path: "f.txt", edits: JSON.stringify({ oldText: "a", newText: "b" }) };
    expect(prepareEditArguments(text)).toEqual({ path: "f.txt", edits: [{ oldText: "a", newText: "b" }] });
  });

  it("leaves an object that is not a whole replacement for validation to judge", () => {
    const half = JSON.stringify({ oldText: "a" });
    expect(prepareEditArguments({ path: "f.txt", edits: half })).toEqual({ path: "f.txt", edits: half });
    expect(prepareEditArguments({ path: "f.txt", edits: { oldText: "a" } })).toEqual({
      path: "f.txt",
      edits: { oldText: "a" },
    });
  });

  it("accepts fields it does not name, as pi's schema does", () => {
    expect(check({ path: "f.txt", edits: [{ oldText: "a", newText: "b", replaceAll: false }], dryRun: true }).ok).toBe(
      true,
    );
  });
});

describe("editTool", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });
  const context = (cwd: string, signal = new AbortController().signal): ToolContext => ({
    cwd,
    toolCallId: "t",
    signal,
  });

  it("writes the file and returns the diff", async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-orch-edit-"));
    await writeFile(join(dir, "f.txt"), "alpha\nbeta\n");
    const result = await editTool.execute(
      { path: "f.txt", edits: [{ oldText: "beta", newText: "gamma" }] },
      context(dir),
    );
    expect(await readFile(join(dir, "f.txt"), "utf8")).toBe("alpha\ngamma\n");
    const text = result.content[0]!.type === "text" ? result.content[0]!.text : "";
    expect(text).toContain("-beta\n+gamma");
    expect(result.details).toEqual({ diff: expect.stringContaining("+gamma"), firstChangedLine: 2 });
  });

  it("refuses an empty edits list with pi's words, before it looks at the file", async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-orch-edit-"));
    await expect(editTool.execute({ path: "missing.txt", edits: [] }, context(dir))).rejects.toThrow(
      /^Edit tool input is invalid\. edits must contain at least one replacement\.$/,
    );
  });

  it("applies two parallel edits to one file, one through a symlink, both", async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-orch-edit-"));
    const lines = Array.from({ length: 2000 }, (_, i) => `line ${i}`);
    await writeFile(join(dir, "real.txt"), `${lines.join("\n")}\n`);
    await symlink(join(dir, "real.txt"), join(dir, "link.txt"));
    await Promise.all([
      editTool.execute({ path: "link.txt", edits: [{ oldText: "line 10\n", newText: "first\n" }] }, context(dir)),
      editTool.execute(
        { path: join(dir, "real.txt"), edits: [{ oldText: "line 1990\n", newText: "second\n" }] },
        context(dir),
      ),
    ]);
    const after = await readFile(join(dir, "real.txt"), "utf8");
    expect(after).toContain("\nfirst\n");
    expect(after).toContain("\nsecond\n");
    expect(after.split("\n")).toHaveLength(2001);
  });

  it("does not touch the file when aborted before it starts", async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-orch-edit-"));
    await writeFile(join(dir, "f.txt"), "a\n");
    const controller = new AbortController();
    controller.abort();
    await expect(
      editTool.execute({ path: "f.txt", edits: [{ oldText: "a", newText: "b" }] }, context(dir, controller.signal)),
    ).rejects.toThrow(/Aborted: f\.txt was not changed/);
    expect(await readFile(join(dir, "f.txt"), "utf8")).toBe("a\n");
  });

  it("says what to do when the file is missing", async () => {
    dir = await mkdtemp(join(tmpdir(), "pi-orch-edit-"));
    await expect(
      editTool.execute({ path: "nope.txt", edits: [{ oldText: "a", newText: "b" }] }, context(dir)),
    ).rejects.toThrow(/does not exist \(use write to create it\)/);
  });
});
