/**
 * `pi-orch report merge` end to end: the built CLI runs a task list whole and in two
 * shards (faux agents, one task failing its check), and the merged shard reports give
 * the whole run's tasks, order, counts, JUnit and exit code. Folders are removed after.
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import type { RunReport } from "../../cli/run/types.js";
import { findAll, parseXml } from "../support/xml.js";

const CLI = resolve(import.meta.dirname, "../../dist/cli/pi-orch.js");
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function cli(args: string[], cwd: string) {
  return execa(process.execPath, [CLI, "--home", join(cwd, "home"), ...args], {
    cwd,
    reject: false,
    env: { NO_COLOR: "1" },
    extendEnv: true,
  });
}

describe("pi-orch report merge", () => {
  it("merges the reports of --shard 1/2 and 2/2 into what one run over the list reports", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "pi-orch-test-merge-")));
    dirs.push(dir);
    const tasks = ["a", "b", "c", "d", "e"].map((name) => ({
      name,
      prompt: "list the files",
      ...(name === "c" ? { check: "exit 3" } : {}),
    }));
    writeFileSync(join(dir, "tasks.json"), JSON.stringify(tasks));
    const run = (extra: string[]) =>
      cli(["run", "tasks.json", "--provider", "faux", "--concurrency", "2", ...extra], dir);
    const [whole, one, two] = await Promise.all([
      run(["--report-json", "whole.json"]),
      run(["--shard", "1/2", "--report-json", "run-1.json"]),
      run(["--shard", "2/2", "--report-json", "run-2.json"]),
    ]);
    // c is task 3: shard 1/2 holds a, c, e.
    expect([whole.exitCode, one.exitCode, two.exitCode], whole.stderr + one.stderr + two.stderr).toEqual([1, 1, 0]);

    const merged = await cli(
      [
        "report",
        "merge",
        "run-2.json",
        "run-1.json",
        "--tasks",
        "tasks.json",
        "--report-junit",
        "junit.xml",
        "--report-json",
        "merged.json",
      ],
      dir,
    );
    expect(merged.exitCode, merged.stderr).toBe(1);
    const wholeReport = JSON.parse(readFileSync(join(dir, "whole.json"), "utf8")) as RunReport;
    const mergedReport = JSON.parse(readFileSync(join(dir, "merged.json"), "utf8")) as RunReport;
    const shape = (r: RunReport) => ({
      counts: r.counts,
      exitCode: r.exitCode,
      shard: r.shard,
      tasks: r.tasks.map((t) => [t.name, t.status, t.reason ?? null]),
    });
    expect(shape(mergedReport)).toEqual(shape(wholeReport));
    expect(merged.stdout).toMatch(/^c\s+failed\s/m);
    expect(merged.stdout).toMatch(/^5 tasks: 4 passed, 1 failed in /m);
    const junit = parseXml(readFileSync(join(dir, "junit.xml"), "utf8"));
    expect(junit.attrs).toMatchObject({ tests: "5", failures: "1" });
    expect(findAll(junit, "testcase").map((c) => c.attrs.name)).toEqual(["a", "b", "c", "d", "e"]);

    const partial = await cli(["report", "merge", "run-1.json"], dir);
    expect(partial.exitCode).toBe(2);
    expect(partial.stderr).toContain("missing the report of shard 2/2");
    const twice = await cli(["report", "merge", "run-1.json", "run-2.json", "run-1.json"], dir);
    expect(twice.exitCode).toBe(2);
    expect(twice.stderr).toContain("run-1.json is given twice");
    const absent = await cli(["report", "merge", "run-1.json", "nope.json"], dir);
    expect(absent.exitCode).toBe(2);
    expect(absent.stderr).toContain("cannot read the report nope.json: no such file");
  });
});
