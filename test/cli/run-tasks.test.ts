import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadTaskFile, parseJsonl, promptTasks, TaskFileError, validateTasks } from "../../cli/run/tasks.js";

describe("validateTasks", () => {
  it("accepts every field", () => {
    const task = {
      name: "fix-a",
      prompt: "p",
      cwd: "pkg",
      provider: "faux",
      model: "m",
      worktree: true,
      timeout: 1.5,
      check: "npm test",
    };
    expect(validateTasks([task], "t.json")).toEqual([task]);
  });

  it.each([
    [{ prompt: "p" }, 'task 1: missing field "name"'],
    [{ name: "a" }, 'task 1 ("a"): missing field "prompt"'],
    [{ name: "a", prompt: "" }, 'task 1 ("a"): field "prompt": must'],
    [{ name: "a", prompt: "p", timeout: "10" }, 'task 1 ("a"): field "timeout": must be number'],
    [{ name: "a", prompt: "p", timeout: 0 }, 'task 1 ("a"): field "timeout": must be > 0'],
    [{ name: "a", prompt: "p", worktree: "yes" }, 'task 1 ("a"): field "worktree": must be boolean'],
    [{ name: "a b", prompt: "p" }, 'task 1 ("a b"): field "name": use 1-64 letters'],
    [{ name: "a", promt: "p" }, 'task 1 ("a"): unknown field "promt"'],
    ["a", "task 1: expected an object"],
  ])("names the task and the field: %j", (task, message) => {
    expect(() => validateTasks([task], "t.json")).toThrow(TaskFileError);
    expect(() => validateTasks([task], "t.json")).toThrow(`t.json: ${message}`);
  });

  it("points at the right task in a list, and refuses duplicate names", () => {
    expect(() =>
      validateTasks(
        [
          { name: "a", prompt: "p" },
          { name: "b", prompt: 3 },
        ],
        "t",
      ),
    ).toThrow('t: task 2 ("b"): field "prompt": must be string');
    expect(() =>
      validateTasks(
        [
          { name: "a", prompt: "p" },
          { name: "a", prompt: "q" },
        ],
        "t",
      ),
    ).toThrow('task 2 ("a"): field "name": "a" is already the name of task 1');
  });

  it.each([
    [{}, "expected an array of tasks, got object"],
    [[], "the task list is empty"],
    [null, "got null"],
  ])("refuses a list that is not one: %j", (value, message) =>
    expect(() => validateTasks(value, "t")).toThrow(message),
  );
});

describe("parseJsonl", () => {
  it("reads one task per line, skipping blank lines and CRs", () => {
    expect(parseJsonl('{"a":1}\r\n\n{"b":2}\n', "t")).toEqual([{ a: 1 }, { b: 2 }]);
  });
  it("names the bad line", () =>
    expect(() => parseJsonl('{"a":1}\n{oops\n', "t.jsonl")).toThrow("t.jsonl, line 2: not valid JSON"));
});

describe("loadTaskFile", () => {
  // Every folder a test made, removed after it (one per test; a list, so none is ever overwritten and lost).
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  /** This test's folder, made on first use. */
  const tmp = () => {
    if (dirs.length === 0) dirs.push(mkdtempSync(join(tmpdir(), "pi-orch-tasks-")));
    return dirs[0]!;
  };
  const file = (name: string, text: string) => {
    writeFileSync(join(tmp(), name), text);
    return join(tmp(), name);
  };

  it.each([
    ["tasks.json", '[{"name":"a","prompt":"p"}]'],
    ["tasks.jsonl", '{"name":"a","prompt":"p"}\n'],
    ["tasks.txt", '{"name":"a","prompt":"p"}\n'],
    [
      "tasks.ts",
      'const tasks: { name: string; prompt: string }[] = [{ name: "a", prompt: "p" }];\nexport default tasks;\n',
    ],
    ["tasks.mjs", 'export default () => [{ name: "a", prompt: "p" }];\n'],
  ])("loads %s", async (name, text) => {
    expect(await loadTaskFile(file(name, text))).toEqual([{ name: "a", prompt: "p" }]);
  });

  it("explains a missing file and bad JSON", async () => {
    await expect(loadTaskFile(join(tmp(), "nope.json"))).rejects.toThrow("no such file");
    await expect(loadTaskFile(file("bad.json", "[{"))).rejects.toThrow("bad.json: not valid JSON");
    await expect(loadTaskFile(file("bad.mjs", "export default 3;"))).rejects.toThrow("must default-export an array");
  });
});

describe("promptTasks", () => {
  it("makes N named copies", () => {
    expect(promptTasks("go", 3)).toEqual([
      { name: "task-1", prompt: "go" },
      { name: "task-2", prompt: "go" },
      { name: "task-3", prompt: "go" },
    ]);
  });
});
