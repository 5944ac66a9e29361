import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fullOutput } from "../../../worker/tools/bash-structured.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "pi-bash-structured-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("bash's structured output", () => {
  it("is the output in memory when nothing was spilled", async () => {
    expect(await fullOutput("a\nb\n", undefined)).toEqual({ content: "a\nb\n", truncated: false });
  });

  it("is the spill file whole when it fits the bound", async () => {
    const file = join(dir, "out");
    await writeFile(file, "0123456789");
    expect(await fullOutput("789", file, 10)).toEqual({ content: "0123456789", truncated: false });
  });

  it("keeps the head and tail of a longer file, counting the bytes left out, on character boundaries", async () => {
    const file = join(dir, "out");
    // "é" is two bytes: the cut at byte 4 falls inside one on each side.
    await writeFile(file, "abcéfghijkléz");
    const r = await fullOutput("", file, 8);
    expect(r.truncated).toBe(true);
    expect(r.content).toBe("abc\n\n[... 7 bytes omitted ...]\n\nléz");
  });
});
