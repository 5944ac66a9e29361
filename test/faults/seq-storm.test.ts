/**
 * Write-ahead of events: the supervisor is SIGKILLed in a storm of events
 * from several agents, three times; every event a subscriber saw is on disk, every
 * sequence number on disk is unique and increasing across the four supervisors, and
 * no supervisor numbers an event with a seq an earlier one used. The logs rotate many
 * times during the storm (small files) but keep every file, so history is complete.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { IpcClient } from "../../ipc/client.js";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import { FIXTURE, TestEnv } from "../supervisor/harness.js";
import { figures, killPids, serveChild, until } from "./support.js";

const env = new TestEnv();
const children: ChildProcess[] = [];
const clients: IpcClient[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  killPids(children.map((c) => c.pid!));
  await env.cleanup();
});

/** A supervisor server in its own process, ended after each test. */
const serve = (opts: Record<string, unknown>) => serveChild(opts, { children, clients });

/** An agent's events files, oldest first: `.N` ... `.1`, then the current one. */
function eventFiles(logs: string, name: string): string[] {
  const base = `${name}.events.jsonl`;
  const rotated = readdirSync(logs)
    .map((f) => (f.startsWith(`${base}.`) ? Number(f.slice(base.length + 1)) : NaN))
    .filter((n) => Number.isInteger(n))
    .sort((a, b) => b - a)
    .map((n) => resolve(logs, `${base}.${n}`));
  return [...rotated, resolve(logs, base)];
}

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
      const target = seen.size + 1500 + round * 700;
      await until(() => seen.size >= target, 30_000, `${target} events seen`);
      child.kill("SIGKILL");
      kills++;
      await exited;
    }
    let onDisk = 0;
    let files = 0;
    let duplicates = 0;
    let decreasing = 0;
    let missing = 0;
    let differ = 0;
    for (const name of names) {
      const bySeq = new Map<number, string>();
      let last = 0;
      for (const file of eventFiles(resolve(home, "logs"), name)) {
        files++;
        for (const line of readFileSync(file, "utf8").split("\n")) {
          if (!line) continue;
          const { seq, event } = JSON.parse(line) as { seq: number; event: unknown };
          onDisk++;
          if (bySeq.has(seq)) duplicates++;
          if (seq <= last) decreasing++;
          last = seq;
          bySeq.set(seq, JSON.stringify(event));
        }
      }
      for (const [key, json] of seen) {
        const [agent, seq] = key.split("#");
        if (agent !== name) continue;
        const stored = bySeq.get(Number(seq));
        if (stored === undefined) missing++;
        else if (stored !== json) differ++;
      }
    }
    figures("seq-storm", { agents: names.length, kills, events_seen: seen.size, events_on_disk: onDisk, files, duplicates, decreasing, seen_twice: seenTwice, reused, seen_missing_from_disk: missing, seen_differ_on_disk: differ });
    expect(kills).toBe(3);
    expect(files).toBeGreaterThan(names.length); // the storm rotated the logs
    expect(duplicates).toBe(0);
    expect(decreasing).toBe(0);
    expect(seenTwice).toBe(0);
    expect(reused).toBe(0);
    expect(missing).toBe(0);
    expect(differ).toBe(0);
  }, 180_000);
});
