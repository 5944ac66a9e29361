/**
 * Remote workers over ssh, for real: the test starts its own sshd on 127.0.0.1 with
 * throw-away keys, and an agent's --worker-command is `ssh … 127.0.0.1 cd DIR && env …
 * node dist/cli/pi.js --mode rpc --provider faux`. The supervisor must treat it like a
 * local worker: events stream, abort and stop work, `restart` starts a new one, and a
 * dropped connection (the ssh client killed, or sshd's session process killed) is a
 * worker exit that the restart policy answers. sshd and every process are removed after.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PI, World, type Json } from "../support/orch-cli.js";
import { waitForExit } from "../support/rpc-worker.js";
import { childrenOf, SshServer, sshMissing } from "../support/sshd.js";

const missing = sshMissing();
let world: World | undefined;
let sshd: SshServer | undefined;

afterEach(async () => {
  await world?.cleanup();
  await sshd?.stop();
  world = undefined;
  sshd = undefined;
});

/**
 * Remote pi workers of this world (the ssh clients are local; these run under sshd): the top
 * process of each worker's tree, since a `pi` in its sandbox (on by default where bwrap works)
 * is a few processes (pi, bwrap, the boxed pi).
 */
function remoteWorkers(w: World): number[] {
  const pids = w.taggedPids().filter((pid) => {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      return argv[0] !== "ssh" && argv.includes("rpc");
    } catch {
      return false;
    }
  });
  const parentOf = (pid: number) => {
    try {
      return Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
    } catch {
      return -1;
    }
  };
  return pids.filter((pid) => !pids.includes(parentOf(pid)));
}

describe.skipIf(missing !== null)(
  `agents on another machine over ssh${missing ? ` (skipped: ${missing})` : ""}`,
  () => {
    it("supervises an ssh worker like a local one: events, abort, a dropped connection restarts it, restart and stop", async () => {
      world = new World();
      sshd = await SshServer.start();
      await world.serve();
      const remoteDir = join(world.cwd.path, "remote-checkout");
      const remoteHome = join(world.cwd.path, "remote-home");
      mkdirSync(remoteDir);
      mkdirSync(remoteHome);
      writeFileSync(join(remoteDir, "on-the-far-side.txt"), "hello\n");
      const slow = "this reply streams slowly so that it can be aborted in the middle ".repeat(6);
      const script = join(world.cwd.path, "script.jsonl");
      writeFileSync(
        script,
        [
          { toolCalls: [{ name: "bash", arguments: { command: "ls; pwd" } }] },
          { text: "listed" },
          { text: slow, chunkDelayMs: 150 },
        ]
          .map((r) => JSON.stringify(r))
          .join("\n"),
      );
      // The remote side gets no environment from us: the command sets what the worker needs.
      const remote = `cd ${remoteDir} && env PI_ORCH_TEST_TAG=${world.tag} PI_ORCH_HOME=${remoteHome} ${process.execPath} ${PI} --mode rpc --provider faux --faux-script ${script}`;
      const command = `${sshd.sshCommand()} ${remote}`;
      await world.ok(["spawn", "--name", "far", "--worker-command", command]);
      const first = await world.json(["status", "far"]);
      expect(first.status).toBe("idle");

      // Events come back over ssh: the tool ran in the remote folder.
      const listed = await world.cli(["prompt", "far", "list the files", "--wait"]);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toContain("listed");
      const toolEnd = world.events("far").find((e) => e.event.type === "tool_execution_end");
      expect(JSON.stringify(toolEnd?.event.result), JSON.stringify(toolEnd)).toContain("on-the-far-side.txt");
      expect(remoteWorkers(world)).toHaveLength(1);

      // Abort a streaming run.
      await world.ok(["prompt", "far", "talk slowly"]);
      await world.waitForStatus("far", (a) => a.status === "busy");
      await world.until(
        "a streamed delta",
        () => JSON.stringify(world!.events("far").map((e) => e.event.type)),
        (t) => t.includes("message_update"),
      );
      await world.ok(["abort", "far"]);
      await world.waitForStatus("far", (a) => a.status === "idle");
      const ends = world
        .events("far")
        .filter((e) => e.event.type === "message_end" && (e.event.message as Json)?.role === "assistant");
      expect((ends.at(-1)!.event.message as Json).stopReason).toBe("aborted");

      // A dropped connection: the local ssh client dies → worker exit → restart (restarts 1).
      process.kill(first.pid, "SIGKILL");
      const second = await world.waitForStatus("far", (a) => a.status === "idle" && a.pid !== first.pid);
      expect(second.restarts).toBe(1);
      expect(second.lastExit).toMatchObject({ reason: "exit", signal: "SIGKILL" });

      // The other end drops it: sshd's session process dies → ssh exits 255 → restart (restarts 2).
      const sessions = childrenOf(sshd.pid);
      expect(sessions.length).toBeGreaterThan(0);
      for (const pid of sessions) process.kill(pid, "SIGKILL");
      const third = await world.waitForStatus("far", (a) => a.status === "idle" && a.pid !== second.pid);
      expect(third.restarts).toBe(2);
      expect(third.lastExit).toMatchObject({ reason: "exit", code: 255 });
      // The restarted worker resumed the same session, on the remote side.
      expect(third.sessionFile).toBe(first.sessionFile);
      expect(third.sessionFile.startsWith(remoteHome)).toBe(true);

      // An explicit restart, then stop: nothing is left running on the far side.
      await world.ok(["restart", "far"]);
      const fourth = await world.waitForStatus("far", (a) => a.status === "idle" && a.pid !== third.pid);
      expect(fourth.pid).not.toBe(third.pid);
      await world.ok(["stop", "far"]);
      expect((await world.json(["status", "far"])).status).toBe("stopped");
      for (const pid of remoteWorkers(world)) expect(await waitForExit(pid, 10_000)).toBe(true);
    }, 120_000);
  },
);
