/**
 * The TUI's connection to the supervisor: list the agents, subscribe to every event
 * (replaying what the supervisor still holds), feed both into the store, and when the
 * socket closes say so and reconnect until the supervisor is back. Commands go to
 * whichever connection is current.
 */
import type { IpcClient } from "../../ipc/client.js";
import type { IpcParams, IpcStreamMessage } from "../../shared/schema/ipc.js";
import type { AgentInfo } from "../../shared/schema/agent.js";
import type { RpcAnswer, RpcCommand } from "../../shared/schema/rpc.js";
import { keyAdvice } from "../key-advice.js";
import type { AgentControl } from "./control.js";
import type { TuiStore } from "./store.js";

/** Options of a link. */
export interface LinkOptions {
  /** Open a connection (the first may start a supervisor; later ones only reconnect). */
  connect: (attempt: number) => Promise<IpcClient>;
  /** Pause between reconnection attempts (default 500 ms). */
  retryMs?: number;
  /** Re-read the agent list this often, for what events do not carry (default 3 s). */
  refreshMs?: number;
  /** The supervisor's home: a missing key's advice then names its models.json and environment instead of pi's --api-key. */
  home?: string;
}

/** A live connection to the supervisor, implementing the TUI's AgentControl. */
export class SupervisorLink implements AgentControl {
  private client: IpcClient | null = null;
  private stopped = false;
  private wake: (() => void) | null = null;
  private refreshing = false;
  private readonly known = new Set<string>();
  /** Settles when the link is closed (the loop has ended). */
  readonly done: Promise<void>;

  constructor(
    private readonly store: TuiStore,
    private readonly opts: LinkOptions,
  ) {
    this.done = this.loop();
  }

  /** Close the connection and stop reconnecting. */
  async close(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.client?.close();
    await this.done;
  }

  rpc<C extends RpcCommand>(agent: string, command: C): Promise<RpcAnswer<C["type"]>> {
    return this.current()
      .rpc(agent, command)
      .then((r) =>
        r.success || !r.error || this.opts.home === undefined
          ? r
          : { ...r, error: keyAdvice(r.error, "daemon", this.opts.home) },
      );
  }

  stop(agent: string): Promise<AgentInfo> {
    return this.current().stop(agent);
  }

  restart(agent: string): Promise<AgentInfo> {
    return this.current().restart(agent, { wait: false });
  }

  spawn(params: IpcParams<"spawn">): Promise<AgentInfo> {
    return this.current()
      .spawn(params)
      .then(
        (info) => {
          void this.refresh();
          return info;
        },
        (err: Error) => {
          // A first prompt refused for want of a key: the same advice as pi-orch spawn gives.
          if (this.opts.home !== undefined) err.message = keyAdvice(err.message, "daemon", this.opts.home);
          throw err;
        },
      );
  }

  private current(): IpcClient {
    if (!this.client) throw new Error("not connected to the supervisor (reconnecting); try again in a moment");
    return this.client;
  }

  private async loop(): Promise<void> {
    for (let attempt = 0; !this.stopped; attempt++) {
      let client: IpcClient;
      try {
        client = await this.opts.connect(attempt);
      } catch (err) {
        if (attempt === 0)
          this.store.dispatch({
            type: "connection",
            state: "disconnected",
            message: (err as Error).message,
            at: Date.now(),
          });
        await this.pause(this.opts.retryMs ?? 500);
        continue;
      }
      if (this.stopped) {
        await client.close();
        return;
      }
      this.client = client;
      const timer = setInterval(() => void this.refresh(), this.opts.refreshMs ?? 3000);
      try {
        await this.attach(client);
        this.store.dispatch({ type: "connection", state: "connected", at: Date.now() });
      } catch {
        // The supervisor went away between connect and subscribe (the close below handles it), or
        // did not answer in time (busy spawning a fleet): a connection without its subscription
        // shows nothing, so close it and connect again.
        void client.close();
      }
      await client.closed;
      clearInterval(timer);
      this.client = null;
      if (this.stopped) return;
      this.store.dispatch({ type: "connection", state: "disconnected", message: "connection closed", at: Date.now() });
      await this.pause(this.opts.retryMs ?? 500);
    }
  }

  private async attach(client: IpcClient): Promise<void> {
    this.setAgents(await client.list(), true);
    // Replay what the supervisor holds: the reducer drops events it has already seen.
    await client.subscribe({ since: 0 }, (m: IpcStreamMessage) => {
      if (!this.known.has(m.agent)) void this.refresh();
      this.store.dispatch(m);
    });
  }

  private setAgents(agents: AgentInfo[], reconnected = false): void {
    this.known.clear();
    for (const a of agents) this.known.add(a.name);
    this.store.dispatch({ type: "agents", agents, reconnected });
  }

  private async refresh(): Promise<void> {
    const client = this.client;
    if (!client || this.refreshing) return;
    this.refreshing = true;
    try {
      this.setAgents(await client.list());
    } catch {
      // Disconnected: the loop reconnects and lists again.
    } finally {
      this.refreshing = false;
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
