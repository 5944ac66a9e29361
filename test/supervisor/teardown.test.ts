import { spawn } from "node:child_process";
import { afterEach, expect, it } from "vitest";
import { liveGroupMembers } from "../../supervisor/process-tree.js";
import { groupAlive } from "../../supervisor/teardown.js";

const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

/** A detached child (its own process group), running `script` in node. */
async function group(script: string): Promise<{ pid: number; exited: Promise<unknown> }> {
  const child = spawn(process.execPath, ["-e", script], { detached: true, stdio: "ignore" });
  const exited = new Promise((r) => child.once("exit", r));
  await new Promise((r, j) => child.once("spawn", r).once("error", j));
  started.push(child.pid!);
  return { pid: child.pid!, exited };
}

const noProcReading = (): never => {
  throw new Error("/proc was read");
};

it.skipIf(process.platform !== "linux")(
  "a group with no process left is gone without a reading of /proc (a fleet's stops read it once per exit)",
  async () => {
    const g = await group("0");
    await g.exited;
    expect(groupAlive(g.pid, noProcReading)).toBe(false);
  },
);

it.skipIf(process.platform !== "linux")(
  "a group with members is read from /proc: running members count, zombies only do not",
  async () => {
    const g = await group("setInterval(() => {}, 1000)");
    expect(groupAlive(g.pid)).toBe(true);
    expect(liveGroupMembers(g.pid)).toEqual([g.pid]);
    // What the reading says decides: members that are all zombies answer signal 0 but are gone.
    expect(groupAlive(g.pid, () => [])).toBe(false);
    process.kill(-g.pid, "SIGKILL");
    await g.exited;
    expect(groupAlive(g.pid)).toBe(false);
  },
);
