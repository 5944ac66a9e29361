/**
 * The supervisor's unix socket: `$PI_ORCH_HOME/orch.sock` in a 0700 folder, the
 * socket itself 0600. Each line is a request, validated by its schema and passed
 * to a backend; a bad line gets an error response and the connection stays usable.
 * The server knows nothing of agents: the backend does the work.
 */
import { chmodSync, lstatSync, mkdirSync, statSync, unlinkSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { JsonlWriter, peekLineHead, readLines, wireOf, withWire } from "../shared/jsonl.js";
import { checker } from "../shared/validate.js";
import {
  IpcRequestSchemas,
  type IpcRequest,
  type IpcRequestOf,
  type IpcRequestType,
  type IpcResponse,
  type IpcStreamMessage,
  type RequestId,
} from "../shared/schema/ipc.js";

/** What the server needs to answer requests. Errors with a string `code` keep it on the wire. */
export interface IpcBackend {
  /** Answer every request but `subscribe` and `shutdown`; the result becomes `data`. */
  handle(request: Exclude<IpcRequest, IpcRequestOf<"subscribe"> | IpcRequestOf<"shutdown">>): Promise<unknown>;
  /** Start a subscription delivering to `sink`; what its methods return is awaited (back-pressure). */
  subscribe(request: IpcRequestOf<"subscribe">, sink: StreamSink): { data: unknown; close(): void };
  /** Stop everything; the response is sent when this resolves. */
  shutdown(): Promise<unknown>;
}

/** Where a subscription's stream goes: one message, or ready JSON lines (each ending in a newline) in one write. */
export interface StreamSink {
  write(message: IpcStreamMessage): Promise<void>;
  writeLines(text: string): Promise<void> | undefined;
}

/** Options of the socket server. */
export interface IpcServerOptions {
  home: string;
  backend: IpcBackend;
  /** Longest accepted request line (default 1 MB). */
  maxLineBytes?: number;
  /** Called after a `shutdown` request was answered. */
  onShutdown?: () => void;
  /** Called for a request not carried out because its client had gone before it was read. */
  onAbandoned?: (type: string) => void;
  /**
   * Asked once per connection as it is accepted: why its requests are refused (it comes
   * from inside an agent), or undefined to serve it. Every request with an id waits for it.
   */
  admit?: (socket: Socket) => Promise<string | undefined>;
}

/** A listening server. */
export interface IpcServer {
  readonly socketPath: string;
  /** Stop listening, end every connection and remove the socket file. */
  close(): Promise<void>;
}

/** An error of the socket layer (insecure folder, supervisor already running, ...). */
export class IpcError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "IpcError";
  }
}

/** File name of the socket inside the pi-orch home. */
const SOCKET_NAME = "orch.sock";

/** Path of the socket of a pi-orch home. */
export function socketPath(home: string): string {
  return join(home, SOCKET_NAME);
}

/**
 * Create the home folder 0700 when missing; refuse one that others can enter or that
 * belongs to another user, because the socket inside grants control of every agent.
 */
export function prepareHome(home: string): void {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const st = statSync(home);
  if (!st.isDirectory())
    throw new IpcError("insecure_home", `${home} is not a folder; point --home or PI_ORCH_HOME at a folder`);
  if (typeof process.getuid === "function" && st.uid !== process.getuid()) {
    throw new IpcError(
      "insecure_home",
      `refusing to use ${home}: it belongs to another user (uid ${st.uid}); use a folder you own`,
    );
  }
  if ((st.mode & 0o077) !== 0) {
    const mode = (st.mode & 0o777).toString(8).padStart(3, "0");
    throw new IpcError(
      "insecure_home",
      `refusing to use ${home}: it is open to other users (mode ${mode}); run chmod 700 ${home}`,
    );
  }
}

/** Whether something answers on the socket (a live supervisor). */
export function socketAnswers(path: string, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(path);
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(true); // it accepted but did not finish in time: treat as live, never delete it
    }, timeoutMs);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}

/**
 * Listen on `$home/orch.sock`. A stale socket (nothing answers) is removed; a live
 * one means another supervisor runs, and starting is refused.
 */
export async function startIpcServer(opts: IpcServerOptions): Promise<IpcServer> {
  prepareHome(opts.home);
  const path = socketPath(opts.home);
  let existing: ReturnType<typeof lstatSync> | undefined;
  try {
    existing = lstatSync(path);
  } catch {
    existing = undefined;
  }
  if (existing) {
    if (!existing.isSocket())
      throw new IpcError("socket_in_use", `${path} exists and is not a socket; move it away and start again`);
    if (await socketAnswers(path)) {
      throw new IpcError(
        "already_running",
        `a pi-orch supervisor is already running on ${path}; stop it with pi-orch shutdown`,
      );
    }
    unlinkSync(path);
  }
  const connections = new Set<Socket>();
  const server = createServer((socket) => {
    connections.add(socket);
    socket.on("close", () => connections.delete(socket));
    serveConnection(socket, opts);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // The 0700 folder already keeps others out; 0600 on the socket is the second lock.
  chmodSync(path, 0o600);
  return {
    socketPath: path,
    close: () => closeServer(server, connections, path),
  };
}

async function closeServer(server: Server, connections: Set<Socket>, path: string): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  for (const socket of connections) socket.destroy();
  await closed;
  try {
    unlinkSync(path);
  } catch {
    // Already gone (server.close removes it on some platforms).
  }
}

const CLOSE_BRACE = Buffer.from("}");

function serveConnection(socket: Socket, opts: IpcServerOptions): void {
  const writer = new JsonlWriter(socket);
  const subscriptions: { close(): void }[] = [];
  const respond = (response: IpcResponse) => writer.write(response);
  const fail = (id: RequestId | null, code: string, message: string) =>
    respond({ id, ok: false, error: { code, message } });
  // Looked up at once: a client that sends and hangs up must still be judged.
  const refusal = (opts.admit?.(socket) ?? Promise.resolve(undefined)).catch(
    (err: unknown) => `refusing the connection: who is behind it could not be checked (${(err as Error).message})`,
  );
  // Set once an overlong line without an id was answered: the connection then ends.
  let ending = false;
  const inFlight = new Set<Promise<unknown>>();
  socket.on("error", () => {});
  socket.on("close", () => {
    for (const sub of subscriptions) sub.close();
  });
  readLines(socket, {
    maxLineBytes: opts.maxLineBytes ?? 1024 * 1024,
    onError: (err) => {
      // The id usually leads the line: answer that request, and the connection goes on.
      // Without one no waiting request can be told apart from another, so the error goes
      // out with id null and the connection ends: any client returns instead of waiting.
      const { id } = peekLineHead(err.head);
      // Lines after it are not read; requests already read still get their answers first.
      if (ending) return;
      const answered = fail(
        id ?? null,
        "line_too_long",
        `request ignored: ${err.message}; send large content in pieces or as a file path`,
      );
      if (id !== undefined) return;
      ending = true;
      void Promise.allSettled([answered, ...inFlight])
        .then(() => writer.flush())
        .finally(() => socket.destroySoon());
    },
    onLine: (line) => {
      if (ending || line.trim() === "") return;
      const handled = handleLine(line).catch((err: unknown) =>
        fail(null, "internal", `internal error: ${(err as Error).message}`),
      );
      inFlight.add(handled);
      void handled.finally(() => inFlight.delete(handled));
    },
  });

  async function handleLine(line: string): Promise<void> {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      return void fail(
        null,
        "bad_json",
        `request is not valid JSON (${(err as Error).message}); send one JSON object per line`,
      );
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return void fail(null, "bad_request", 'a request must be a JSON object like {"id":1,"type":"list"}');
    }
    const { id: rawId, type } = value as { id?: unknown; type?: unknown };
    const id = typeof rawId === "string" || typeof rawId === "number" ? rawId : null;
    if (id === null)
      return void fail(null, "bad_request", 'a request needs an "id" (string or number) to match its response');
    if (typeof type !== "string" || !Object.hasOwn(IpcRequestSchemas, type)) {
      const shown = typeof type === "string" ? JSON.stringify(type.slice(0, 100)) : typeof type;
      return void fail(
        id,
        "unknown_type",
        `unknown request type ${shown}; expected one of: ${Object.keys(IpcRequestSchemas).join(", ")}`,
      );
    }
    const checked = checker(IpcRequestSchemas[type as IpcRequestType])(value);
    if (!checked.ok) return void fail(id, "invalid_request", `invalid ${type} request: ${checked.errors.join("; ")}`);
    const request = checked.value as IpcRequest;
    // A request that sat unread while the supervisor was stopped (SIGSTOP, a long GC, a
    // swapped-out process) may come in together with its client's close: that client
    // gave up and told its user so; starting an agent or stopping one now would be a
    // surprise. Let the close be read, then act only for a client still there.
    // Nothing is carried out before the check of who is behind the connection.
    const refused = await refusal;
    if (request.type !== "list" && request.type !== "status") {
      await new Promise<void>((r) => setImmediate(r));
      if (socket.destroyed || socket.readableEnded) {
        opts.onAbandoned?.(request.type);
        return;
      }
    }
    if (refused !== undefined) return void fail(id, "agent_refused", refused);
    try {
      if (request.type === "subscribe") return await subscribe(request);
      if (request.type === "shutdown") {
        const data = await opts.backend.shutdown();
        await respond({ id, ok: true, data: data ?? null });
        await writer.flush();
        opts.onShutdown?.();
        return;
      }
      const data = await opts.backend.handle(request);
      // An answer that comes with its JSON (a `list`'s entries, made once per change of
      // each agent) is sent in it, not serialised again.
      const wire = wireOf(data);
      const response: IpcResponse = { id, ok: true, data: data ?? null };
      if (wire === undefined) await respond(response);
      else {
        const head = `{"id":${JSON.stringify(id)},"ok":true,"data":`;
        await respond(
          withWire(response, typeof wire === "string" ? `${head}${wire}}` : [Buffer.from(head), ...wire, CLOSE_BRACE]),
        );
      }
    } catch (err) {
      const e = err as { code?: unknown; message?: string };
      await fail(id, typeof e.code === "string" ? e.code : "internal", e.message ?? String(err));
    }
  }

  async function subscribe(request: IpcRequestOf<"subscribe">): Promise<void> {
    // Stream messages wait behind the response, so a client always sees the ok first.
    // Once open, messages go straight to the writer: no extra await per event.
    let open!: () => void;
    let gate: Promise<void> | null = new Promise<void>((r) => (open = r));
    const sub = opts.backend.subscribe(request, {
      write: async (message) => {
        if (gate) await gate;
        await writer.write(message);
      },
      writeLines: (text) => (gate ? gate.then(() => writer.writeText(text)) : writer.writeText(text)),
    });
    if (socket.destroyed) return sub.close();
    subscriptions.push(sub);
    await respond({ id: request.id, ok: true, data: sub.data ?? null });
    gate = null;
    open();
  }
}
