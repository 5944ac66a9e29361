/**
 * The events of one turn of the event loop, published together: each agent's staged
 * log lines go to disk in one write, and only then do subscribers get the events, each
 * subscriber in one socket write. This keeps the write-ahead order (nothing reaches a
 * subscriber before its log line is with the OS) at one system call per log and per
 * subscriber per turn instead of one per event. Events whose write the disk refused
 * wait in their log (`isWithheld`) and are published when their lines reach the OS.
 */
import type { LoggedEvent } from "../shared/event-replay.js";
import type { AgentEventLog } from "./event-log.js";
import type { SubscriberHub } from "./subscribers.js";

/**
 * What one turn collected. Two of them take turns (one collecting while the other is
 * published), and their arrays are overwritten rather than emptied (emptying one makes
 * V8 drop its storage, and the next push allocates it again): at 10,000 events/s a
 * turn holds about two events, and fresh arrays and a map per turn were a sixth of the
 * supervisor's garbage.
 */
class Pending {
  /** Events queued: slots below `count` of the four arrays that follow. */
  count = 0;
  readonly agents: string[] = [];
  readonly entries: (LoggedEvent | null)[] = [];
  readonly raws: (string | undefined)[] = [];
  readonly entryLogs: (AgentEventLog | null)[] = [];
  /** Logs with staged lines or written withheld events, each once: slots below `logCount`, and their agents. */
  logCount = 0;
  readonly logs: (AgentEventLog | null)[] = [];
  readonly logAgents: string[] = [];

  add(agent: string, log: AgentEventLog, entry: LoggedEvent, raw: string | undefined): void {
    const i = this.count++;
    this.agents[i] = agent;
    this.entries[i] = entry;
    this.raws[i] = raw;
    this.entryLogs[i] = log;
  }

  addLog(agent: string, log: AgentEventLog): void {
    // A turn holds few agents (about one at 10,000 events/s from 16): a scan is cheaper than a map.
    for (let i = 0; i < this.logCount; i++) if (this.logs[i] === log) return;
    const i = this.logCount++;
    this.logs[i] = log;
    this.logAgents[i] = agent;
  }

  /** Empty, letting go of the events and logs. */
  clear(): void {
    for (let i = 0; i < this.count; i++) {
      this.entries[i] = null;
      this.raws[i] = undefined;
      this.entryLogs[i] = null;
    }
    for (let i = 0; i < this.logCount; i++) this.logs[i] = null;
    this.count = 0;
    this.logCount = 0;
  }
}

/** Collects published events until the end of the turn (`setImmediate`), or an explicit `flush`. */
export class PublishBatch {
  private pending = new Pending();
  /** The other `Pending`, free while no flush is under way (null during one). */
  private spare: Pending | null = new Pending();
  private scheduled = false;
  private readonly onTurnEnd = () => {
    this.scheduled = false;
    this.flush();
  };

  constructor(private readonly hub: SubscriberHub) {}

  /** Queue an event of `agent` that `log` staged; `raw` is its JSON from the worker, when it came from one. */
  add(agent: string, log: AgentEventLog, entry: LoggedEvent, raw: string | undefined): void {
    this.pending.add(agent, log, entry, raw);
    this.wake(agent, log);
  }

  /** `log` has events that reached the OS after the disk refused them (`takeWritten`): publish them at the end of the turn. */
  wake(agent: string, log: AgentEventLog): void {
    this.pending.addLog(agent, log);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.onTurnEnd);
    }
  }

  /**
   * Commit every log with staged lines, then publish, per agent in seq order: the
   * withheld events that reached the OS meanwhile, then the queued events whose lines
   * the OS has (a subscribe or shutdown calls this first).
   */
  flush(): void {
    const p = this.pending;
    if (p.logCount === 0) return;
    // A flush started from inside this one (a sink calling back) gets containers of its own.
    this.pending = this.spare ?? new Pending();
    this.spare = null;
    const { logs, logAgents, agents, entries, raws, entryLogs } = p;
    for (let i = 0; i < p.logCount; i++) logs[i]!.commit();
    for (let i = 0; i < p.logCount; i++) {
      for (const w of logs[i]!.takeWritten()) {
        if ("gap" in w) this.hub.publishGap(logAgents[i]!, w.gap, false);
        else this.hub.publish(logAgents[i]!, w.entry, w.raw, false);
      }
    }
    for (let i = 0; i < p.count; i++) {
      if (entryLogs[i]!.isWithheld(entries[i]!.seq)) continue;
      this.hub.publish(agents[i]!, entries[i]!, raws[i], false);
    }
    p.clear();
    this.spare = p;
    this.hub.deliver();
  }
}
