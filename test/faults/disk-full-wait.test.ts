/**
 * `pi-orch prompt NAME TEXT --wait` through a disk-full in the middle of its run: a real
 * supervisor (its own process) with a small log backlog, its `logs/` on a small tmpfs
 * (root only, skipped with the reason otherwise; always unmounted), one real `pi --mode
 * rpc` worker streaming a long faux reply. The disk fills once the reply streams, the run
 * ends while it is full, the space returns: the CLI must end at the run's end, say which
 * events it skipped, and still print the whole reply.
 */
import { afterEach, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import { PI_BIN } from "../support/rpc-worker.js";
import { CliProcess, type Exit } from "../support/cli-process.js";
import { TestEnv } from "../supervisor/harness.js";
import { figures, killPids, serveChild, until, type Owned } from "./support.js";
import { mountSmallDisk, tmpfsUnavailable, type SmallDisk } from "./tmpfs.js";

const env = new TestEnv();
const disks: SmallDisk[] = [];
const owned: Owned = { children: [], clients: [] };
const cliProcesses: CliProcess[] = [];
const workerPids = new Set<number>();
afterEach(async () => {
  for (const p of cliProcesses.splice(0)) p.signal("SIGKILL");
  await Promise.allSettled(owned.clients.splice(0).map((c) => c.close()));
  for (const child of owned.children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  killPids(workerPids);
  workerPids.clear();
  // Unmount before the home goes: a mount point in it could not be removed.
  for (const disk of disks.splice(0)) disk.unmount();
  await env.cleanup();
});

const noTmpfs = tmpfsUnavailable();

describe.skipIf(noTmpfs !== null)(
  `fault: the log disk fills in the middle of a prompt --wait${noTmpfs ? ` (skipped: ${noTmpfs})` : ""}`,
  () => {
    it("prompt --wait ends at the run's end with a skipped-events note and the whole reply", async () => {
      const home = env.home();
      const disk = mountSmallDisk(join(home, "logs"), 4096);
      disks.push(disk);
      // 120 words of 60 characters: pi's updates carry the partial message, so the run's log
      // lines add up to several MB, far past a 32 KB backlog once the disk is full.
      const words = Array.from({ length: 120 }, (_, i) => `w${String(i).padStart(3, "0")}${"x".repeat(56)}`);
      const reply = words.join(" ");
      const script = join(home, "replies.faux.json");
      writeFileSync(script, JSON.stringify([{ text: reply, chunkDelayMs: 15 }]));
      const serve = await serveChild(
        {
          home,
          handleSignals: false,
          defaultWorkerCommand: [process.execPath, PI_BIN, "--mode", "rpc"],
          logBacklogBytes: 32 * 1024,
          timings: { pingIntervalMs: 500, pingDeadlineMs: 5_000 },
        },
        owned,
      );
      const { client } = serve;
      await client.spawn({ name: "w", provider: "faux", extraArgs: ["--faux-script", script] });
      const seen: IpcStreamMessage[] = [];
      await client.subscribe({ agents: ["w"] }, (m) => {
        seen.push(m);
        if (m.type === "event" && m.event.type === "worker_started") workerPids.add(Number(m.event.pid));
      });

      const cli = CliProcess.start(["prompt", "w", "write the long one", "--wait"], home, { PI_ORCH_HOME: home });
      cliProcesses.push(cli);
      // Full once the reply streams (seen by this subscriber, so on disk: write-ahead).
      await until(
        () => seen.some((m) => m.type === "event" && JSON.stringify(m.event).includes("w010")),
        30_000,
        "the reply streaming",
      );
      const filledAt = Date.now();
      disk.fill();
      const seenBeforeFull = seen.length;
      // The run ends while the disk is full; its events wait for the disk, unseen.
      const reason = await until(
        async () => {
          const info = await client.status("w");
          return info.status === "idle" && info.statusReason?.startsWith("disk full:") && info.statusReason;
        },
        30_000,
        "the run's end on the full disk",
      );
      const fullMs = Date.now() - filledAt;
      const seenWhileFull = seen.length - seenBeforeFull;
      const freedAt = Date.now();
      disk.free();
      const bound = 60_000;
      const exit = await Promise.race([
        cli.exited,
        new Promise<Exit | null>((r) => setTimeout(() => r(null), bound).unref()),
      ]);
      const endedMs = Date.now() - freedAt;
      const printed = `exit ${JSON.stringify(exit)}\nstdout:\n${cli.stdout.slice(-3000)}\nstderr:\n${cli.stderr.slice(-2000)}`;
      if (exit === null)
        throw new Error(`prompt --wait still running ${bound} ms after the space returned; ${printed}`);
      const notes = [...cli.stderr.matchAll(/… skipped events (\d+)-(\d+) \(lost: [^)]*\)/g)];
      const skipped = notes.reduce((n, m) => n + Number(m[2]) - Number(m[1]) + 1, 0);
      const lostLive = seen.flatMap((m) => (m.type === "lagged" && m.reason === "not_logged" ? [m] : []));
      figures("prompt-wait-disk-full", {
        disk_kb: 4096,
        backlog_kb: 32,
        words: words.length,
        disk_full_ms: fullMs,
        seen_while_full: seenWhileFull,
        cli_ended_after_free_ms: endedMs,
        exit_code: String(exit.code),
        skipped_notes: notes.length,
        skipped_events: skipped,
        lost_told_live: lostLive.reduce((n, m) => n + m.to - m.from + 1, 0),
        last_seq: (await client.status("w")).lastSeq,
        reply_printed_whole: cli.stdout.includes(reply),
      });
      expect(reason, printed).toMatch(/^disk full: /);
      expect(exit, printed).toEqual({ code: 0, signal: null });
      expect(notes.length, printed).toBeGreaterThan(0);
      expect(skipped, printed).toBe(lostLive.reduce((n, m) => n + m.to - m.from + 1, 0));
      // Updates were dropped, yet stdout is the reply, whole (the note went to stderr).
      expect(cli.stdout, printed).toBe(`${reply}\n`);
    }, 150_000);
  },
);
