/**
 * Client side of the pi-orch socket: connect, send requests and await their
 * responses by id, and receive the event stream of a subscription.
 */
import { createConnection, type Socket } from "node:net";
import { JsonlWriter, parseJsonLine, readLines } from "../shared/jsonl.js";
import { piOrchHome } from "../shared/paths.js";
import type { AgentInfo } from "../shared/schema/agent.js";
import type {
  IpcParams,
  IpcRequestType,
  IpcResponse,
  IpcResultOf,
  IpcStreamMessage,
  ShutdownResult,
  SubscribeResult,
} from "../shared/schema/ipc.js";
import type { RpcCommandEnvelope, RpcResponse } from "../shared/schema/rpc.js";
import { socketPath as socketPathOf } from "./server.js";

/** A failed request or connection; `code` is the supervisor's error code or `no_supervisor`/`disconnected`. */
export class IpcClientError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "IpcClientError";
  }
}

/** Where to connect: a pi-orch home, or a socket path. */
export interface ConnectOptions {
  home?: string;
  socketPath?: string;
  /** Give up connecting after this long (default 2 s). */
  timeoutMs?: number;
  /** Longest accepted line from the supervisor (default 64 MB: a response can carry a whole transcript). */
  maxLineBytes?: number;
}

type Pending = { resolve: (data: unknown) => void; reject: (err: Error) => void };

/** One connection to a supervisor. Requests may run concurrently; responses match by id. */
export class IpcClient {
  private readonly writer: JsonlWriter;
  private readonly pending = new Map<string, Pending>();
  private readonly listeners = new Set<(message: IpcStreamMessage) => void>();
  private nextId = 1;
  private closedError: IpcClientError | null = null;
  /** Settles when the connection ends (by either side). */
  readonly closed: Promise<void>;

  private constructor(
    private readonly socket: Socket,
    readonly socketPath: string,
    maxLineBytes: number,
  ) {
    this.writer = new JsonlWriter(socket);
    let markClosed!: () => void;
    this.closed = new Promise((r) => (markClosed = r));
    socket.on("error", () => {});
    socket.on("close", () => {
      this.closedError ??= new IpcClientError("disconnected", `the supervisor closed the connection (${socketPath}); check pi-orch list`);
      for (const p of this.pending.values()) p.reject(this.closedError);
      this.pending.clear();
      markClosed();
    });
    readLines(socket, { maxLineBytes, onLine: (line) => this.onLine(line) });
  }

  /**
   * Connect to the supervisor of `home` (default socket path) or to `socketPath`.
   * When none runs, rejects with code `no_supervisor` and a message saying how to start one.
   */
  static connect(opts: ConnectOptions = {}): Promise<IpcClient> {
    const path = opts.socketPath ?? socketPathOf(opts.home ?? piOrchHome());
    return new Promise((resolve, reject) => {
      const socket = createConnection(path);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new IpcClientError("timeout", `the supervisor at ${path} did not accept the connection within ${opts.timeoutMs ?? 2000} ms`));
      }, opts.timeoutMs ?? 2000);
      socket.once("connect", () => {
        clearTimeout(timer);
        socket.removeAllListeners("error");
        resolve(new IpcClient(socket, path, opts.maxLineBytes ?? 64 * 1024 * 1024));
      });
      socket.once("error", (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        if (err.code === "ENOENT" || err.code === "ECONNREFUSED") {
          reject(new IpcClientError("no_supervisor", `no pi-orch supervisor is running (no answer on ${path}); start one with pi-orch serve`));
        } else {
          reject(new IpcClientError("connect_failed", `could not connect to ${path}: ${err.message}`));
        }
      });
    });
  }

  /** Send one request and resolve with its `data` (typed by the request's `type`), or reject with the supervisor's error. */
  request<K extends IpcRequestType>(type: K, params: IpcParams<K>): Promise<IpcResultOf<K>> {
    if (this.closedError) return Promise.reject(this.closedError);
    const id = String(this.nextId++);
    return new Promise<IpcResultOf<K>>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (d: unknown) => void, reject });
      void this.writer.write({ ...params, id, type });
    });
  }

  /** Start a new agent; see SpawnOptions. Resolves with its AgentInfo. */
  spawn(params: IpcParams<"spawn"> = {}): Promise<AgentInfo> {
    return this.request("spawn", params);
  }

  /** Every agent. */
  list(): Promise<AgentInfo[]> {
    return this.request("list", {});
  }

  /** One agent by name or id prefix. */
  status(agent: string): Promise<AgentInfo> {
    return this.request("status", { agent });
  }

  /** Stop one agent, or every agent with `{all: true}`. */
  stop(target: string): Promise<AgentInfo>;
  stop(target: { all: true }): Promise<AgentInfo[]>;
  stop(target: string | { all: true }): Promise<AgentInfo | AgentInfo[]> {
    return this.request("stop", typeof target === "string" ? { agent: target } : { all: true });
  }

  /** Restart an agent, resuming its session. */
  restart(agent: string, opts: { wait?: boolean } = {}): Promise<AgentInfo> {
    return this.request("restart", { agent, ...opts });
  }

  /** Forget an agent and remove its worktree (resolves with the AgentInfo of what was removed). */
  remove(agent: string, opts: { force?: boolean; deleteBranch?: boolean } = {}): Promise<AgentInfo> {
    return this.request("remove", { agent, ...opts });
  }

  /** Forward one pi command; resolves with the worker's own response (check its `success`). */
  rpc(agent: string, command: RpcCommandEnvelope, opts: { timeoutMs?: number } = {}): Promise<RpcResponse> {
    return this.request("rpc", { agent, command, ...opts });
  }

  /**
   * Subscribe to agents' events (all when `agents` is absent). `onMessage` receives
   * `event` and `lagged` messages until the connection closes.
   */
  async subscribe(params: IpcParams<"subscribe">, onMessage: (message: IpcStreamMessage) => void): Promise<SubscribeResult> {
    this.listeners.add(onMessage);
    try {
      return await this.request("subscribe", params);
    } catch (err) {
      this.listeners.delete(onMessage);
      throw err;
    }
  }

  /** Ask the supervisor to stop every agent and exit; resolves once it did. */
  shutdown(): Promise<ShutdownResult> {
    return this.request("shutdown", {});
  }

  /** Close the connection (subscriptions end with it). */
  close(): Promise<void> {
    this.closedError ??= new IpcClientError("disconnected", "the connection was closed by the client");
    this.socket.end();
    this.socket.destroySoon?.();
    return this.closed;
  }

  private onLine(line: string): void {
    const parsed = parseJsonLine(line);
    if (!parsed.ok || typeof parsed.value !== "object" || parsed.value === null) return;
    const message = parsed.value as Record<string, unknown>;
    if (message.type === "event" || message.type === "lagged") {
      for (const listener of this.listeners) listener(message as unknown as IpcStreamMessage);
      return;
    }
    const response = message as IpcResponse;
    const id = response.id === null ? null : String(response.id);
    const pending = id === null ? undefined : this.pending.get(id);
    if (!pending) return; // an error about an unreadable line: this client never sends those
    this.pending.delete(id!);
    if (response.ok) pending.resolve(response.data);
    else pending.reject(new IpcClientError(response.error.code, response.error.message));
  }
}
