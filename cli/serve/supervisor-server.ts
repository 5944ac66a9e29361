/**
 * `pi-orch serve`: a supervisor behind its socket, with the signal handling that
 * ends it cleanly. This is where the program is assembled: the one place where the
 * IPC layer and the supervisor meet, so each of them imports only shared/.
 */
import { IpcError, startIpcServer, type IpcBackend } from "../../ipc/server.js";
import type { IpcRequestOf } from "../../shared/schema/ipc.js";
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

/** Options of `runSupervisorServer`: the supervisor's, plus serve behaviour. */
export interface ServeOptions extends SupervisorOptions {
  /** Restart the agents the previous supervisor left running (`serve --resume`). */
  resume?: boolean;
  /** Install SIGINT/SIGTERM/SIGHUP handlers (default true; tests turn it off). */
  handleSignals?: boolean;
  /** Longest accepted request line on the socket (default 1 MB). */
  maxRequestBytes?: number;
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

/**
 * Start a supervisor on `$home/orch.sock`. Refuses (rejects with an `IpcError`) when
 * the home is open to others or another supervisor answers on the socket. A first
 * SIGINT/SIGTERM/SIGHUP stops every agent gracefully; a second one SIGKILLs their
 * groups. The caller exits the process once `closed` settles.
 */
export async function runSupervisorServer(opts: ServeOptions): Promise<RunningServer> {
  let sup: Supervisor | null = null;
  let closing: Promise<void> | null = null;
  let markClosed!: () => void;
  const closed = new Promise<void>((r) => (markClosed = r));
  const close = (): Promise<void> => {
    closing ??= (async () => {
      for (const signal of SIGNALS) process.off(signal, onSignal);
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
  });
  try {
    sup = Supervisor.open(opts);
    real = supervisorBackend(sup);
  } catch (err) {
    await server.close();
    throw err;
  }
  if (opts.handleSignals !== false) for (const signal of SIGNALS) process.on(signal, onSignal);
  if (opts.resume) await sup.resumeAll();
  return { supervisor: sup, socketPath: server.socketPath, close, closed };
}
