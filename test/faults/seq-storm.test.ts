/**
 * Write-ahead of events: the supervisor is SIGKILLed in a storm of events
 * from several agents, three times; every event a subscriber saw is on disk, every
 * sequence number on disk is unique and increasing across the four supervisors, and
 * no supervisor numbers an event with a seq an earlier one used. The logs rotate many
 * times during the storm (small files) but keep every file, so history is complete.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import type { IpcClient } from "../../ipc/client.js";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import { FIXTURE, TestEnv } from "../supervisor/harness.js";
import { auditEventLog, figures, killPids, serveChild, sumAudits, until } from "./support.js";

const env = new TestEnv();
const children: ChildProcess[] = [];
const clients: IpcClient[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  killPids(children.map((c) => c.pid!));
  await env.cleanup();
});

/** A supervisor server in its own process, ended after each test. */
const serve = (opts: Record<string, unknown>) => serveChild(opts, { children, clients });

describe("fault: SIGKILL of the supervisor in a storm of events", () => {
  it("every event a subscriber saw is on disk, every seq on disk unique and increasing, none reused", async () => {
    const home = env.home();
    const opts = {
      home,
      handleSignals: false,
      defaultWorkerCommand: [process.execPath, FIXTURE],
      timings: { pingIntervalMs: 500, pingDeadlineMs: 5_000 },
      // Rotate often during the storm, keep every file: the test reads the whole history.
      logMaxBytes: 256 * 1024,
      logKeepFiles: 1_000,
      // Each update carries the whole text so far: the storm outgrows the default 16 MiB
      // subscriber budget, and a lagged subscriber would skip events this test counts.
      subscriberBufferBytes: 1024 * 1024 * 1024,
    };
    const names = ["s1", "s2", "s3", "s4"];
    const seen = new Map<string, string>(); // agent#seq -> event JSON
    let seenTwice = 0;
    let reused = 0;
    const highest = new Map<string, number>(); // highest seq seen from earlier supervisors
    let kills = 0;
    for (let round = 0; round < 4; round++) {
      const before = new Map(highest);
      // Counted from the round's start: the agents may stream while the later ones are
      // still being restarted (slow on a cold machine), so a count taken after the
      // prompts could ask for more events than the round makes.
      const roundStart = seen.size;
      const { child, client, exited } = await serve(opts);
      await client.subscribe({}, (m: IpcStreamMessage) => {
        if (m.type !== "event") return;
        const key = `${m.agent}#${m.seq}`;
        if (seen.has(key)) seenTwice++;
        if (m.seq <= (before.get(m.agent) ?? 0)) reused++;
        highest.set(m.agent, Math.max(highest.get(m.agent) ?? 0, m.seq));
        seen.set(key, JSON.stringify(m.event));
      });
      for (const name of names) {
        if (round === 0) await client.spawn({ name, env: { FIXTURE_EVENTS: "1200" } });
        else await client.restart(name);
        await client.rpc(name, { type: "prompt", message: `round ${round}` });
      }
      if (round === 3) {
        await until(() => seen.size >= 1_000 * (round + 1), 30_000, "events of the last round");
        await client.shutdown().catch(() => undefined);
        await exited;
        break;
      }
      // Kill at uneven moments, while all agents still stream (each run is 1,200 updates).
      const target = roundStart + 1500 + round * 700;
      await until(() => seen.size >= target, 30_000, `${target} events seen`);
      child.kill("SIGKILL");
      kills++;
      await exited;
    }
    const { onDisk, files, duplicates, decreasing, missing, differ } = sumAudits(
      names.map((name) => auditEventLog(resolve(home, "logs"), name, seen)),
    );
    figures("seq-storm", {
      agents: names.length,
      kills,
      events_seen: seen.size,
      events_on_disk: onDisk,
      files,
      duplicates,
      decreasing,
      seen_twice: seenTwice,
      reused,
      seen_missing_from_disk: missing,
      seen_differ_on_disk: differ,
    });
    expect(kills).toBe(3);
    expect(files).toBeGreaterThan(names.length); // the storm rotated the logs
    // One comparison, so a failure shows every count at once.
    expect({ duplicates, decreasing, seenTwice, reused, missing, differ }).toEqual({
      duplicates: 0,
      decreasing: 0,
      seenTwice: 0,
      reused: 0,
      missing: 0,
      differ: 0,
    });
  }, 180_000);
});
