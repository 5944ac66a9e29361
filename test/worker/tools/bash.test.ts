import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bashTool, runBash } from "../../../worker/tools/bash.js";
import { OutputTail } from "../../../worker/tools/output-tail.js";
import { killAllChildren, liveGroupMembers } from "../../../worker/tools/process-tree.js";
import { readProcTable } from "../../../shared/proc.js";
import type { ToolContext, ToolResult } from "../../../worker/types.js";

let dir: string;
const cleanup: string[] = [];
const strays: number[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "pi-bash-test-"));
});
afterEach(async () => {
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone: the test passed.
    }
  }
  killAllChildren();
  for (const path of cleanup.splice(0)) await rm(path, { force: true });
  await rm(dir, { recursive: true, force: true });
});

const text = (r: ToolResult) => (r.content[0]?.type === "text" ? r.content[0].text : "");

/** A tool context whose updates are recorded, with a way to wait for one matching a pattern. */
function recordingContext(signal = new AbortController().signal) {
  const updates: string[] = [];
  const waiters: { pattern: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  const ctx: ToolContext = {
    cwd: dir,
    toolCallId: "t1",
    signal,
    onUpdate: (partial) => {
      const t = text(partial);
      updates.push(t);
      for (const w of [...waiters]) {
        const m = t.match(w.pattern);
        if (m) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
    },
  };
  const waitForUpdate = (pattern: RegExp) =>
    new Promise<RegExpMatchArray>((resolve) => {
      const m = updates.map((u) => u.match(pattern)).find(Boolean);
      if (m) resolve(m);
      else waiters.push({ pattern, resolve });
    });
  return { ctx, updates, waitForUpdate };
}

/**
 * Whether `pid` has exited. A killed orphan is re-parented to PID 1, and where PID 1 does
 * not reap (many containers) it lingers as a zombie: exited, only its exit status left.
 */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

/** Poll `probe` every 20 ms until it gives a value; fail after 10 s naming `what`. */
async function until<T>(probe: () => T | false | undefined, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A `sleep` argument no other process on the machine uses: `n.<this test process's pid>`. */
const nap = (n: number) => `${n}.${process.pid}`;

/** Running `sleep` processes whose argument is one of `args` (whatever their environment). */
function sleepsOf(args: string[]): number[] {
  return (readProcTable() ?? [])
    .filter((p) => {
      try {
        const [program, arg] = readFileSync(`/proc/${p.pid}/cmdline`, "utf8").split("\0");
        return program === "sleep" && args.includes(arg ?? "") && !isGone(p.pid);
      } catch {
        return false;
      }
    })
    .map((p) => p.pid);
}

async function expectGone(pid: number): Promise<void> {
  const deadline = Date.now() + 2000;
  while (!isGone(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  expect(isGone(pid)).toBe(true);
}

/**
 * V8's collector, made callable at run time (the flag reaches functions compiled after it).
 * Measuring after a full collection counts what a run keeps, not chunk garbage that a
 * loaded machine has not collected yet.
 */
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

/**
 * Bytes the heap and Buffers keep after a full collection. Twice: a collection frees dead
 * Buffers' memory on a background thread, which a loaded machine runs late, and the next
 * collection waits for it to finish.
 */
function retainedBytes(): number {
  collectGarbage();
  collectGarbage();
  const spaces = getHeapSpaceStatistics();
  return spaces.reduce((sum, s) => sum + s.space_used_size, 0) + process.memoryUsage().arrayBuffers;
}

describe("bash tool", () => {
  it("returns stdout and stderr merged", async () => {
    const r = await bashTool.execute({ command: "echo out; echo err >&2" }, recordingContext().ctx);
    expect(text(r)).toMatch(/out\n/);
    expect(text(r)).toMatch(/err\n/);
    expect(r.details).toBeUndefined();
  });

  it("runs in the working directory and says when there is no output", async () => {
    expect(text(await bashTool.execute({ command: "pwd" }, recordingContext().ctx))).toBe(`${dir}\n`);
    expect(text(await bashTool.execute({ command: "true" }, recordingContext().ctx))).toBe("(no output)");
  });

  it("reports a failed command as an error result with the output and the exit code, as pi 1.6", async () => {
    const r = await bashTool.execute({ command: "echo oops; exit 3" }, recordingContext().ctx);
    expect(r.isError).toBe(true);
    expect(text(r)).toBe("oops\n\n\nCommand exited with code 3");
    expect(r.structuredContent).toMatchObject({ output: "oops\n", truncated: false, exit_code: 3 });
    expect(text(await bashTool.execute({ command: "exit 1" }, recordingContext().ctx))).toBe(
      "(no output)\n\nCommand exited with code 1",
    );
  });

  it("reports every short command's own exit code: the reaper's exit never stands in for the shell's", async () => {
    // The reaper writes the shell's status on its pipe and exits at once; its own exit event
    // may come before the pipe's data (CI saw `exit 1` reported as success once).
    const codes: (number | undefined)[] = [];
    for (let i = 0; i < 60; i++) {
      const r = await bashTool.execute({ command: `exit ${(i % 5) + 1}` }, recordingContext().ctx);
      codes.push((r.structuredContent as { exit_code?: number } | undefined)?.exit_code);
    }
    expect(codes).toEqual(Array.from({ length: 60 }, (_, i) => (i % 5) + 1));
  });

  it("gives the output, exit code and wall time as structuredContent, as pi 1.6", async () => {
    const r = await bashTool.execute({ command: "echo a; sleep 0.2; echo b" }, recordingContext().ctx);
    expect(r.isError).toBeUndefined();
    const data = r.structuredContent as Record<string, unknown>;
    expect(Object.keys(data).sort()).toEqual(["exit_code", "output", "truncated", "wall_time_seconds"]);
    expect(data).toMatchObject({ output: "a\nb\n", truncated: false, exit_code: 0 });
    expect(data.wall_time_seconds).toBeGreaterThanOrEqual(0.2);
  });

  it("keeps the whole output in structuredContent when the model's text is cut", async () => {
    const r = await bashTool.execute({ command: "seq 1 3000" }, recordingContext().ctx);
    expect(text(r)).toMatch(/Showing lines 1001-3000 of 3000/);
    const data = r.structuredContent as { output: string; truncated: boolean };
    expect(data.truncated).toBe(false);
    expect(data.output.split("\n").length).toBe(3001);
  });

  it("streams the accumulated output while the command runs", async () => {
    const { ctx, updates, waitForUpdate } = recordingContext();
    // The command blocks until the test has seen its first line streamed.
    const done = bashTool.execute({ command: "echo step1; while [ ! -e go ]; do sleep 0.01; done; echo step2" }, ctx);
    await waitForUpdate(/step1/);
    await writeFile(join(dir, "go"), "");
    const r = await done;
    expect(text(r)).toBe("step1\nstep2\n");
    // The first update is the empty start; each later one extends the previous.
    expect(updates[0]).toBe("");
    const withText = updates.filter((u) => u.length > 0);
    expect(withText[0]).toBe("step1\n");
    expect(withText.at(-1)).toBe("step1\nstep2\n");
    for (let i = 1; i < withText.length; i++) expect(withText[i]!.startsWith(withText[i - 1]!)).toBe(true);
  });

  it("keeps memory bounded for 20 MB of output and writes all of it to the full-output file", async () => {
    const size = 20 * 1024 * 1024;
    // Updates are checked as they come, not recorded: a record of them is memory the test keeps.
    let streamedAll!: () => void;
    const allStreamed = new Promise<void>((resolve) => {
      streamedAll = resolve;
    });
    const ctx: ToolContext = {
      ...recordingContext().ctx,
      onUpdate: (partial) => {
        if (/0{62}1\n$/.test(text(partial))) streamedAll();
      },
    };
    const before = retainedBytes();
    // All 20 MB are streamed, the last line differs, and the command then waits for the test:
    // what the run keeps is measured while it is still running, after a full collection.
    const run = bashTool.execute(
      {
        command: `yes "$(printf %063d 0)" | head -c ${size - 64}; printf '%063d\\n' 1; while [ ! -e go ]; do sleep 0.01; done`,
      },
      ctx,
    );
    await allStreamed;
    const kept = retainedBytes() - before;
    await writeFile(join(dir, "go"), "");
    const r = await run;
    const details = r.details as { fullOutputPath: string; truncation: { totalBytes: number; totalLines: number } };
    cleanup.push(details.fullOutputPath);
    expect((await stat(details.fullOutputPath)).size).toBe(size);
    expect(details.truncation.totalBytes).toBe(size);
    expect(details.truncation.totalLines).toBe(size / 64);
    const out = text(r);
    expect(out).toContain(
      `[Showing lines ${size / 64 - 799}-${size / 64} of ${size / 64} (50.0KB limit). Full output: ${details.fullOutputPath}]`,
    );
    expect(Buffer.byteLength(out.slice(0, out.indexOf("\n\n[")))).toBeLessThanOrEqual(50 * 1024);
    // Holding the output would keep at least its 20 MB; a bounded run keeps its tail.
    expect(kept).toBeLessThan(2 * 1024 * 1024);
  });

  it("kills the command when the timeout passes and reports the output so far", async () => {
    const { ctx, waitForUpdate } = recordingContext();
    const started = Date.now();
    const run = bashTool.execute({ command: "echo pid:$$; exec sleep 60", timeout: 0.5 }, ctx);
    const [, pid] = await waitForUpdate(/pid:(\d+)/);
    strays.push(Number(pid));
    await expect(run).rejects.toThrow(/^pid:\d+\n\n\nCommand timed out after 0\.5 seconds$/);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(() => process.kill(Number(pid), 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
  });

  it.each([
    [0, "Invalid timeout: must be a finite number of seconds"],
    [-5, "Invalid timeout: must be a finite number of seconds"],
    [3_000_000, "Invalid timeout: maximum is 2147483.647 seconds"],
  ])("refuses a timeout of %s seconds before it starts the command, in pi's words", async (timeout, message) => {
    const { ctx } = recordingContext();
    await expect(bashTool.execute({ command: "echo ran", timeout }, ctx)).rejects.toThrow(new RegExp(`^${message}$`));
  });

  it("kills `sleep 60` on abort", async () => {
    const controller = new AbortController();
    const { ctx, waitForUpdate } = recordingContext(controller.signal);
    const run = bashTool.execute({ command: "echo pid:$$; exec sleep 60" }, ctx);
    const [, pid] = await waitForUpdate(/pid:(\d+)/);
    strays.push(Number(pid));
    controller.abort();
    await expect(run).rejects.toThrow(/^pid:\d+\n\n\nCommand aborted$/);
    // The shell exec'd into sleep, so this is our direct child: reaped, truly gone.
    expect(() => process.kill(Number(pid), 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
  });

  it("kills a backgrounded grandchild on abort", async () => {
    const controller = new AbortController();
    const { ctx, waitForUpdate } = recordingContext(controller.signal);
    const run = bashTool.execute({ command: "sleep 60 & echo pid:$!; wait" }, ctx);
    const [, pid] = await waitForUpdate(/pid:(\d+)/);
    strays.push(Number(pid));
    controller.abort();
    await expect(run).rejects.toThrow("Command aborted");
    await expectGone(Number(pid));
  });

  it("kills a descendant that left the process group (setsid) on abort", async () => {
    const controller = new AbortController();
    const { ctx, waitForUpdate } = recordingContext(controller.signal);
    const run = bashTool.execute({ command: "setsid sleep 60 & echo pid:$!; wait" }, ctx);
    const [, pid] = await waitForUpdate(/pid:(\d+)/);
    strays.push(Number(pid));
    controller.abort();
    await expect(run).rejects.toThrow("Command aborted");
    await expectGone(Number(pid));
  });

  it("does not wait for a background process that keeps the output pipe open", async () => {
    const { ctx } = recordingContext();
    const r = await bashTool.execute({ command: "sleep 60 & echo pid:$!" }, ctx);
    const pid = Number(text(r).match(/pid:(\d+)/)![1]);
    strays.push(pid);
    expect(isGone(pid)).toBe(false);
  });
});

describe("runBash", () => {
  it("reports the exit code without throwing", async () => {
    const r = await runBash("echo hi; exit 7", { cwd: dir, signal: new AbortController().signal });
    expect(r).toMatchObject({ output: "hi\n", exitCode: 7, cancelled: false, timedOut: false, truncated: false });
    expect(r.fullOutputPath).toBeUndefined();
  });

  it("does not start a command whose signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const r = await runBash("touch started", { cwd: dir, signal: controller.signal });
    expect(r.cancelled).toBe(true);
    await expect(stat(join(dir, "started"))).rejects.toThrow();
  });

  it("refuses a missing working directory", async () => {
    await expect(runBash("true", { cwd: join(dir, "missing"), signal: new AbortController().signal })).rejects.toThrow(
      /Working directory does not exist/,
    );
  });

  it("keeps every running command in the child registry, and killAllChildren kills its tree", async () => {
    let announce: (pid: number) => void = () => {};
    const announced = new Promise<number>((resolve) => (announce = resolve));
    const run = runBash("sleep 60 & echo pid:$!; wait", {
      cwd: dir,
      signal: new AbortController().signal,
      onUpdate: (tail) => {
        const m = tail.match(/pid:(\d+)/);
        if (m) announce(Number(m[1]));
      },
    });
    const sleepPid = await announced;
    strays.push(sleepPid);
    killAllChildren();
    const r = await run;
    expect(r.exitCode).toBeNull();
    expect(r.signal).toBe("SIGKILL");
    await expectGone(sleepPid);
  });
});

describe("background jobs of a returned command", () => {
  /** Live members of process group `pgid` (zombies do not count). */
  const groupMembers = (pgid: number) => liveGroupMembers(pgid, readProcTable() ?? []);

  it("stay in the registry after the command returned, and killAllChildren kills them", async () => {
    const r = await runBash("sleep 60 >/dev/null 2>&1 & echo pid:$! shell:$$", {
      cwd: dir,
      signal: new AbortController().signal,
    });
    const [, job] = r.output.match(/pid:(\d+) shell:(\d+)/)!.map(Number);
    strays.push(job);
    expect(isGone(job)).toBe(false);
    killAllChildren();
    await expectGone(job);
  });

  it("are forgotten once they end, and the command's reaper goes with them", async () => {
    const marker = join(dir, "go");
    const r = await runBash(
      `(while [ ! -e ${marker} ]; do sleep 0.05; done) >/dev/null 2>&1 & echo shell:$$ reaper:$PPID`,
      { cwd: dir, signal: new AbortController().signal },
    );
    const [, shell, reaper] = r.output.match(/shell:(\d+) reaper:(\d+)/)!.map(Number);
    // The job is the group now, the reaper above it.
    expect(groupMembers(shell).length).toBeGreaterThanOrEqual(1);
    expect(isGone(reaper)).toBe(false);
    await writeFile(marker, "");
    const deadline = Date.now() + 5000;
    while ((groupMembers(shell).length > 0 || !isGone(reaper)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(groupMembers(shell)).toEqual([]);
    expect(isGone(reaper)).toBe(true);
  });

  it("that left the group and cleared their environment are killed by killAllChildren", async () => {
    const [a, b] = [nap(6031), nap(6032)];
    const r = await runBash(
      `env -i setsid sleep ${a} >/dev/null 2>&1 & setsid -f sleep ${b} >/dev/null 2>&1; echo started`,
      {
        cwd: dir,
        signal: new AbortController().signal,
      },
    );
    expect(r.output).toContain("started");
    const jobs = await until(() => sleepsOf([a, b]).length === 2 && sleepsOf([a, b]), "both jobs");
    strays.push(...jobs);
    killAllChildren();
    for (const job of jobs) await expectGone(job);
  });

  it("are reaped by the reaper when they end: it exits once nothing it adopted is left", async () => {
    const r = await runBash(
      "setsid -f sleep 0.2 >/dev/null 2>&1; (setsid sleep 0.3 >/dev/null 2>&1 &); echo reaper:$PPID",
      {
        cwd: dir,
        signal: new AbortController().signal,
      },
    );
    const reaper = Number(r.output.match(/reaper:(\d+)/)![1]);
    // It waits for each process it adopts, so when it is gone none of them is a zombie of its.
    await until(() => isGone(reaper), "the reaper's exit");
    expect(readProcTable()?.filter((p) => p.ppid === reaper) ?? []).toEqual([]);
  });

  it("are killed when the worker dies after the command returned, also those that cleared their environment", async () => {
    // A child node process plays the worker: it runs the command, reports, and is SIGKILLed.
    const script = [
      `import { runBash } from ${JSON.stringify(new URL("../../../worker/tools/bash.ts", import.meta.url).pathname)};`,
      `const r = await runBash("sleep 60 >/dev/null 2>&1 & echo $!; env -i setsid sleep 62 >/dev/null 2>&1 & echo $!", { cwd: ${JSON.stringify(dir)}, signal: new AbortController().signal });`,
      `process.stdout.write(r.output); setInterval(() => {}, 1000);`,
    ].join("\n");
    const file = join(dir, "worker.mts");
    await writeFile(file, script);
    const worker = spawn(process.execPath, ["--import", "jiti/register", file], {
      cwd: process.cwd(),
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      let said = "";
      const jobs = await new Promise<number[]>((resolve, reject) => {
        worker.stdout!.on("data", (c: Buffer) => {
          said += String(c);
          const pids = said.split("\n").filter(Boolean).map(Number);
          if (pids.length === 2) resolve(pids);
        });
        worker.once("exit", (code) => reject(new Error(`the worker exited (${code}) before running the command`)));
      });
      strays.push(...jobs);
      for (const job of jobs) expect(isGone(job)).toBe(false);
      worker.kill("SIGKILL");
      for (const job of jobs) await expectGone(job);
    } finally {
      worker.kill("SIGKILL");
    }
  });
});

describe("the environment of a command", () => {
  it("has no provider keys unless asked", async () => {
    const saved = { ...process.env };
    try {
      process.env.ANTHROPIC_API_KEY = "sk-ant-test-secret";
      process.env.OPENAI_API_KEY = "sk-openai-test-secret";
      process.env.PI_TEST_VISIBLE = "visible";
      const r = await runBash("env", { cwd: dir, signal: new AbortController().signal });
      expect(r.output).toContain("PI_TEST_VISIBLE=visible");
      expect(r.output).not.toContain("test-secret");
      process.env.PI_BASH_INHERIT_KEYS = "1";
      const kept = await runBash("env", { cwd: dir, signal: new AbortController().signal });
      expect(kept.output).toContain("ANTHROPIC_API_KEY=sk-ant-test-secret");
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
    }
  });
});

describe("OutputTail", () => {
  it("decodes characters split across chunks", () => {
    const tail = new OutputTail();
    const bytes = Buffer.from("é€😀\n");
    for (let i = 0; i < bytes.length; i++) tail.append(bytes.subarray(i, i + 1));
    expect(tail.snapshot().text).toBe("é€😀\n");
  });

  it.each([
    { chunks: ["a\nb\nc\n"], lines: 3, text: "b\nc\n", truncated: true },
    { chunks: ["a\n", "b"], lines: 2, text: "a\nb", truncated: false },
    { chunks: ["a", "b", "\n", "c"], lines: 2, text: "ab\nc", truncated: false },
  ])("counts $lines lines in $chunks", ({ chunks, lines, text, truncated }) => {
    const tail = new OutputTail({ maxLines: 2, spillPath: () => join(dir, "spill.log") });
    for (const c of chunks) tail.append(Buffer.from(c));
    const snap = tail.snapshot();
    expect(snap.truncation.totalLines).toBe(lines);
    expect(snap.text).toBe(text);
    expect(snap.truncation.truncated).toBe(truncated);
  });

  it("never shows the fragment of a line whose start was dropped", () => {
    const tail = new OutputTail({ maxBytes: 10, spillPath: () => join(dir, "spill.log") });
    tail.append(Buffer.from("0123456789".repeat(3)));
    tail.append(Buffer.from("\nok\n"));
    expect(tail.snapshot().text).toBe("ok\n");
  });

  it("spills everything, including the first chunks, once the output passes the limit", async () => {
    const path = join(dir, "spill.log");
    const tail = new OutputTail({ maxBytes: 8, spillPath: () => path });
    tail.append(Buffer.from("12345\n"));
    expect(tail.snapshot().fullOutputPath).toBeUndefined();
    tail.append(Buffer.from("67890\n"));
    await tail.finish();
    expect(tail.snapshot()).toMatchObject({ text: "67890\n", fullOutputPath: path });
    expect(readFileSync(path, "utf8")).toBe("12345\n67890\n");
  });

  it("keeps at most maxSpillBytes in the spill file and ends it with a note; the tail still follows", async () => {
    const path = join(dir, "spill.log");
    const tail = new OutputTail({ maxBytes: 8, maxSpillBytes: 20, spillPath: () => path });
    for (let i = 0; i < 10; i++) tail.append(Buffer.from(`line${i}\n`));
    await tail.finish();
    const kept = readFileSync(path, "utf8");
    expect(kept.startsWith("line0\nline1\nline2\nli\n[pi-orch: this file keeps the first 20 bytes")).toBe(true);
    expect(tail.snapshot()).toMatchObject({ text: "line9\n", fullOutputPath: path });
    expect(tail.snapshot().truncation.totalBytes).toBe(60);
  });
});
