/**
 * The events of one turn of the event loop, published together: each agent's staged
 * log lines go to disk in one write, and only then do subscribers get the events, each
 * subscriber in one socket write. This keeps the write-ahead order (nothing reaches a
 * subscriber before its log line is with the OS) at one system call per log and per
 * subscriber per turn instead of one per event. Events whose write the disk refused
 * wait in their log (`isWithheld`) and are published when their lines reach the OS.
 */
import type { AgentEventLog, LoggedEvent } from "./event-log.js";
import type { SubscriberHub } from "./subscribers.js";

/** Collects published events until the end of the turn (`setImmediate`), or an explicit `flush`. */
export class PublishBatch {
  private agents: string[] = [];
  private entries: LoggedEvent[] = [];
  private raws: (string | undefined)[] = [];
  private entryLogs: AgentEventLog[] = [];
  private logs = new Map<AgentEventLog, string>();
  private scheduled = false;
  private readonly onTurnEnd = () => {
    this.scheduled = false;
    this.flush();
  };

  constructor(private readonly hub: SubscriberHub) {}

  /** Queue an event of `agent` that `log` staged; `raw` is its JSON from the worker, when it came from one. */
  add(agent: string, log: AgentEventLog, entry: LoggedEvent, raw: string | undefined): void {
    this.agents.push(agent);
    this.entries.push(entry);
    this.raws.push(raw);
    this.entryLogs.push(log);
    this.wake(agent, log);
  }

  /** `log` has events that reached the OS after the disk refused them (`takeWritten`): publish them at the end of the turn. */
  wake(agent: string, log: AgentEventLog): void {
    this.logs.set(log, agent);
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
    if (this.logs.size === 0) return;
    const logs = this.logs;
    this.logs = new Map();
    for (const log of logs.keys()) log.commit();
    for (const [log, agent] of logs) {
      for (const w of log.takeWritten()) {
        if ("gap" in w) this.hub.publishGap(agent, w.gap, false);
        else this.hub.publish(agent, w.entry, w.raw, false);
      }
    }
    const { agents, entries, raws, entryLogs } = this;
    this.agents = [];
    this.entries = [];
    this.raws = [];
    this.entryLogs = [];
    for (let i = 0; i < entries.length; i++) {
      if (entryLogs[i]!.isWithheld(entries[i]!.seq)) continue;
      this.hub.publish(agents[i]!, entries[i]!, raws[i], false);
    }
    this.hub.deliver();
  }
}
