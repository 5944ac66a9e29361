/**
 * Client side of the pi-orch socket: connect, send requests and await their
 * responses by id, and receive the event stream of a subscription.
 */
import { createConnection, type Socket } from "node:net";
import { JsonlWriter, parseJsonLine, readLines } from "../shared/jsonl.js";
import { piOrchHome } from "../shared/paths.js";
import type { IpcParams, IpcRequestType, IpcResponse, IpcStreamMessage } from "./protocol.js";
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

  /** Send one request and resolve with its `data`, or reject with the supervisor's error. */
  request<T = unknown, K extends IpcRequestType = IpcRequestType>(type: K, params: IpcParams<K>): Promise<T> {
    if (this.closedError) return Promise.reject(this.closedError);
    const id = String(this.nextId++);
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (d: unknown) => void, reject });
      void this.writer.write({ ...params, id, type });
    });
  }

  /** Start a new agent; see SpawnRequest. Resolves with its AgentInfo. */
  spawn<T = unknown>(params: IpcParams<"spawn"> = {}): Promise<T> {
    return this.request<T, "spawn">("spawn", params);
  }

  /** Every agent (AgentInfo[]). */
  list<T = unknown>(): Promise<T> {
    return this.request<T, "list">("list", {});
  }

  /** One agent by name or id prefix (AgentInfo). */
  status<T = unknown>(agent: string): Promise<T> {
    return this.request<T, "status">("status", { agent });
  }

  /** Stop one agent (AgentInfo), or all with `{all: true}` (AgentInfo[]). */
  stop<T = unknown>(target: string | { all: true }): Promise<T> {
    return this.request<T, "stop">("stop", typeof target === "string" ? { agent: target } : { all: true });
  }

  /** Restart an agent, resuming its session (AgentInfo). */
  restart<T = unknown>(agent: string, opts: { wait?: boolean } = {}): Promise<T> {
    return this.request<T, "restart">("restart", { agent, ...opts });
  }

  /** Forget an agent and remove its worktree (AgentInfo of what was removed). */
  remove<T = unknown>(agent: string, opts: { force?: boolean; deleteBranch?: boolean } = {}): Promise<T> {
    return this.request<T, "remove">("remove", { agent, ...opts });
  }

  /** Forward one pi command; resolves with the worker's own response (check its `success`). */
  rpc<T = { type: "response"; command: string; success: boolean; data?: unknown; error?: string }>(
    agent: string,
    command: { type: string; [key: string]: unknown },
    opts: { timeoutMs?: number } = {},
  ): Promise<T> {
    return this.request<T, "rpc">("rpc", { agent, command, ...opts });
  }

  /**
   * Subscribe to agents' events (all when `agents` is absent). `onMessage` receives
   * `event` and `lagged` messages until the connection closes.
   */
  async subscribe<T = unknown>(params: IpcParams<"subscribe">, onMessage: (message: IpcStreamMessage) => void): Promise<T> {
    this.listeners.add(onMessage);
    try {
      return await this.request<T, "subscribe">("subscribe", params);
    } catch (err) {
      this.listeners.delete(onMessage);
      throw err;
    }
  }

  /** Ask the supervisor to stop every agent and exit; resolves once it did. */
  shutdown<T = unknown>(): Promise<T> {
    return this.request<T, "shutdown">("shutdown", {});
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
