/**
 * One RPC script run on our worker and on upstream pi, reduced to what a client sees,
 * so a test compares the two transcripts whole (`expect(ours).toEqual(upstream)`) instead
 * of spelling out every expected line: the extension UI requests (without their ids),
 * extension errors, the messages and tool results as they end, the responses the script
 * asked to keep, and what each model request carried. The temp paths of each side are
 * replaced by `<home>` and `<project>` (its folder's name by `<project-name>`), so the same script gives the same text on both.
 */
import { basename } from "node:path";
import { expect } from "vitest";
import type { MockModelServer, MockReply } from "./mock-model-server.js";
import type { RpcWorker } from "./rpc-worker.js";
import { startOracle, type Implementation, type OracleStart, type TempDir } from "./upstream-oracle.js";

type Line = Record<string, any>;

/** What a script drives: one side's worker, and helpers that wait on events only. */
export interface OracleSide {
  impl: Implementation;
  /** This side's mock model server (its own when both sides run at once). */
  server: MockModelServer;
  w: RpcWorker;
  home: string;
  project: string;
  /** Send a command and wait for its response; `keep` adds the response to the transcript. */
  send(command: Line, keep?: boolean): Promise<Line>;
  /** Prompt and wait for the run's agent_end (replies are queued on the mock first). */
  run(message: string, ...replies: MockReply[]): Promise<Line>;
  /** Prompt something an extension handles (a command): resolves with the prompt's response. */
  command(message: string): Promise<Line>;
  /** Wait for the next unanswered dialog of `method` and answer it with `answer` (value, confirmed or cancelled). */
  answer(method: string, answer: Line): Promise<Line>;
  /** Add a value of the script's own to the transcript (a file's content, a get_state field). */
  note(value: unknown): void;
  /** Write `text` (a random id) as `name` wherever the transcript has it. */
  alias(text: string, name: string): void;
}

/** One side's transcript. */
export interface Transcript {
  lines: unknown[];
  notes: unknown[];
  /**
   * Per model request: what extensions appended to the system prompt (the text after the
   * working directory, its last part: ours words its own prompt), the messages, the tools.
   */
  requests: { system: string; messages: unknown[]; tools: string[] }[];
}

const DIALOGS = new Set(["select", "confirm", "input", "editor"]);

/** Replace each side's temp paths (and the clock in `timestamp` fields, the mock's response ids), so both sides read the same. */
function unpath(value: unknown, paths: [string, string][]): unknown {
  let text = JSON.stringify(value ?? null);
  for (const [path, name] of paths) text = text.split(JSON.stringify(path).slice(1, -1)).join(name);
  return JSON.parse(
    text.replace(/"timestamp":\d+/g, '"timestamp":0').replace(/"responseId":"[^"]*"/g, '"responseId":"<response>"'),
  );
}

/** A message as a client reads it: role, content and the fields that say what it is. */
export function reduceMessage(m: Line): Line {
  const content =
    typeof m.content === "string"
      ? m.content
      : (m.content ?? []).map((c: Line) =>
          c.type === "toolCall"
            ? { type: c.type, name: c.name, arguments: c.arguments }
            : c.type === "thinking"
              ? { type: c.type }
              : c,
        );
  const out: Line = { role: m.role, content };
  for (const k of ["customType", "display", "details", "toolName", "isError", "stopReason", "errorMessage"])
    if (m[k] !== undefined) out[k] = m[k];
  return out;
}

/** A wire line reduced to what the transcript keeps, or undefined for lines it leaves out. */
export function reduceLine(l: Line): unknown {
  switch (l.type) {
    case "extension_ui_request": {
      const { id: _id, ...rest } = l;
      return rest;
    }
    case "extension_error":
      return { type: l.type, event: l.event, error: l.error, extensionPath: l.extensionPath };
    case "message_end":
      // pi 1.6 keeps its system prompt as a `system` message at the head of the context
      // (the session-context issue's part); the requests' system text compares the prompts.
      return l.message?.role === "system" ? undefined : { type: l.type, message: reduceMessage(l.message) };
    case "tool_execution_end":
      return {
        type: l.type,
        toolName: l.toolName,
        isError: l.isError,
        result: { content: l.result?.content, details: l.result?.details },
      };
    case "agent_start":
    case "agent_end":
      return { type: l.type };
    default:
      return undefined;
  }
}

/** A model request's system prompt, messages (reduced) and tool names. */
function reduceRequest(body: Line): Transcript["requests"][number] {
  const messages = (body.messages ?? []) as Line[];
  const system = messages
    .filter((m) => m.role === "system" || m.role === "developer")
    .map((m) => (typeof m.content === "string" ? m.content : m.content.map((c: Line) => c.text).join("")))
    .join("\n");
  // The prompt's own text ends with the working directory: pi 1.6's `<cwd>` section, or
  // 0.73's (and ours until it words pi 1.6's prompt) "Current working directory:" line.
  const cwd16 = system.lastIndexOf("\n</cwd>");
  const end = system.lastIndexOf("Current working directory: ");
  const after =
    cwd16 >= 0
      ? cwd16 + "\n</cwd>".length
      : end < 0
        ? 0
        : system.indexOf("\n", end) < 0
          ? system.length
          : system.indexOf("\n", end);
  return {
    system: system.slice(after),
    messages: messages
      .filter((m) => m.role !== "system" && m.role !== "developer")
      .map((m) => ({
        role: m.role,
        content: m.content,
        ...(m.tool_calls
          ? { tool_calls: m.tool_calls.map((c: Line) => ({ name: c.function.name, arguments: c.function.arguments })) }
          : {}),
      })),
    tools: ((body.tools ?? []) as Line[]).map((t) => t.function?.name ?? t.name),
  };
}

/**
 * Run `script` on `impl` in a fresh home and project on the mock model `server`, and
 * return its transcript. `drop` leaves out lines both sides send at their own pace (a
 * spinner's frames). Workers are left to the test file's fixture to kill.
 */
export async function transcriptOf(
  impl: Implementation,
  server: MockModelServer,
  dirs: TempDir[],
  start: OracleStart,
  script: (side: OracleSide) => Promise<void>,
  drop: (l: Line) => boolean = () => false,
): Promise<Transcript> {
  const { w, home, project } = startOracle(impl, server, dirs, start);
  const firstRequest = server.requests.length;
  const kept: Line[] = [];
  const notes: unknown[] = [];
  const answered = new Set<string>();
  const paths: [string, string][] = [
    [project, "<project>"],
    [home, "<home>"],
    [basename(project), "<project-name>"],
  ];
  const side: OracleSide = {
    impl,
    server,
    w,
    home,
    project,
    async send(command, keep = false) {
      const r = await w.request(command, 30_000);
      if (keep) kept.push(r);
      return r;
    },
    async run(message, ...replies) {
      server.enqueue(...replies);
      const from = w.received.length;
      expect(await w.request({ type: "prompt", message }, 30_000)).toMatchObject({ success: true });
      return w.event("agent_end", 30_000, from);
    },
    async command(message) {
      return w.request({ type: "prompt", message }, 30_000);
    },
    async answer(method, answer) {
      const ask = await w.waitFor(
        (l) => l.type === "extension_ui_request" && l.method === method && !answered.has(l.id),
        30_000,
      );
      answered.add(ask.id);
      w.writeRaw(`${JSON.stringify({ type: "extension_ui_response", id: ask.id, ...answer })}\n`);
      return ask;
    },
    note(value) {
      notes.push(value);
    },
    alias(text, name) {
      paths.push([text, name]);
    },
  };
  await script(side);
  const lines = w.received
    .filter((l) => !drop(l))
    .map((l) =>
      l.type === "response"
        ? kept.includes(l)
          ? { type: "response", command: l.command, success: l.success, data: l.data, error: l.error }
          : undefined
        : reduceLine(l),
    )
    .filter((l) => l !== undefined);
  for (const l of w.received)
    if (l.type === "extension_ui_request" && DIALOGS.has(l.method) && !answered.has(l.id))
      lines.push({ unanswered: l.method, title: l.title });
  return {
    lines: unpath(lines, paths) as unknown[],
    notes: unpath(notes, paths) as unknown[],
    requests: unpath(
      server.requests.slice(firstRequest).map((r) => reduceRequest(r.body as Line)),
      paths,
    ) as Transcript["requests"],
  };
}

/**
 * `transcriptOf` on ours and on upstream at the same time, each on its own mock model
 * server (`servers`, as the oracle fixture gives them), so a test waits for the slower side
 * only. The script must use its side's helpers, never one server for both. Both sides end
 * before this returns or throws (the first error, ours before upstream).
 */
export async function transcriptsOf(
  servers: Readonly<Record<Implementation, MockModelServer>>,
  dirs: TempDir[],
  start: OracleStart,
  script: (side: OracleSide) => Promise<void>,
  drop?: (l: Line) => boolean,
): Promise<Record<Implementation, Transcript>> {
  const [ours, upstream] = await Promise.allSettled(
    (["ours", "upstream"] as const).map((impl) => transcriptOf(impl, servers[impl], dirs, start, script, drop)),
  );
  if (ours!.status === "rejected") throw ours!.reason;
  if (upstream!.status === "rejected") throw upstream!.reason;
  return { ours: ours!.value, upstream: upstream!.value };
}
