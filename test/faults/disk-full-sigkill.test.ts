/**
 * Write-ahead on a full disk: the disk under the supervisor's logs is full while agents
 * stream, a subscriber is connected, and the supervisor (a real `serve` child) is
 * SIGKILLed; then the space returns and a new supervisor runs the agents again. The
 * events that waited in memory for the disk reached no subscriber, so the kill lost
 * nothing anyone saw, and the next supervisor reused no seq anyone saw. The tmpfs is
 * mounted by the test (root only, skipped with the reason otherwise) and always unmounted.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import type { IpcClient } from "../../ipc/client.js";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import { FIXTURE, TestEnv } from "../supervisor/harness.js";
import { auditEventLog, figures, killPids, serveChild, sumAudits, until } from "./support.js";
import { mountSmallDisk, tmpfsUnavailable, type SmallDisk } from "./tmpfs.js";

const env = new TestEnv();
const children: ChildProcess[] = [];
const clients: IpcClient[] = [];
const disks: SmallDisk[] = [];
const workerPids = new Set<number>();
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  killPids(workerPids);
  workerPids.clear();
  // Unmount before the home goes: a mount point in it could not be removed.
  for (const disk of disks.splice(0)) disk.unmount();
  await env.cleanup();
});

/** A supervisor server in its own process, ended after each test. */
const serve = (opts: Record<string, unknown>) => serveChild(opts, { children, clients });

const noTmpfs = tmpfsUnavailable();

describe.skipIf(noTmpfs !== null)(
  `fault: SIGKILL of the supervisor while its logs' disk is full${noTmpfs ? ` (skipped: ${noTmpfs})` : ""}`,
  () => {
    it("subscribers saw only events on disk; after the restart the seqs on disk are unique and increasing", async () => {
      const home = env.home();
      const disk = mountSmallDisk(join(home, "logs"), 4096);
      disks.push(disk);
      const opts = {
        home,
        handleSignals: false,
        defaultWorkerCommand: [process.execPath, FIXTURE],
        timings: { pingIntervalMs: 500, pingDeadlineMs: 5_000 },
      };
      const names = ["w1", "w2", "w3"];
      const seen = new Map<string, string>(); // agent#seq -> event JSON
      const ends = new Map<string, number>();
      let seenTwice = 0;
      const record = (m: IpcStreamMessage) => {
        if (m.type !== "event") return;
        const key = `${m.agent}#${m.seq}`;
        // The first content seen stays: a seq reused for another event shows as differing on disk.
        if (seen.has(key)) seenTwice++;
        else seen.set(key, JSON.stringify(m.event));
        if (m.event.type === "worker_started") workerPids.add(Number(m.event.pid));
        if (m.event.type === "agent_end") ends.set(m.agent, (ends.get(m.agent) ?? 0) + 1);
      };
      const allEnded = (n: number) => names.every((name) => (ends.get(name) ?? 0) >= n);

      // A first supervisor: one run each with space, then runs on the full disk, then SIGKILL.
      const first = await serve(opts);
      await first.client.subscribe({}, record);
      for (const name of names) {
        await first.client.spawn({ name, env: { FIXTURE_EVENTS: "100" } });
        await first.client.rpc(name, { type: "prompt", message: "with space" });
      }
      await until(() => allEnded(1), 20_000, "the runs with space");
      disk.fill();
      const seenBeforeFull = seen.size;
      for (const name of names) await first.client.rpc(name, { type: "prompt", message: "while full" });
      // The runs end (the agents are idle again) although no subscriber saw their events.
      const whileFull = await until(
        async () => {
          const list = await first.client.list();
          return list.every((a) => a.status === "idle" && a.statusReason?.startsWith("disk full:")) && list;
        },
        20_000,
        "idle and disk full",
      );
      const seenWhileFull = seen.size - seenBeforeFull;
      first.child.kill("SIGKILL");
      await first.exited;
      const lastSeqBeforeKill = Math.max(...[...seen.keys()].map((k) => Number(k.split("#")[1])));

      // Space returns; a second supervisor runs every agent again and shuts down cleanly.
      disk.free();
      const second = await serve(opts);
      const seenBeforeRestart = seen.size;
      let reused = 0;
      await second.client.subscribe({}, (m) => {
        if (m.type === "event" && seen.has(`${m.agent}#${m.seq}`)) reused++;
        record(m);
      });
      for (const name of names) {
        await second.client.restart(name);
        await second.client.rpc(name, { type: "prompt", message: "after the restart" });
      }
      await until(() => allEnded(2), 20_000, "the runs after the restart");
      await second.client.shutdown().catch(() => undefined);
      await second.exited;

      const { onDisk, duplicates, decreasing, missing, differ } = sumAudits(
        names.map((name) => auditEventLog(join(home, "logs"), name, seen)),
      );
      figures("disk-full-sigkill", {
        agents: names.length,
        events_seen_before_full: seenBeforeFull,
        events_seen_while_full: seenWhileFull,
        reasons: JSON.stringify(whileFull.map((a) => a.statusReason)),
        last_seq_seen_before_kill: lastSeqBeforeKill,
        events_seen_after_restart: seen.size - seenBeforeRestart,
        events_on_disk: onDisk,
        duplicates,
        decreasing,
        seen_twice: seenTwice,
        reused,
        seen_missing_from_disk: missing,
        seen_differ_on_disk: differ,
      });
      expect(whileFull.map((a) => a.statusReason)).toEqual(
        names.map((n) => `disk full: ${join(home, "logs", `${n}.events.jsonl`)}`),
      );
      // A full tmpfs still takes the lines that fit its last pages (those are on disk and
      // may be seen); the rest of the 3 x 100-update runs waited, unseen, and died with the kill.
      expect(seenWhileFull).toBeLessThan(100);
      expect(allEnded(2)).toBe(true);
      // One comparison, so a failure shows every count at once.
      expect({ duplicates, decreasing, seenTwice, reused, missing, differ }).toEqual({
        duplicates: 0,
        decreasing: 0,
        seenTwice: 0,
        reused: 0,
        missing: 0,
        differ: 0,
      });
    }, 90_000);
  },
);
