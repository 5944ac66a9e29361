/**
 * `pi-orch serve`: a supervisor behind its socket, with the signal handling that
 * ends it cleanly. This is where the program is assembled: the one place where the
 * IPC layer and the supervisor meet, so each of them imports only shared/.
 */
import { statSync } from "node:fs";
import type { Socket } from "node:net";
import { PeerFinder } from "../../ipc/peer.js";
import { IpcError, startIpcServer, type IpcBackend } from "../../ipc/server.js";
import { RUNNING_STATUSES } from "../../shared/schema/agent.js";
import type { IpcRequestOf } from "../../shared/schema/ipc.js";
import { agentOfProcess } from "../../supervisor/agent-process.js";
import { Supervisor, type SupervisorOptions } from "../../supervisor/supervisor.js";

/** Map socket requests onto a supervisor. */
export function supervisorBackend(sup: Supervisor): IpcBackend {
  return {
    async handle(request) {
      switch (request.type) {
        case "spawn": {
          const { id: _id, type: _type, ...opts } = request;
          return sup.spawn(opts);
        }
        case "list":
          return sup.list();
        case "status":
          return sup.status(request.agent);
        case "stop":
          if (request.all) return sup.stopAll();
          if (request.agent === undefined)
            throw Object.assign(new Error('stop needs "agent" or "all": true'), { code: "invalid_request" });
          return sup.stop(request.agent);
        case "restart":
          return sup.restart(request.agent, { wait: request.wait });
        case "remove":
          return sup.remove(request.agent, { force: request.force, deleteBranch: request.deleteBranch });
        case "rpc":
          return sup.rpc(request.agent, request.command, { timeoutMs: request.timeoutMs });
      }
    },
    subscribe(request: IpcRequestOf<"subscribe">, sink) {
      const sub = sup.subscribe({ agents: request.agents, since: request.since, sink });
      const agents = sub.agents ? [...sub.agents] : null;
      const lastSeq = Object.fromEntries(
        sup
          .list()
          .filter((a) => !agents || agents.includes(a.name))
          .map((a) => [a.name, a.lastSeq]),
      );
      return { data: { agents, lastSeq }, close: () => sub.close() };
    },
    async shutdown() {
      await sup.shutdown();
      return { stopped: sup.list().map((a) => a.name) };
    },
  };
}

/** The variable that lets agents command the fleet (an agent that orchestrates others), read by `serve`. */
const ALLOW_AGENT_CONTROL_VAR = "PI_ORCH_ALLOW_AGENT_CONTROL";

/**
 * The socket's door: a connection from another user, or from inside an agent (below one
 * of its workers, with an agent's marks in its environment, or in a sandbox's PID
 * namespace) has every request refused. Who connected is read from the kernel (ipc/peer.ts), not taken from the
 * client. Where the kernel cannot be asked (no `ss`, not Linux) everyone is served and
 * `warn` says so once.
 */
function agentDoor(workers: () => ReadonlyMap<number, string>, warn: (message: string) => void) {
  const finder = new PeerFinder();
  let warned = false;
  return async (socket: Socket): Promise<string | undefined> => {
    const peer = await finder.lookup(socket);
    if (peer.kind === "unknown") {
      if (!warned) {
        warned = true;
        warn(
          `the socket cannot tell a request from inside an unboxed agent from yours: ${peer.reason}; agents in the sandbox cannot reach it at all`,
        );
      }
      return undefined;
    }
    if (peer.kind === "gone")
      return "refusing a request whose client was gone before it could be checked (its connection closed, or its process ended)";
    // The 0700 folder and 0600 socket keep other users out; should those modes be
    // loosened (a chmod, a bind mount), the door still serves only this user. Root passes:
    // it can read the home and every agent's files whatever the socket says.
    const own = process.getuid?.();
    const stranger = peer.uids.find((uid) => uid !== own && uid !== 0);
    if (own !== undefined && stranger !== undefined)
      return `refusing a request from another user (uid ${stranger}): this supervisor serves only uid ${own}; run pi-orch as that user`;
    const known = workers();
    for (const pid of peer.pids) {
      const agent = agentOfProcess(pid, known);
      if (agent === undefined) continue;
      return `refusing a request from inside ${agent}: an agent must not list, read, steer, spawn or stop agents; to allow it, start pi-orch serve with ${ALLOW_AGENT_CONTROL_VAR}=1`;
    }
    return undefined;
  };
}

/** Options of `runSupervisorServer`: the supervisor's, plus serve behaviour. */
export interface ServeOptions extends SupervisorOptions {
  /** Restart the agents the previous supervisor left running (`serve --resume`). */
  resume?: boolean;
  /** Install SIGINT/SIGTERM/SIGHUP handlers (default true; tests turn it off). */
  handleSignals?: boolean;
  /** Longest accepted request line on the socket (default 1 MB). */
  maxRequestBytes?: number;
  /** How often the supervisor looks whether its socket file is still there (default 5 s). */
  socketCheckMs?: number;
}

/** A running `serve`. */
export interface RunningServer {
  readonly supervisor: Supervisor;
  readonly socketPath: string;
  /** Stop every agent, persist the registry, close the socket, remove the signal handlers. Idempotent. */
  close(): Promise<void>;
  /** Settles after `close()` finished, whoever started it (signal, `shutdown` request, caller). */
  readonly closed: Promise<void>;
}

const SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/** How often a supervisor looks whether its socket file is still there. */
const SOCKET_CHECK_MS = 5_000;

/** Whether the socket file at `path` is gone (not merely unreadable). */
function socketGone(path: string): boolean {
  try {
    statSync(path);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT";
  }
}

/**
 * Once the socket file is gone (its home removed, `rm orch.sock`), no command can reach the
 * supervisor again: with no agent left to look after it stops, as `shutdown` would; with
 * agents it says so once and carries on until they have ended. Not when another supervisor's
 * socket took the path: closing would unlink that one.
 */
function watchSocket(
  path: string,
  sup: Supervisor,
  everyMs: number,
  stop: () => void,
  say: ((message: string) => void) | undefined,
): NodeJS.Timeout {
  let told = false;
  const timer = setInterval(() => {
    if (!socketGone(path)) return;
    const running = sup.list().filter((a) => a.pid !== null || RUNNING_STATUSES.has(a.status));
    if (running.length === 0) {
      say?.(`${path} was removed and no agent runs, so no command can reach this supervisor; it stops`);
      stop();
    } else if (!told) {
      told = true;
      say?.(
        `${path} was removed: no command can reach this supervisor (pid ${process.pid}); it stops once its ${running.length} running agent${running.length === 1 ? "" : "s"} (${running.map((a) => a.name).join(", ")}) have ended, or at once with kill -TERM ${process.pid}`,
      );
    }
  }, everyMs);
  timer.unref();
  return timer;
}

/**
 * Start a supervisor on `$home/orch.sock`. Refuses (rejects with an `IpcError`) when
 * the home is open to others or another supervisor answers on the socket. A first
 * SIGINT/SIGTERM/SIGHUP stops every agent gracefully; a second one SIGKILLs their
 * groups. The caller exits the process once `closed` settles.
 */
export async function runSupervisorServer(opts: ServeOptions): Promise<RunningServer> {
  let sup: Supervisor | null = null;
  let closing: Promise<void> | null = null;
  let socketWatch: NodeJS.Timeout | undefined;
  let markClosed!: () => void;
  const closed = new Promise<void>((r) => (markClosed = r));
  const close = (): Promise<void> => {
    closing ??= (async () => {
      for (const signal of SIGNALS) process.off(signal, onSignal);
      clearInterval(socketWatch);
      try {
        await sup?.shutdown();
      } finally {
        await server.close();
        markClosed();
      }
    })();
    return closing;
  };
  let signalled = 0;
  const onSignal = () => {
    signalled++;
    if (signalled === 1) void close();
    else void sup?.killAll();
  };
  // The socket is taken before the supervisor opens, so the server gets a backend that
  // forwards to the real one once it exists (never caching a backend of no supervisor).
  let real: IpcBackend | null = null;
  const backend = (): IpcBackend => {
    if (!real) throw new IpcError("starting", "the supervisor is still starting; try again in a moment");
    return real;
  };
  // The home and the socket are checked before the registry is read: a live supervisor owns it.
  // After a `shutdown` request was answered, the rest of the teardown follows.
  const server = await startIpcServer({
    home: opts.home,
    backend: {
      handle: (r) => backend().handle(r),
      subscribe: (r, sink) => backend().subscribe(r, sink),
      shutdown: () => backend().shutdown(),
    },
    maxLineBytes: opts.maxRequestBytes,
    onShutdown: () => void close(),
    onAbandoned: (type) =>
      opts.onWarning?.(`a ${type} request was not carried out: its client had gone before it was read`),
    admit:
      process.env[ALLOW_AGENT_CONTROL_VAR] === "1"
        ? undefined
        : agentDoor(
            () => new Map((sup?.list() ?? []).flatMap((a) => (a.pid === null ? [] : [[a.pid, a.name] as const]))),
            (message) => opts.onWarning?.(message),
          ),
  });
  try {
    sup = Supervisor.open(opts);
    real = supervisorBackend(sup);
  } catch (err) {
    await server.close();
    throw err;
  }
  if (opts.handleSignals !== false) for (const signal of SIGNALS) process.on(signal, onSignal);
  socketWatch = watchSocket(
    server.socketPath,
    sup,
    opts.socketCheckMs ?? SOCKET_CHECK_MS,
    () => void close(),
    opts.onWarning,
  );
  if (opts.resume) await sup.resumeAll();
  return { supervisor: sup, socketPath: server.socketPath, close, closed };
}
