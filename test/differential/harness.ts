/**
 * Runs one script of RPC steps against a worker process (the upstream pi 1.6.0 or
 * ours), each with its own mock model server fed the same replies, and records what
 * every step produced: its responses and events, up to a barrier command whose
 * response proves everything before it was written.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startMockModelServer, type MockModelServer, type MockReply } from "../support/mock-model-server.js";
import { PI_BIN, RpcWorker, tempDir } from "../support/rpc-worker.js";
import { NODE22, PI16_CLI } from "../support/upstream-pi16.js";

type Json = Record<string, any>;

/** What one step produced on one side. */
export interface StepRecord {
  responses: Json[];
  events: Json[];
}

/** What a step can do; all waits are for lines of this step. */
export interface Driver {
  /** Send a command and wait for its response (matched by id). */
  send(command: Json): Promise<Json>;
  /** Send a raw line and wait for the next response without an id. */
  raw(line: string): Promise<Json>;
  /** Send a line that has no response (an `extension_ui_response`). */
  write(line: Json): void;
  /** The model requests this side's mock server received during this step, in order. */
  requests(): Json[];
  /** Record something the step measured as an event of this step (compared like the others). */
  note(event: Json): void;
  /** Wait for an event of this type (received during this step). */
  event(type: string, test?: (e: Json) => boolean): Promise<Json>;
  /** Queue replies on this side's mock model. */
  replies(...replies: MockReply[]): void;
  /** Earlier steps' records of this side, by step name (to reuse ids and paths). */
  earlier: Map<string, StepRecord>;
  /** This side's folders. */
  dirs: { cwd: string; sessions: string };
}

/** One step of the script. */
export interface Step {
  name: string;
  run: (d: Driver) => Promise<void>;
  /**
   * The step acts while the model streams (an abort mid-stream): how many chunks arrive
   * first is timing, so consecutive text deltas of one block are compared as one.
   */
  timed?: boolean;
}

/** A started side. */
export interface Side {
  name: "pi" | "ours";
  worker: RpcWorker;
  server: MockModelServer;
  /** Replies for the running step, taken in order by the model requests. */
  pending: MockReply[];
  dirs: { root: string; cwd: string; sessions: string; home: string };
  cleanup: () => Promise<void>;
}

const MODELS = (url: string) => ({
  providers: {
    mock: {
      baseUrl: `${url}/v1`,
      api: "openai-completions",
      apiKey: "mock-key",
      models: [
        { id: "mock-1", name: "Mock 1", reasoning: true, contextWindow: 128_000, maxTokens: 4096 },
        { id: "mock-2", name: "Mock 2", reasoning: false, contextWindow: 64_000, maxTokens: 2048 },
      ],
    },
  },
});

/** The environment without any provider key, so both sides see only the mock. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/API_KEY|_TOKEN$|^PI_/.test(k)) env[k] = v;
  return { ...env, NO_COLOR: "1", ...extra };
}

/**
 * The extension both sides load (`-e`, written into each side's folder): commands whose
 * effects the wire shows, an appended entry (`entry_appended`), a dialog and a notice
 * (`extension_ui_request`), a handler that throws (`extension_error`), and a notice from
 * every agent_settled handler (it comes before the event). It imports
 * nothing, so pi 1.6.0 and ours load the same text.
 */
const EXTENSION = `export default function (pi) {
  pi.on("agent_settled", (event, ctx) => ctx.ui.notify(event.aborted ? "settled (aborted)" : "settled", "info"));
  pi.registerCommand("note", {
    description: "append a note entry to the session",
    handler: async (args) => pi.appendEntry("diff-note", { text: args }),
  });
  pi.registerCommand("ask", {
    description: "ask to confirm, then say the answer",
    handler: async (_args, ctx) => {
      const yes = await ctx.ui.confirm("Proceed?", "the differential asks");
      ctx.ui.notify(yes ? "confirmed" : "declined", "info");
    },
  });
  pi.registerCommand("boom", {
    description: "a command that throws",
    handler: async () => {
      throw new Error("boom from the differential");
    },
  });
}
`;

/** Start one side in fresh folders with its own mock model server; `args` replace `--session-dir` (e.g. `--no-session`). */
export async function startSide(name: "pi" | "ours", args?: string[]): Promise<Side> {
  const tmp = tempDir(`pi-diff-${name}-`);
  const root = tmp.path;
  const dirs = { root, cwd: join(root, "project"), sessions: join(root, "sessions"), home: join(root, "home") };
  for (const d of [dirs.cwd, dirs.sessions, dirs.home]) mkdirSync(d, { recursive: true });
  writeFileSync(join(dirs.cwd, "notes.txt"), "alpha\nbeta\n");
  const server = await startMockModelServer();
  // Every request takes the next reply of the step that is running: replies a step did
  // not use (a run aborted early) never leak into the next step.
  const pending: MockReply[] = [];
  const none: MockReply = {
    error: { status: 500, message: "differential script: no reply scripted for this request" },
  };
  for (let i = 0; i < 500; i++) server.enqueue(() => pending.shift() ?? none);
  writeFileSync(join(dirs.home, "models.json"), JSON.stringify(MODELS(server.url)));
  const extension = join(root, "extension.ts");
  writeFileSync(extension, EXTENSION);
  // pi's OpenAI client retries a 5xx itself unless told not to; ours leaves every retry to the session layer.
  // Recent tokens kept small, so a manual compaction has something to summarize.
  const settings = {
    compaction: { keepRecentTokens: 10 },
    ...(name === "pi" ? { retry: { provider: { maxRetries: 0 } } } : {}),
  };
  writeFileSync(join(dirs.home, "settings.json"), JSON.stringify(settings));
  const argv = [
    "--mode",
    "rpc",
    "--provider",
    "mock",
    "--model",
    "mock-1",
    "-e",
    extension,
    ...(args ?? ["--session-dir", dirs.sessions]),
  ];
  const worker =
    name === "pi"
      ? new RpcWorker(argv, {
          cwd: dirs.cwd,
          bin: [NODE22, PI16_CLI],
          env: cleanEnv({ PI_CODING_AGENT_DIR: dirs.home, PI_OFFLINE: "1", HOME: root }),
        })
      : new RpcWorker(argv, {
          cwd: dirs.cwd,
          bin: [process.execPath, PI_BIN],
          env: cleanEnv({ PI_ORCH_HOME: dirs.home, HOME: root }),
        });
  return {
    name,
    worker,
    server,
    pending,
    dirs,
    cleanup: async () => {
      worker.kill("SIGKILL");
      await worker.exited;
      await server.close();
      tmp.cleanup();
    },
  };
}

/**
 * Consecutive output updates of one stream as one: how many `tool_execution_update`s a
 * tool sends, or `bash_execution_update`s a command's output arrives in, depends on
 * timing and pipe reads, not on the implementation. A bash run keeps its whole output.
 * With `deltas` (a timed step), consecutive text deltas of one block too.
 */
function collapseStreamed(events: Json[], deltas: boolean): Json[] {
  const out: Json[] = [];
  for (const e of events) {
    const last = out.at(-1);
    const delta = (x: Json | undefined) =>
      x?.type === "message_update" && x.assistantMessageEvent?.type === "text_delta";
    if (
      deltas &&
      delta(e) &&
      delta(last) &&
      last!.assistantMessageEvent.contentIndex === e.assistantMessageEvent.contentIndex
    ) {
      const joined = last!.assistantMessageEvent.delta + e.assistantMessageEvent.delta;
      out[out.length - 1] = { ...e, assistantMessageEvent: { ...e.assistantMessageEvent, delta: joined } };
      continue;
    }
    if (last && e.type === "tool_execution_update" && last.type === e.type && last.toolCallId === e.toolCallId) {
      out[out.length - 1] = e;
    } else if (last && e.type === "bash_execution_update" && last.type === e.type && last.id === e.id) {
      out[out.length - 1] = { ...last, delta: last.delta + e.delta };
    } else out.push(e);
  }
  return out;
}

/** Run the script on one side; returns each step's record. A step that fails is recorded with the error as an event. */
export async function runScript(side: Side, steps: readonly Step[]): Promise<Map<string, StepRecord>> {
  const records = new Map<string, StepRecord>();
  let barrier = 0;
  for (const step of steps) {
    const from = side.worker.received.length;
    const requestsFrom = side.server.requests.length;
    const notes: Json[] = [];
    side.pending.length = 0;
    let ids = 0;
    const driver: Driver = {
      // pi answers some bad commands without the id: take the next id-less response for the command then.
      send: (command) => {
        const id = `${step.name}-${++ids}`;
        const at = side.worker.received.length;
        side.worker.writeRaw(`${JSON.stringify({ ...command, id })}\n`);
        return side.worker.waitFor(
          (l) => l.type === "response" && (l.id === id || (l.id === undefined && l.command === command.type)),
          20_000,
          at,
        );
      },
      raw: (line) => {
        const at = side.worker.received.length;
        side.worker.writeRaw(`${line}\n`);
        return side.worker.waitFor((l) => l.type === "response" && l.id === undefined, 20_000, at);
      },
      write: (line) => side.worker.writeRaw(`${JSON.stringify(line)}\n`),
      requests: () => side.server.requests.slice(requestsFrom).map((r) => r.body as Json),
      note: (event) => void notes.push(event),
      event: (type, test) => side.worker.waitFor((l) => l.type === type && (!test || test(l)), 20_000, from),
      replies: (...replies) => side.pending.push(...replies),
      earlier: records,
      dirs: side.dirs,
    };
    let failure: string | undefined;
    try {
      await step.run(driver);
    } catch (err) {
      failure = (err as Error).message.split("\n")[0];
    }
    const barrierId = `barrier-${++barrier}`;
    await side.worker.request({ type: "get_last_assistant_text", id: barrierId });
    const lines = side.worker.received.slice(from).filter((l) => l.id !== barrierId);
    records.set(step.name, {
      responses: lines.filter((l) => l.type === "response"),
      events: [
        ...collapseStreamed(
          lines.filter((l) => l.type !== "response"),
          step.timed === true,
        ),
        ...notes,
        ...(failure ? [{ type: "__step_failed__", error: failure }] : []),
      ],
    });
  }
  return records;
}
