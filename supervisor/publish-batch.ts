/**
 * The events of one turn of the event loop, published together: each agent's staged
 * log lines go to disk in one write, and only then do subscribers get the events, each
 * subscriber in one socket write. This keeps the write-ahead order (nothing reaches a
 * subscriber before its log line is with the OS) at one system call per log and per
 * subscriber per turn instead of one per event.
 */
import type { AgentEventLog, LoggedEvent } from "./event-log.js";
import type { SubscriberHub } from "./subscribers.js";

/** Collects published events until the end of the turn (`setImmediate`), or an explicit `flush`. */
export class PublishBatch {
  private agents: string[] = [];
  private entries: LoggedEvent[] = [];
  private raws: (string | undefined)[] = [];
  private readonly logs = new Set<AgentEventLog>();
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
    this.logs.add(log);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.onTurnEnd);
    }
  }

  /** Commit every log with staged lines, then publish the queued events in order (a subscribe or shutdown calls this first). */
  flush(): void {
    if (this.entries.length === 0) return;
    for (const log of this.logs) log.commit();
    this.logs.clear();
    const { agents, entries, raws } = this;
    this.agents = [];
    this.entries = [];
    this.raws = [];
    for (let i = 0; i < entries.length; i++) this.hub.publish(agents[i]!, entries[i]!, raws[i], false);
    this.hub.deliver();
  }
}
