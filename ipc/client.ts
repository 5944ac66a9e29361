/**
 * Client side of the pi-orch socket: connect, send requests and await their
 * responses by id, and receive the event stream of a subscription.
 */
import { lstatSync, readFileSync } from "node:fs";
import { createConnection, type Socket } from "node:net";
import { dirname } from "node:path";
import { JsonlWriter, parseJsonLine, readLines } from "../shared/jsonl.js";
import { piOrchHome, supervisorLogPath } from "../shared/paths.js";
import { piOrchCommand } from "../shared/cli-hint.js";
import { checker } from "../shared/validate.js";
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
import { IpcResponse as IpcResponseSchema, IpcResultSchemas } from "../shared/schema/ipc.js";
import {
  readRpcAnswer,
  type RpcAnswer,
  type RpcCommand,
  type RpcCommandEnvelope,
  type RpcResponse,
} from "../shared/schema/rpc.js";
import { socketListenerPid } from "../shared/socket-owner.js";
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
  /**
   * Give up on a request with no answer after this long (default 10 min). An `rpc` is
   * timed by the supervisor (its own `timeoutMs`, held while the worker waits on a
   * dialog), so past its `timeoutMs` plus 5 s the client only asks whether the
   * supervisor still serves (a `status` of the agent) and keeps waiting if it does.
   */
  requestTimeoutMs?: number;
  /** The `--home` the user gave the CLI, if any: the hints in errors repeat it (`pi-orch --home X list`). */
  homeFlag?: string;
  /**
   * How long a silent supervisor is waited on (default 5 s, never more than
   * `requestTimeoutMs`): a `list`, `status` or `subscribe` gives up after it; a longer
   * request (spawn, stop, restart, remove, shutdown) then asks `status` and waits on while
   * that is answered, giving up once it is not. A SIGSTOPped or hung supervisor is then an
   * error naming its pid within seconds, not a 10-minute hang.
   */
  answerDeadlineMs?: number;
}

/** Default of `answerDeadlineMs`. */
export const DEFAULT_ANSWER_DEADLINE_MS = 5_000;

/** `PI_ORCH_ANSWER_DEADLINE_MS` (a fleet so large that `list` takes seconds), else the default. */
function answerDeadlineFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const ms = Number(env.PI_ORCH_ANSWER_DEADLINE_MS);
  return Number.isFinite(ms) && ms > 0 ? ms : DEFAULT_ANSWER_DEADLINE_MS;
}

/** Requests answered from the supervisor's memory at once: no reason to wait on them past the deadline. */
const QUICK: ReadonlySet<IpcRequestType> = new Set(["list", "status", "subscribe"]);

/** The agent a liveness probe asks the `status` of: not a valid agent name, so never an agent's. */
const PROBE_AGENT = "?";

/** Default wait for the answer to one request. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10 * 60_000;
/** Most a `status` asked past an rpc's wait may take before the supervisor counts as not serving. */
const PROBE_TIMEOUT_MS = 30_000;

type Pending = {
  type: IpcRequestType;
  resolve: (data: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
};

/** The name of user `uid` from /etc/passwd, or null. */
function userName(uid: number): string | null {
  try {
    for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
      const [name, , id] = line.split(":");
      if (Number(id) === uid && name) return name;
    }
  } catch {
    // no passwd file: the uid alone names the owner
  }
  return null;
}

/**
 * Why the socket at `path` and its folder (the home) must not be trusted, or null when
 * both belong to the current user and neither is writable by others: a socket another
 * user controls could answer with forged data and
 * would receive our prompts. Pure but for `lstat`; Windows has no such modes (null).
 */
export function untrustedSocket(path: string): string | null {
  const uid = process.getuid?.();
  if (uid === undefined) return null;
  const owner = (id: number) => {
    const name = userName(id);
    return name ? `user ${name} (uid ${id})` : `uid ${id}`;
  };
  for (const [what, target] of [
    ["folder", dirname(path)],
    ["socket", path],
  ] as const) {
    let st;
    try {
      st = lstatSync(target);
    } catch {
      continue; // missing: connecting says there is no supervisor
    }
    if (what === "socket" && !st.isSocket())
      return `${path} is not a socket; remove it and start the supervisor again (pi-orch serve)`;
    if (what === "folder" && !st.isDirectory())
      return `${target} is not a folder; point --home or PI_ORCH_HOME at a folder of yours`;
    if (st.uid !== uid) {
      return `the ${what} ${target} belongs to ${owner(st.uid)}, not to you (uid ${uid}): refusing to talk to a supervisor someone else controls; use a home of your own (--home or PI_ORCH_HOME)`;
    }
    // Writable by others: they could replace the socket, or talk to it as us.
    if ((st.mode & 0o022) !== 0) {
      return `the ${what} ${target} is writable by other users (mode ${(st.mode & 0o777).toString(8)}); run chmod ${what === "folder" ? "700" : "600"} ${target}`;
    }
  }
  return null;
}

/** A wait for a message: "300 ms", "1.5 s", "10 min". */
export function formatWait(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${Math.round(ms / 100) / 10} s`;
  return `${Math.round(ms / 6000) / 10} min`;
}

/**
 * Why an rpc gave up, with the whole wait: `waits` waits of `waitMs` for its answer,
 * the supervisor answering a status request after each until one of `probeMs` got no
 * answer, `totalMs` in all. Pure.
 */
export function rpcUnansweredMessage(
  agent: string,
  waits: number,
  waitMs: number,
  probeMs: number,
  totalMs: number,
): string {
  const waited =
    waits === 1
      ? `a wait of ${formatWait(waitMs)}`
      : `${waits} waits of ${formatWait(waitMs)}, each but the last followed by a status request it answered`;
  return (
    `the supervisor did not answer the rpc request for agent "${agent}" in ${formatWait(totalMs)} in all ` +
    `(${waited}; the status request after the last wait got no answer within ${formatWait(probeMs)}, so it is not serving)`
  );
}

/** What to do when the supervisor at `socketPath` does not answer. */
function notServingAdvice(socketPath: string, homeFlag: string | undefined): string {
  const log = supervisorLogPath(dirname(socketPath));
  return `check whether it answers at all (${piOrchCommand("list", homeFlag)}); its pid is on the "listening" line it printed (in ${log} when a pi-orch command started it): if it stays silent, kill that pid and the next pi-orch command starts a new supervisor`;
}

/** One connection to a supervisor. Requests may run concurrently; responses match by id. */
export class IpcClient {
  private readonly writer: JsonlWriter;
  private readonly pending = new Map<string, Pending>();
  private readonly listeners = new Set<(message: IpcStreamMessage) => void>();
  private nextId = 1;
  /** The liveness probe under way, shared by every request waiting on a silent supervisor. */
  private probing: Promise<void> | null = null;
  private closedError: IpcClientError | null = null;
  /** Settles when the connection ends (by either side). */
  readonly closed: Promise<void>;

  private constructor(
    private readonly socket: Socket,
    readonly socketPath: string,
    maxLineBytes: number,
    private readonly requestTimeoutMs: number,
    private readonly homeFlag: string | undefined,
    private readonly answerDeadlineMs: number = DEFAULT_ANSWER_DEADLINE_MS,
  ) {
    this.writer = new JsonlWriter(socket);
    let markClosed!: () => void;
    this.closed = new Promise((r) => (markClosed = r));
    socket.on("error", () => {});
    socket.on("close", () => {
      this.closedError ??= new IpcClientError(
        "disconnected",
        `the supervisor closed the connection (${socketPath}); check pi-orch list`,
      );
      for (const p of this.pending.values()) {
        clearTimeout(p.timer);
        p.reject(this.closedError);
      }
      this.pending.clear();
      markClosed();
    });
    readLines(socket, {
      maxLineBytes,
      onLine: (line) => this.onLine(line),
      onError: (err) =>
        this.fail(
          new IpcClientError(
            "malformed_reply",
            `the supervisor sent a reply longer than ${maxLineBytes} bytes (${err.message})`,
          ),
        ),
    });
  }

  /**
   * Connect to the supervisor of `home` (default socket path) or to `socketPath`.
   * When none runs, rejects with code `no_supervisor` and a message saying how to start one.
   */
  static connect(opts: ConnectOptions = {}): Promise<IpcClient> {
    const path = opts.socketPath ?? socketPathOf(opts.home ?? piOrchHome());
    const distrust = untrustedSocket(path);
    if (distrust) return Promise.reject(new IpcClientError("insecure_socket", distrust));
    return new Promise((resolve, reject) => {
      const socket = createConnection(path);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(
          new IpcClientError(
            "timeout",
            `the supervisor at ${path} did not accept the connection within ${opts.timeoutMs ?? 2000} ms`,
          ),
        );
      }, opts.timeoutMs ?? 2000);
      socket.once("connect", () => {
        clearTimeout(timer);
        socket.removeAllListeners("error");
        resolve(
          new IpcClient(
            socket,
            path,
            opts.maxLineBytes ?? 64 * 1024 * 1024,
            opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
            opts.homeFlag,
            opts.answerDeadlineMs ?? answerDeadlineFromEnv(),
          ),
        );
      });
      socket.once("error", (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        if (err.code === "ENOENT" || err.code === "ECONNREFUSED") {
          reject(
            new IpcClientError(
              "no_supervisor",
              `no pi-orch supervisor is running (no answer on ${path}); start one with ${piOrchCommand("serve", opts.homeFlag)}`,
            ),
          );
        } else {
          reject(new IpcClientError("connect_failed", `could not connect to ${path}: ${err.message}`));
        }
      });
    });
  }

  /** Send one request and resolve with its `data` (typed by the request's `type`), or reject with the supervisor's error. */
  request<K extends IpcRequestType>(type: K, params: IpcParams<K>): Promise<IpcResultOf<K>> {
    if (type !== "rpc") return this.askWithin(type, params);
    const rpcWait = (params as { timeoutMs?: number }).timeoutMs;
    return this.ask(type, params, rpcWait !== undefined ? rpcWait + 5_000 : this.requestTimeoutMs);
  }

  /**
   * A request other than `rpc`: a quick one gives up after `answerDeadlineMs` of silence;
   * a long one (a spawn waits for its worker) asks `status` after each such wait and goes
   * on while the supervisor answers that, up to `requestTimeoutMs` in all.
   */
  private askWithin<K extends IpcRequestType>(type: K, params: IpcParams<K>): Promise<IpcResultOf<K>> {
    if (this.closedError) return Promise.reject(this.closedError);
    const deadline = Math.min(this.answerDeadlineMs, this.requestTimeoutMs);
    const id = String(this.nextId++);
    const started = performance.now();
    return new Promise<IpcResultOf<K>>((resolve, reject) => {
      const giveUp = (what: string) => {
        this.pending.delete(id);
        reject(new IpcClientError("timeout", `${what} (${this.socketPath}); ${this.silentAdvice()}`));
      };
      const arm = (ms: number) => {
        const waiting = this.pending.get(id);
        if (!waiting) return;
        waiting.timer = setTimeout(onTimeout, ms);
        waiting.timer.unref();
      };
      const onTimeout = () => {
        if (!this.pending.has(id)) return;
        const waited = performance.now() - started;
        if (QUICK.has(type) || waited >= this.requestTimeoutMs)
          return giveUp(
            `${this.supervisorName()} did not answer the ${type} request within ${formatWait(QUICK.has(type) ? deadline : waited)}`,
          );
        this.probe(deadline).then(
          () => arm(Math.min(deadline, this.requestTimeoutMs - waited)),
          () =>
            giveUp(
              `${this.supervisorName()} did not answer the ${type} request in ${formatWait(performance.now() - started)}, ` +
                `nor a status request after it within ${formatWait(deadline)}, so it is not serving`,
            ),
        );
      };
      const timer = setTimeout(onTimeout, deadline);
      timer.unref();
      this.pending.set(id, { type, resolve: resolve as (d: unknown) => void, reject, timer });
      void this.writer.write({ id, type, ...params });
    });
  }

  /**
   * Whether the supervisor still serves: resolves on any answer to a `status` of a name no
   * agent has (a "no such agent" is an answer), rejects on silence past `waitMs` or a
   * closed connection. One at a time per connection, shared by every request waiting: a
   * thousand spawns queued behind a fleet's start ask once, not a thousand times (each
   * asking `list`, whose answer at a thousand agents is 650 KB, choked the supervisor).
   */
  private probe(waitMs: number): Promise<void> {
    this.probing ??= this.ask("status", { agent: PROBE_AGENT }, waitMs)
      .then(
        () => undefined,
        (err: IpcClientError) => {
          if (err.code === "timeout" || err.code === "disconnected") throw err;
        },
      )
      .finally(() => {
        this.probing = null;
      });
    return this.probing;
  }

  /** "the supervisor (pid 1234)", or "the supervisor" when its pid cannot be found. */
  private supervisorName(): string {
    const pid = socketListenerPid(this.socketPath);
    return pid === undefined ? "the supervisor" : `the supervisor (pid ${pid})`;
  }

  /** What to do about a silent supervisor, naming its pid when it can be found. */
  private silentAdvice(): string {
    const pid = socketListenerPid(this.socketPath);
    if (pid === undefined) return notServingAdvice(this.socketPath, this.homeFlag);
    return (
      `check whether it answers at all (${piOrchCommand("list", this.homeFlag)}); if you stopped it, kill -CONT ${pid}; ` +
      `if it stays silent, kill ${pid} and the next pi-orch command starts a new supervisor`
    );
  }

  /** `request` with no answer awaited past `waitMs` (for an `rpc`: while the supervisor still serves). */
  private ask<K extends IpcRequestType>(type: K, params: IpcParams<K>, waitMs: number): Promise<IpcResultOf<K>> {
    if (this.closedError) return Promise.reject(this.closedError);
    const id = String(this.nextId++);
    const started = Date.now();
    return new Promise<IpcResultOf<K>>((resolve, reject) => {
      const giveUp = (what: string) => {
        this.pending.delete(id);
        reject(
          new IpcClientError(
            "timeout",
            `${what} (${this.socketPath}); ${notServingAdvice(this.socketPath, this.homeFlag)}`,
          ),
        );
      };
      let waits = 0;
      const onTimeout = () => {
        if (!this.pending.has(id)) return;
        waits++;
        if (type !== "rpc")
          return giveUp(`the supervisor did not answer the ${type} request within ${formatWait(waitMs)}`);
        // The supervisor answers an rpc itself (the worker's response, its timeout, the
        // worker's exit), later than any fixed wait while a dialog is open: wait on
        // while it still serves.
        const agent = (params as unknown as { agent: string }).agent;
        const waitOn = () => {
          const waiting = this.pending.get(id);
          if (!waiting) return;
          waiting.timer = setTimeout(onTimeout, waitMs);
          waiting.timer.unref();
        };
        const probeMs = Math.min(this.requestTimeoutMs, PROBE_TIMEOUT_MS);
        this.ask("status", { agent }, probeMs).then(waitOn, (err: IpcClientError) => {
          // Any answer (even "no such agent") means it serves; only silence does not.
          if (err.code === "timeout" || err.code === "disconnected")
            giveUp(rpcUnansweredMessage(agent, waits, waitMs, probeMs, Date.now() - started));
          else waitOn();
        });
      };
      const timer = setTimeout(onTimeout, waitMs);
      timer.unref();
      this.pending.set(id, { type, resolve: resolve as (d: unknown) => void, reject, timer });
      // The id leads the line: a server that cannot read an overlong line can still answer it.
      void this.writer.write({ id, type, ...params });
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

  /**
   * Send one pi command to an agent; resolves with the worker's answer, its `data` typed
   * by the command and checked against what a client reads of it (RpcAnswerSchemas), or
   * its refusal (check `success`). Rejects with `malformed_answer` when the data does not
   * match, naming the command and each wrong field.
   */
  async rpc<C extends RpcCommand>(
    agent: string,
    command: C,
    opts: { timeoutMs?: number } = {},
  ): Promise<RpcAnswer<C["type"]>> {
    const response = await this.forward(agent, command, opts);
    try {
      return readRpcAnswer<C["type"]>(agent, command.type, response);
    } catch (err) {
      throw new IpcClientError("malformed_answer", (err as Error).message);
    }
  }

  /**
   * Forward any pi command as it is (one our schemas may not know, for a newer worker);
   * resolves with the worker's own response unchecked beyond its envelope.
   */
  forward(agent: string, command: RpcCommandEnvelope, opts: { timeoutMs?: number } = {}): Promise<RpcResponse> {
    return this.request("rpc", { agent, command, ...opts });
  }

  /**
   * Subscribe to agents' events (all when `agents` is absent). `onMessage` receives
   * `event` and `lagged` messages until the connection closes.
   */
  async subscribe(
    params: IpcParams<"subscribe">,
    onMessage: (message: IpcStreamMessage) => void,
  ): Promise<SubscribeResult> {
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

  /** Reject every waiting request with `error` and end the connection: replies can no longer be matched. */
  private fail(error: IpcClientError): void {
    this.closedError ??= error;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(error);
    }
    this.pending.clear();
    this.socket.destroy();
  }

  private onLine(line: string): void {
    const parsed = parseJsonLine(line);
    if (!parsed.ok || typeof parsed.value !== "object" || parsed.value === null || Array.isArray(parsed.value)) {
      const sample = line.length > 80 ? `${line.slice(0, 80)}…` : line;
      return this.fail(
        new IpcClientError("malformed_reply", `the supervisor sent a reply that is not a JSON object: ${sample}`),
      );
    }
    const message = parsed.value as Record<string, unknown>;
    if (message.type === "event" || message.type === "lagged") {
      for (const listener of this.listeners) listener(message as unknown as IpcStreamMessage);
      return;
    }
    const checked = checker(IpcResponseSchema)(message);
    if (!checked.ok)
      return this.fail(
        new IpcClientError("malformed_reply", `the supervisor sent a malformed reply (${checked.errors.join("; ")})`),
      );
    const response: IpcResponse = checked.value;
    if (response.id === null) {
      // A request the server could not read, whose id it could not recover either: it
      // ends the connection, and no waiting request can be told apart, so all fail.
      const error = !response.ok ? response.error : { code: "malformed_reply", message: "a success without an id" };
      return this.fail(new IpcClientError(error.code, error.message));
    }
    const id = String(response.id);
    const pending = this.pending.get(id);
    if (!pending) return; // answered after its timeout
    this.pending.delete(id);
    clearTimeout(pending.timer);
    if (!response.ok) return pending.reject(new IpcClientError(response.error.code, response.error.message));
    const data = checker(IpcResultSchemas[pending.type])(response.data);
    if (!data.ok) {
      return pending.reject(
        new IpcClientError(
          "malformed_reply",
          `the supervisor's answer to ${pending.type} does not match its schema (${data.errors.join("; ")})`,
        ),
      );
    }
    pending.resolve(response.data);
  }
}
