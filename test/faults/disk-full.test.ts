/**
 * Disk faults: a full disk under the session folder, and session files that
 * stay private whatever the umask. Real `pi --mode rpc` workers under an in-process
 * supervisor; the full disk is a small tmpfs the test mounts (root only, skipped with
 * the reason otherwise) and always unmounts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Supervisor } from "../../supervisor/supervisor.js";
import type { IpcStreamMessage } from "../../shared/schema/ipc.js";
import { SessionStore } from "../../worker/session/session-file.js";
import { compactSnapshots, type LoggedEvent } from "../../shared/event-replay.js";
import { AgentEventLog, type DroppedEvents } from "../../supervisor/event-log.js";
import { PI_BIN } from "../support/rpc-worker.js";
import { CliProcess } from "../support/cli-process.js";
import { FIXTURE, type Recorder, TestEnv } from "../supervisor/harness.js";
import { figures, killPids, serveChild, until, type Owned } from "./support.js";
import { mountSmallDisk, tmpfsUnavailable, type SmallDisk } from "./tmpfs.js";

const env = new TestEnv();
const pids = new Set<number>();
const disks: SmallDisk[] = [];
const owned: Owned = { children: [], clients: [] };
const cliProcesses: CliProcess[] = [];
afterEach(async () => {
  for (const p of cliProcesses.splice(0))
    if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill("SIGKILL");
  await Promise.allSettled(owned.clients.splice(0).map((c) => c.close()));
  for (const child of owned.children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  // Unmount first (lazily when busy): the homes are removed next, and a mount point in one could not be.
  for (const disk of disks.splice(0)) disk.unmount();
  await env.cleanup();
  killPids(pids);
  pids.clear();
});

const PI = [process.execPath, PI_BIN, "--mode", "rpc"];
const PI_TIMINGS = { pingIntervalMs: 200, pingDeadlineMs: 3_000, stopGraceMs: 1_000, killGraceMs: 500 };
const noTmpfs = tmpfsUnavailable();

type Ev = Extract<IpcStreamMessage, { type: "event" }>;
const isEvent = (m: IpcStreamMessage, agent: string, type: string): m is Ev =>
  m.type === "event" && m.agent === agent && m.event.type === type;

function piSupervisor(): { sup: Supervisor; rec: Recorder; home: string } {
  return env.supervisor({ defaultWorkerCommand: PI, timings: PI_TIMINGS });
}

function workerPid(rec: Recorder, agent: string): number {
  const started = rec.messages
    .filter((m) => isEvent(m, agent, "worker_started"))
    .map((m) => Number((m as Ev).event.pid));
  for (const pid of started) pids.add(pid);
  return started.at(-1)!;
}

/**
 * The conversation of a session file, loaded the way a resuming worker loads it (the system
 * messages that record the prompt and tools aside); `warnings` get the load warnings (a torn line).
 */
function sessionMessages(file: string, warnings: string[]): { role: string; text: string }[] {
  const store = SessionStore.open(file, { warn: (m) => warnings.push(m) });
  store.close();
  return store.entries
    .filter((e) => e.type === "message" && (e as { message?: { role?: string } }).message?.role !== "system")
    .map((e) => {
      const message = (e as unknown as { message: { role: string; content: unknown } }).message;
      const content = message.content;
      const text =
        typeof content === "string"
          ? content
          : (content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("");
      return { role: message.role, text };
    });
}

const agentEnds = (rec: Recorder, agent: string) => rec.messages.filter((m) => isEvent(m, agent, "agent_end")).length;

describe.skipIf(noTmpfs !== null)(
  `fault: the disk under the session folder fills up${noTmpfs ? ` (skipped: ${noTmpfs})` : ""}`,
  () => {
    it("starts a worker on a full disk: it runs, refuses prompts until the disk has room, then writes its session", async () => {
      const { sup, rec, home } = piSupervisor();
      const disk = mountSmallDisk(mkdtempSync(join(tmpdir(), "po-disk-")), 1024);
      disks.push(disk);
      const script = join(home, "replies.faux.json");
      writeFileSync(script, JSON.stringify([{ text: "after the space came back" }]));
      disk.fill();
      await sup.spawn({
        name: "s",
        provider: "faux",
        extraArgs: ["--faux-script", script, "--session-dir", disk.path],
      });
      const pid = workerPid(rec, "s");
      const sessionFile = sup.status("s").sessionFile!;
      const at = Date.now();
      const refused = await sup.rpc("s", { type: "prompt", message: "while full" });
      const refuseMs = Date.now() - at;
      const stateWhileFull = sup.status("s");
      // As in pi, a new session's file is written with its first message: the refused one
      // left nothing in it (an empty file starts a new session again, as pi's does).
      const bytesWhileFull = existsSync(sessionFile) ? readFileSync(sessionFile).length : 0;
      disk.free();
      const accepted = await sup.rpc("s", { type: "prompt", message: "now" });
      await until(() => agentEnds(rec, "s") === 1, 10_000, "the run after the space returned");
      const messages = sessionMessages(sessionFile, []);
      figures("worker-start-disk-full", {
        prompt_refused_ms: refuseMs,
        status_while_full: stateWhileFull.status,
        restarts: sup.status("s").restarts,
        messages_in_session: messages.length,
      });
      expect(stateWhileFull).toMatchObject({ status: "idle", pid, restarts: 0 });
      expect(refused).toMatchObject({ success: false });
      expect((refused as { error: string }).error).toMatch(
        /message refused, nothing was run: session file .* cannot be written \(ENOSPC/,
      );
      expect(bytesWhileFull).toBe(0);
      expect(accepted).toMatchObject({ success: true });
      expect(readFileSync(sessionFile, "utf8")).toMatch(/^\{"type":"session"/);
      expect(messages.map((m) => m.text)).toEqual(["now", "after the space came back"]);
      expect(sup.status("s")).toMatchObject({ pid, restarts: 0 });
    }, 60_000);

    it("refuses a prompt it cannot persist, keeps running, keeps a finished message in memory, writes it when space returns", async () => {
      const { sup, rec, home } = piSupervisor();
      const disk = mountSmallDisk(mkdtempSync(join(tmpdir(), "po-disk-")), 1024);
      disks.push(disk);
      const script = join(home, "replies.faux.json");
      // Bigger than the slack in the session file's last page: a full tmpfs still takes writes that fit there.
      const pad = "x".repeat(300);
      const long = Array.from({ length: 60 }, (_, i) => `word${i}${pad}`).join(" ");
      const bigPrompt = `two (refused) ${"y".repeat(16 * 1024)}`;
      writeFileSync(
        script,
        JSON.stringify([
          { text: "first answer" },
          { text: "second answer" },
          { text: long, chunkDelayMs: 20 },
          { text: "fourth answer" },
        ]),
      );
      await sup.spawn({
        name: "d",
        provider: "faux",
        extraArgs: ["--faux-script", script, "--session-dir", disk.path],
      });
      await sup.rpc("d", { type: "prompt", message: "one" });
      await until(() => agentEnds(rec, "d") === 1, 10_000, "first run");
      const pid = workerPid(rec, "d");
      const sessionFile = sup.status("d").sessionFile!;

      // Full: the prompt is refused before it is accepted, the worker stays up.
      const filled = disk.fill();
      let at = Date.now();
      const refused = await sup.rpc("d", { type: "prompt", message: bigPrompt });
      const refuseMs = Date.now() - at;
      const steer = await sup.rpc("d", { type: "steer", message: bigPrompt });
      const state = await sup.rpc("d", { type: "get_state" });

      // Space returns: the next prompt is accepted and persisted.
      disk.free();
      await sup.rpc("d", { type: "prompt", message: "two" });
      await until(() => agentEnds(rec, "d") === 2, 10_000, "second run");

      // Full in the middle of a streaming reply: the finished message is kept in memory...
      await sup.rpc("d", { type: "prompt", message: "three" });
      await rec.waitFor(
        (m) => isEvent(m, "d", "message_update") && JSON.stringify(m.event).includes("word5"),
        10_000,
        "streaming",
      );
      disk.fill();
      await until(() => agentEnds(rec, "d") === 3, 10_000, "third run");
      const midRunState = sup.status("d");
      const beforeFree = sessionMessages(sessionFile, []).length;
      // ...and written within a retry once space returns.
      at = Date.now();
      disk.free();
      const warnings: string[] = [];
      await until(() => sessionMessages(sessionFile, warnings).length === 6, 10_000, "the kept message on disk");
      const writtenMs = Date.now() - at;
      await sup.rpc("d", { type: "prompt", message: "four" });
      await until(() => agentEnds(rec, "d") === 4, 10_000, "fourth run");

      const messages = sessionMessages(sessionFile, warnings);
      const reported = rec.messages.filter((m) => isEvent(m, "d", "message_end")).length;
      // The stderr log is written behind the events: wait for the recovery line.
      const stderrPath = sup.logPaths("d").stderr;
      const stderrLog = await until(
        () =>
          existsSync(stderrPath) &&
          /written again/.test(readFileSync(stderrPath, "utf8")) &&
          readFileSync(stderrPath, "utf8"),
        10_000,
        "the stderr log",
      );
      figures("worker-disk-full-session", {
        disk_kb: 1024,
        filler_bytes: filled,
        prompt_refused_ms: refuseMs,
        kept_message_written_ms: writtenMs,
        messages_reported: reported,
        messages_in_session: messages.length,
        lost: reported - messages.length,
        torn_lines: warnings.length,
        restarts: sup.status("d").restarts,
      });
      expect(refused).toMatchObject({ success: false });
      expect((refused as { error: string }).error).toMatch(
        /message refused, nothing was run: session file .* cannot be written \(ENOSPC/,
      );
      expect((refused as { error: string }).error).toContain(sessionFile);
      expect(steer).toMatchObject({ success: false });
      expect(state).toMatchObject({ success: true, data: { isStreaming: false } });
      expect(midRunState.status).toBe("idle");
      expect(beforeFree).toBe(5); // the third reply was the one the full disk refused
      expect(stderrLog).toMatch(/kept in memory/);
      expect(stderrLog).toMatch(/written again/);
      expect(messages.map((m) => m.role)).toEqual([
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
      ]);
      expect(messages.map((m) => m.text)).toEqual([
        "one",
        "first answer",
        "two",
        "second answer",
        "three",
        long,
        "four",
        "fourth answer",
      ]);
      expect(warnings).toEqual([]);
      expect(workerPid(rec, "d")).toBe(pid);
      expect(sup.status("d").restarts).toBe(0);
    });
  },
);

describe.skipIf(noTmpfs !== null)(
  `fault: the disk under the supervisor's logs fills up${noTmpfs ? ` (skipped: ${noTmpfs})` : ""}`,
  () => {
    it("keeps serving, marks the agent disk full, writes the waiting events in order when space returns", async () => {
      const home = env.home();
      const disk = mountSmallDisk(join(home, "logs"), 4096);
      disks.push(disk);
      const { sup, rec } = env.supervisor({ home, defaultWorkerCommand: [process.execPath, FIXTURE] });
      await sup.spawn({ name: "f", env: { FIXTURE_EVENTS: "100" } });
      const ends = () => rec.messages.filter((m) => isEvent(m, "f", "agent_end")).length;
      const seenSoFar = () => rec.messages.filter((m) => m.type === "event" && m.agent === "f").length;
      disk.fill();
      const seenBeforeFull = seenSoFar();
      await sup.rpc("f", { type: "prompt", message: "while full" });
      // The run ends (idle again) while its events wait for the disk, unseen: write-ahead.
      const marked = await until(
        () =>
          sup.status("f").status === "idle" &&
          sup.status("f").statusReason?.startsWith("disk full:") &&
          sup.status("f").statusReason,
        10_000,
        "idle, disk full reason",
      );
      const seenWhileFull = seenSoFar() - seenBeforeFull;
      const listed = sup.list().length;
      const at = Date.now();
      disk.free();
      await until(() => !sup.status("f").statusReason, 5_000, "reason cleared");
      const recoveredMs = Date.now() - at;
      await until(() => ends() === 1, 10_000, "the waiting run's events published");
      await sup.rpc("f", { type: "prompt", message: "after" });
      await until(() => ends() === 2, 10_000, "run after");
      const lines = readFileSync(sup.logPaths("f").events, "utf8").split("\n").filter(Boolean);
      const seqs = lines.map((l) => (JSON.parse(l) as { seq: number }).seq);
      const seen = rec.messages.filter((m): m is Ev => m.type === "event" && m.agent === "f").map((m) => m.seq);
      const onDisk = new Set(seqs);
      const missingFromDisk = seen.filter((q) => !onDisk.has(q)).length;
      const increasing = seqs.every((q, i) => i === 0 || q > seqs[i - 1]);
      figures("supervisor-disk-full-logs", {
        disk_kb: 4096,
        reason: JSON.stringify(marked),
        recovered_ms: recoveredMs,
        events_seen: seen.length,
        events_on_disk: seqs.length,
        events_seen_while_full: seenWhileFull,
        missing_from_disk: missingFromDisk,
        seq_unique_increasing: increasing,
        agents_listed_while_full: listed,
      });
      expect(marked).toBe(`disk full: ${sup.logPaths("f").events}`);
      expect(listed).toBe(1);
      // Only lines that fit the full tmpfs's last page may be seen before the space returns.
      expect(seenWhileFull).toBeLessThan(100);
      expect(increasing).toBe(true);
      expect(missingFromDisk).toBe(0);
    });
  },
);

/**
 * How `messages` (one subscriber's stream) cover `agent`'s seqs 1..`last`: each seq
 * should be given exactly once, as an event or inside a `lagged` gap; `skipped` seqs
 * (snapshots a replay compacts away by design) count as given.
 */
function coverage(
  messages: readonly IpcStreamMessage[],
  agent: string,
  last: number,
  skipped: ReadonlySet<number> = new Set(),
) {
  const times = new Map<number, number>();
  const lost: number[] = [];
  const give = (seq: number) => times.set(seq, (times.get(seq) ?? 0) + 1);
  for (const m of messages) {
    if (m.agent !== agent) continue;
    if (m.type === "event") give(m.seq);
    else
      for (let q = m.from; q <= m.to; q++) {
        give(q);
        if (m.reason === "not_logged") lost.push(q);
      }
  }
  for (const q of skipped) give(q);
  let once = 0;
  let twice = 0;
  let never = 0;
  for (let q = 1; q <= last; q++) {
    const n = times.get(q) ?? 0;
    if (n === 1) once++;
    else if (n === 0) never++;
    else twice++;
  }
  const beyond = [...times.keys()].filter((q) => q > last || q < 1).length;
  return { once, twice, never, beyond, lost };
}

describe.skipIf(noTmpfs !== null)(
  `fault: events the full disk's backlog dropped${noTmpfs ? ` (skipped: ${noTmpfs})` : ""}`,
  () => {
    it("are told to every subscriber as a lost gap where they stood: live, replayed from the ring, and from the files by a later supervisor", async () => {
      const home = env.home();
      const disk = mountSmallDisk(join(home, "logs"), 4096);
      disks.push(disk);
      // A 200-update run is ~300 KB of log lines: a 32 KB backlog must drop most of it.
      const backlog = 32 * 1024;
      const warnings: string[] = [];
      const { sup, rec } = env.supervisor({
        home,
        defaultWorkerCommand: [process.execPath, FIXTURE],
        logBacklogBytes: backlog,
        onWarning: (w) => warnings.push(w),
      });
      await sup.spawn({ name: "g", env: { FIXTURE_EVENTS: "200" } });
      const ends = () => rec.messages.filter((m) => isEvent(m, "g", "agent_end")).length;
      await sup.rpc("g", { type: "prompt", message: "with space" });
      await until(() => ends() === 1, 10_000, "the run with space");
      const seenBeforeFull = rec.messages.filter((m) => m.agent === "g").length;
      disk.fill();
      await sup.rpc("g", { type: "prompt", message: "while full" });
      await until(
        () => sup.status("g").status === "idle" && sup.status("g").statusReason?.startsWith("disk full:"),
        10_000,
        "idle, disk full reason",
      );
      const seenWhileFull = rec.messages.filter((m) => m.agent === "g").length - seenBeforeFull;
      disk.free();
      // The backlog's survivors are written at the next retry, the gap told before them.
      const gap = await rec.waitFor((m) => m.type === "lagged" && m.agent === "g", 10_000, "the lost gap");
      // The waiting run's own end may be among the dropped lines (a 32 KB backlog, and lines
      // logged after it): a gap is told only once a later line is on disk, so it is the next
      // run that settles it. Wait for that run's end, found after its own user message.
      await sup.rpc("g", { type: "prompt", message: "after" });
      const afterRunEnded = () => {
        const at = rec.messages.findIndex(
          (m) => isEvent(m, "g", "message_start") && JSON.stringify((m as Ev).event).includes('"after"'),
        );
        return at >= 0 && rec.messages.slice(at).some((m) => isEvent(m, "g", "agent_end"));
      };
      await until(afterRunEnded, 10_000, "the run after");
      const last = sup.status("g").lastSeq;
      const live = coverage(rec.messages, "g", last);

      // Replay from the ring (the default ring holds the whole history once snapshots are compacted).
      const ring: IpcStreamMessage[] = [];
      const replaySub = sup.subscribe({ agents: ["g"], since: 0, sink: { write: (m) => void ring.push(m) } });
      await until(() => ring.some((m) => m.type === "event" && m.seq === last), 5_000, "the ring replay");
      replaySub.close();
      const logs = join(home, "logs");
      const onDisk = readFileSync(join(logs, "g.events.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as LoggedEvent);
      const compacted = new Set(onDisk.map((e) => e.seq));
      for (const e of compactSnapshots(onDisk)) compacted.delete(e.seq);
      const fromRing = coverage(ring, "g", last, compacted);
      await sup.shutdown();

      // A later supervisor (its own process, over the socket) holds nothing in memory: the replay is the files'.
      const later = await serveChild(
        { home, handleSignals: false, defaultWorkerCommand: [process.execPath, FIXTURE] },
        owned,
      );
      const lastLater = (await later.client.status("g")).lastSeq;
      const files: IpcStreamMessage[] = [];
      await later.client.subscribe({ agents: ["g"], since: 0 }, (m) => void files.push(m));
      await until(
        () => files.some((m) => (m.type === "event" ? m.seq : m.to) === lastLater),
        10_000,
        "the replay from the files",
      );
      const onDiskLater = readFileSync(join(logs, "g.events.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as LoggedEvent);
      const compactedLater = new Set(onDiskLater.map((e) => e.seq));
      for (const e of compactSnapshots(onDiskLater)) compactedLater.delete(e.seq);
      const fromFiles = coverage(files, "g", lastLater, compactedLater);
      // The CLI says it where it stands: `attach --since 0` (the replay, over the socket) and `logs` (the file itself).
      const lostGaps = files
        .filter((m) => m.type === "lagged" && m.reason === "not_logged")
        .map(
          (m) =>
            m.type === "lagged" &&
            `… skipped events ${m.from}-${m.to} (lost: the disk was full and their log lines were dropped; no log has them)`,
        );
      const attach = CliProcess.start(["attach", "g", "--since", "0"], home, { PI_ORCH_HOME: home });
      cliProcesses.push(attach);
      await until(
        () => lostGaps.every((l) => attach.stdout.includes(l as string)),
        10_000,
        "attach --since 0 to print the lost gap",
      ).catch((err: Error) => {
        throw new Error(`${err.message}; it printed: ${attach.stdout.slice(-2000)}${attach.stderr}`);
      });
      attach.proc.kill("SIGINT");
      await attach.exited;
      const logsCli = CliProcess.start(["logs", "g"], home, { PI_ORCH_HOME: home });
      cliProcesses.push(logsCli);
      expect((await logsCli.exited).code).toBe(0);
      await later.client.shutdown().catch(() => undefined);
      await later.exited;

      const missingOnDisk = last - onDisk.length;
      // The supervisor's warnings when the log is written again count the same lines: one per
      // time the disk refused and took again (a nearly full tmpfs can take a write between).
      const warnedMissing = [...warnings.join("\n").matchAll(/\((\d+) events that did not fit the backlog/g)].reduce(
        (sum, m) => sum + Number(m[1]),
        0,
      );
      figures("event-log-lost-gap", {
        disk_kb: 4096,
        backlog_kb: backlog / 1024,
        last_seq: last,
        on_disk: onDisk.length,
        lost: live.lost.length,
        lagged_notice: `${(gap as { from: number }).from}-${(gap as { to: number }).to}`,
        seen_while_full: seenWhileFull,
        live_once: live.once,
        live_twice: live.twice,
        live_never: live.never,
        ring_once: fromRing.once,
        ring_never: fromRing.never,
        files_once: fromFiles.once,
        files_never: fromFiles.never,
        compacted: compacted.size,
        warned_missing: warnedMissing,
      });
      expect(live.lost.length).toBeGreaterThan(0);
      // Every seq not on disk is told lost, live; every seq given once, none twice, none beyond.
      expect(live.lost.length).toBe(missingOnDisk);
      expect(live).toEqual({ once: last, twice: 0, never: 0, beyond: 0, lost: live.lost });
      expect(fromRing).toEqual({ once: last, twice: 0, never: 0, beyond: 0, lost: live.lost });
      expect(warnedMissing).toBe(missingOnDisk);
      expect(lastLater).toBeGreaterThanOrEqual(last);
      expect(fromFiles).toEqual({ once: lastLater, twice: 0, never: 0, beyond: 0, lost: live.lost });
      expect(lostGaps.length).toBeGreaterThan(0);
      for (const l of lostGaps) expect(logsCli.stdout).toContain(l);
    });
  },
);

describe.skipIf(noTmpfs !== null)(
  `fault: an agent's event log on a full disk${noTmpfs ? ` (skipped: ${noTmpfs})` : ""}`,
  () => {
    it("withholds the refused events, gives those the backlog dropped as one lost gap and the rest in order once written", () => {
      const disk = mountSmallDisk(mkdtempSync(join(tmpdir(), "po-disk-")), 1024);
      disks.push(disk);
      let woken = 0;
      // Lines bigger than a page (a full tmpfs still takes what fits in the last one); a backlog of 3 of them: older ones are dropped.
      const log = new AgentEventLog({
        logsDir: disk.path,
        name: "u",
        batched: true,
        backlogBytes: 16_000,
        onWritten: () => woken++,
      });
      log.append({ type: "before" });
      log.commit();
      disk.fill();
      // The last pages of the tmpfs may still take a few lines: write until one is refused.
      let first = 0;
      for (let i = 0; first === 0 && i < 100; i++) {
        const { seq } = log.append({ type: "full", pad: "p".repeat(5_000) });
        log.commit();
        if (log.isWithheld(seq)) first = seq;
      }
      for (let i = 1; i <= 5; i++) {
        log.append({ type: "full", pad: "p".repeat(5_000) });
        log.commit();
      }
      const whileFull = {
        lastSeq: log.lastSeq,
        withheld: [first - 1, first + 3, first + 5].map((s) => log.isWithheld(s)),
        ring: log.held.events,
        written: log.takeWritten().length,
      };
      disk.free();
      log.flush();
      const written = log.takeWritten().map((w) => ("gap" in w ? w.gap : w.entry.seq));
      const after = { lastSeq: log.lastSeq, withheld: log.isWithheld(first + 5), ring: log.held.events, woken };
      const onDisk = readFileSync(join(disk.path, "u.events.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { seq: number }).seq);
      log.close();
      figures("event-log-withheld", {
        first_refused_seq: first,
        refused_writes: 6,
        dropped: 3,
        published_after: written.length,
      });
      expect(first).toBeGreaterThan(1);
      expect(whileFull).toEqual({ lastSeq: first - 1, withheld: [false, true, true], ring: first - 1, written: 0 });
      // The three oldest refused writes did not fit the backlog: never on disk, given as a lost gap where they stood.
      expect(written).toEqual([{ from: first, to: first + 2, lost: true }, first + 3, first + 4, first + 5]);
      expect(after).toEqual({ lastSeq: first + 5, withheld: false, ring: first + 2, woken: 3 });
      expect(onDisk).toEqual([...Array.from({ length: first - 1 }, (_, i) => i + 1), first + 3, first + 4, first + 5]);
    });

    it("drops streaming updates first and keeps the run's boundaries and the supervisor's events, counting what it dropped", async () => {
      const disk = mountSmallDisk(mkdtempSync(join(tmpdir(), "po-disk-")), 1024);
      disks.push(disk);
      const told: [string | null, DroppedEvents][] = [];
      // A backlog of about 7 streaming updates: the run below refuses 24 of them, 5 KB each.
      const log = new AgentEventLog({
        logsDir: disk.path,
        name: "b",
        batched: true,
        backlogBytes: 40_000,
        onProblem: (problem, dropped) => told.push([problem, dropped]),
      });
      log.append({ type: "before" });
      log.commit();
      disk.fill();
      const update = () => ({ type: "message_update", delta: "p".repeat(5_000) });
      // The last pages of the tmpfs may still take a few lines: write until one is refused.
      let refused = false;
      for (let i = 0; !refused && i < 100; i++) {
        const { seq } = log.append(update());
        log.commit();
        refused = log.isWithheld(seq);
      }
      expect(refused).toBe(true);
      const run = [
        { type: "agent_start" },
        { type: "turn_start" },
        { type: "message_start" },
        ...Array.from({ length: 8 }, update),
        { type: "agent_status", status: "busy" },
        ...Array.from({ length: 8 }, update),
        { type: "message_end" },
        ...Array.from({ length: 8 }, update),
        { type: "turn_end" },
        { type: "agent_end" },
        { type: "agent_settled" },
        { type: "agent_status", status: "idle" },
      ];
      const seqs = new Map<number, string>();
      // Committed in groups of 5, as the supervisor commits a turn's events: a group mixes updates and boundaries.
      run.forEach((event, i) => {
        seqs.set(log.append(event).seq, event.type);
        if (i % 5 === 4) log.commit();
      });
      log.commit();
      const whileFull = run.every((_, i) => log.isWithheld(log.lastSeq + 1 + i));
      disk.free();
      log.flush();
      await new Promise<void>((r) => queueMicrotask(r));
      const written = log.takeWritten();
      const published = written.flatMap((w) => ("gap" in w ? [] : [w.entry.event.type as string]));
      const lost = written.flatMap((w) =>
        "gap" in w ? Array.from({ length: w.gap.to - w.gap.from + 1 }, (_, i) => w.gap.from + i) : [],
      );
      const onDisk = readFileSync(join(disk.path, "b.events.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as LoggedEvent).event.type);
      log.close();
      const kept = [
        "agent_start",
        "turn_start",
        "message_start",
        "agent_status",
        "message_end",
        "turn_end",
        "agent_end",
        "agent_settled",
        "agent_status",
      ];
      const dropped = told.at(-1)![1];
      figures("event-log-boundaries-kept", {
        backlog_kb: 40,
        refused_events: run.length + 1,
        updates_refused: 25,
        dropped: dropped.events,
        dropped_streaming: dropped.streaming,
        dropped_boundaries: dropped.boundaries,
      });
      expect(whileFull).toBe(true);
      // Every event of the run but updates reached the disk, in order; only updates were dropped.
      expect(published.filter((t) => t !== "message_update")).toEqual(kept);
      expect(onDisk.filter((t) => t !== "message_update" && t !== "before")).toEqual(kept);
      expect(lost.length).toBeGreaterThan(0);
      expect(new Set(lost.map((seq) => seqs.get(seq) ?? "message_update"))).toEqual(new Set(["message_update"]));
      // The recovery says how many it dropped, and of what kind.
      expect(told.map(([problem]) => problem)).toEqual([`disk full: ${join(disk.path, "b.events.jsonl")}`, null]);
      expect(dropped).toEqual({ events: lost.length, streaming: lost.length, boundaries: 0 });
    });
  },
);

describe("session files are private whatever the umask", () => {
  it("0600 files in 0700 folders under umask 000, in the home and with --session-dir", async () => {
    const previous = process.umask(0);
    try {
      const { sup, rec, home } = piSupervisor();
      const elsewhere = join(home, "open", "nested", "sessions");
      await sup.spawn({ name: "u", provider: "faux" });
      await sup.spawn({ name: "v", provider: "faux", extraArgs: ["--session-dir", elsewhere] });
      for (const name of ["u", "v"]) {
        await sup.rpc(name, { type: "prompt", message: "hello" });
        await until(() => agentEnds(rec, name) === 1, 10_000, `${name} run`);
      }
      const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
      const files = ["u", "v"].map((name) => sup.status(name).sessionFile!);
      const modes = {
        home_file: mode(files[0]),
        home_dir: mode(dirname(files[0])),
        other_file: mode(files[1]),
        other_dir: mode(elsewhere),
        other_parent: mode(dirname(elsewhere)),
      };
      figures("session-file-modes", { umask: "000", ...modes });
      expect(modes).toEqual({
        home_file: "600",
        home_dir: "700",
        other_file: "600",
        other_dir: "700",
        other_parent: "700",
      });
    } finally {
      process.umask(previous);
    }
  });
});
