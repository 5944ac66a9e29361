import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadFauxScript } from "../../worker/providers/faux.js";
import { tempDir } from "../support/rpc-worker.js";

const dirs: { path: string; cleanup: () => void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

function script(name: string, text: string): string {
  const dir = tempDir();
  dirs.push(dir);
  const path = join(dir.path, name);
  writeFileSync(path, text);
  return path;
}

describe("loadFauxScript", () => {
  it("reads a JSON array and JSONL with blank lines", () => {
    expect(
      loadFauxScript(script("a.json", '[{"text":"a"},{"toolCalls":[{"name":"ls","arguments":{}}]}]')),
    ).toHaveLength(2);
    expect(loadFauxScript(script("b.jsonl", '{"text":"a"}\n\n{"text":"b"}\n'))).toEqual([{ text: "a" }, { text: "b" }]);
  });

  it.each([
    [
      "a reply of the wrong shape, by reply number",
      "c.json",
      '[{"text":"ok"},{"toolCalls":[{"name":3,"arguments":{}}]}]',
      /reply 2: \/toolCalls\/0\/name: must be string/,
    ],
    [
      "a bad field in JSONL, by its real line number",
      "d.jsonl",
      '{"text":"a"}\n\n{"delayMs":"x"}\n',
      /line 3: \/delayMs: must be number/,
    ],
    ["broken JSON", "e.json", "[{", /e\.json: /],
    ["a reply that is not an object", "f.json", "[1]", /reply 1: \/: must be object/],
  ])("names the file, place and field of %s", (_name, file, text, error) => {
    expect(() => loadFauxScript(script(file, text))).toThrow(error);
  });
});
