import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { getPriority } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseAutogroupNice, readAutogroupNice } from "../../shared/autogroup.js";
import { parseWorkerNice } from "../../supervisor/priority.js";
import { TestEnv } from "./harness.js";

const env = new TestEnv();
afterEach(() => env.cleanup());

/** Autogroups exist on this kernel (Linux with CONFIG_SCHED_AUTOGROUP). */
const autogroups = readAutogroupNice("self") !== null;

describe("worker priority", () => {
  it.each([
    [undefined, 19],
    ["", 19],
    [" ", 19],
    ["0", 0],
    ["5", 5],
    ["19", 19],
    ["20", null],
    ["-1", null],
    ["2.5", null],
    ["low", null],
  ])("reads PI_ORCH_WORKER_NICE=%j as %j", (text, nice) => {
    expect(parseWorkerNice(text)).toBe(nice);
  });

  it.each([
    ["/autogroup-12 nice 10\n", 10],
    ["/autogroup-3 nice 0", 0],
    ["/autogroup-7 nice -5\n", -5],
    ["", null],
    ["garbage", null],
  ])("reads the nice of the autogroup line %j as %j", (text, nice) => {
    expect(parseAutogroupNice(text)).toBe(nice);
  });

  it("spawns workers at nice 19 by default, their autogroup too, and at the supervisor's weight with 0", async () => {
    // workerNice undefined: the Supervisor's own default, not the suite's PI_ORCH_WORKER_NICE=0.
    const { sup } = env.supervisor({ workerNice: undefined });
    const low = await sup.spawn({ name: "low" });
    expect(getPriority(low.pid!)).toBe(19);
    if (autogroups) expect(readAutogroupNice(low.pid!)).toBe(19);

    const { sup: plain } = env.supervisor({ workerNice: 0 });
    const same = await plain.spawn({ name: "same" });
    expect(getPriority(same.pid!)).toBe(getPriority());
    if (autogroups) expect(readAutogroupNice(same.pid!)).toBe(0);
  });

  it.skipIf(!autogroups)(
    "keeps a bash tool command, which gets its own session, at the worker's autogroup nice",
    async () => {
      // A real worker at nice 19 on a machine busy with the rest of the suite: presence is not
      // what this test is about, so its pings get a deadline a starved worker still meets.
      const { sup, rec, home } = env.supervisor({
        defaultWorkerCommand: undefined,
        workerNice: undefined,
        timings: { pingIntervalMs: 1_000, pingDeadlineMs: 15_000 },
      });
      // The command prints its pid, then waits on a fifo until the test has looked at it.
      const fifo = join(home, "go");
      execFileSync("mkfifo", [fifo]);
      const script = join(home, "script.json");
      writeFileSync(
        script,
        JSON.stringify([
          { toolCalls: [{ name: "bash", arguments: { command: `echo pid=$$; read go < ${fifo}` } }] },
          { text: "done" },
        ]),
      );
      await sup.spawn({
        name: "tools",
        provider: "faux",
        extraArgs: ["--faux-script", script, "--no-session"],
        cwd: home,
      });
      await sup.rpc("tools", { type: "prompt", message: "go" });
      const update = await rec.waitFor(
        (m) => m.type === "event" && /pid=\d+/.test(JSON.stringify(m.event)),
        20_000,
        "the command's pid",
      );
      const pid = Number(/pid=(\d+)/.exec(JSON.stringify(update))![1]);
      const worker = readFileSync(`/proc/${sup.list()[0]!.pid!}/autogroup`, "utf8").trim();
      const command = readFileSync(`/proc/${pid}/autogroup`, "utf8").trim();
      writeFileSync(fifo, "go\n");
      await rec.waitFor(
        (m) => m.type === "event" && m.event.type === "tool_execution_end",
        20_000,
        "the bash tool's result",
      );
      expect(worker).toMatch(/ nice 19$/);
      // Its own autogroup (its own session), lowered like the worker's.
      expect(command).toMatch(/ nice 19$/);
      expect(command.split(" ")[0]).not.toBe(worker.split(" ")[0]);
    },
  );
});
