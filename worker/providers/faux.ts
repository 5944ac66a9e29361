/**
 * `faux`: a deterministic in-process model. With a script it replays scripted replies
 * (tests); without one it follows a small rule set that drives the real tools, so a
 * newcomer sees a whole agent run with no key and no network.
 */
import { readFileSync } from "node:fs";
import type { Static } from "typebox";
import * as Type from "typebox/type";
import { checker } from "../../shared/validate.js";
import type { LlmMessage, ToolResultMessage } from "../../shared/schema/messages.js";
import type { Provider, ProviderEvent, ProviderRequest } from "../types.js";
import { MessageBuilder } from "./message-builder.js";

/** One scripted reply. */
export const FauxReply = Type.Object({
  text: Type.Optional(Type.String()),
  thinking: Type.Optional(Type.String()),
  toolCalls: Type.Optional(
    Type.Array(Type.Object({ name: Type.String(), arguments: Type.Record(Type.String(), Type.Unknown()) })),
  ),
  /** Delay before the reply starts. */
  delayMs: Type.Optional(Type.Number({ minimum: 0 })),
  /** Delay between streamed chunks (words). */
  chunkDelayMs: Type.Optional(Type.Number({ minimum: 0 })),
  /** Fail this request instead. */
  error: Type.Optional(
    Type.Object({
      message: Type.String(),
      retryable: Type.Optional(Type.Boolean()),
      contextOverflow: Type.Optional(Type.Boolean()),
    }),
  ),
});
export type FauxReply = Static<typeof FauxReply>;

/** Read a script: a JSON array of replies, or one reply per line (JSONL); errors name the file, line or reply, and field. */
export function loadFauxScript(path: string): FauxReply[] {
  const text = readFileSync(path, "utf8").trim();
  if (text === "") return [];
  const parse = (json: string, where: string): unknown => {
    try {
      return JSON.parse(json);
    } catch (err) {
      throw new Error(`faux script ${path}${where}: ${(err as Error).message}`);
    }
  };
  const replies: { value: unknown; where: string }[] = [];
  if (text.startsWith("[")) {
    const parsed = parse(text, "");
    if (!Array.isArray(parsed)) throw new Error(`faux script ${path}: expected a JSON array or JSONL of replies`);
    parsed.forEach((value, i) => replies.push({ value, where: `, reply ${i + 1}` }));
  } else {
    text.split("\n").forEach((line, i) => {
      if (line.trim() !== "") replies.push({ value: parse(line, `, line ${i + 1}`), where: `, line ${i + 1}` });
    });
  }
  const check = checker(FauxReply);
  return replies.map(({ value, where }) => {
    const checked = check(value);
    if (!checked.ok) throw new Error(`faux script ${path}${where}: ${checked.errors.join("; ")}`);
    return checked.value;
  });
}

/** Options of the faux provider. */
export interface FauxOptions {
  script?: FauxReply[];
  /** Delay between streamed words when a reply sets none (env `PI_ORCH_FAUX_CHUNK_MS`). */
  chunkDelayMs?: number;
}

/** Create a faux provider; a script, when given, is consumed one reply per request. */
export function createFauxProvider(options: FauxOptions = {}): Provider {
  const script = options.script ? [...options.script] : null;
  let callCounter = 0;
  return {
    async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
      const reply: FauxReply = script
        ? (script.shift() ?? { error: { message: "faux script exhausted: no scripted reply left for this request" } })
        : ruleReply(request);
      const builder = new MessageBuilder("faux", request.model.provider, request.model.id);
      const chunkDelay = reply.chunkDelayMs ?? options.chunkDelayMs ?? 0;
      try {
        if (reply.delayMs) await pause(reply.delayMs, request.signal);
        if (reply.error) {
          yield* builder.fail(reply.error.message, {
            retryable: reply.error.retryable,
            contextOverflow: reply.error.contextOverflow,
          });
          return;
        }
        yield builder.start();
        if (reply.thinking) {
          for (const chunk of words(reply.thinking)) {
            await pause(chunkDelay, request.signal);
            yield* builder.thinking(chunk);
          }
        }
        if (reply.text) {
          for (const chunk of words(reply.text)) {
            await pause(chunkDelay, request.signal);
            yield* builder.text(chunk);
          }
        }
        for (const call of reply.toolCalls ?? []) {
          yield* builder.toolCallStart(`faux_call_${++callCounter}`, call.name);
          const json = JSON.stringify(call.arguments);
          const mid = Math.ceil(json.length / 2);
          for (const piece of [json.slice(0, mid), json.slice(mid)]) {
            await pause(chunkDelay, request.signal);
            yield* builder.toolCallDelta(piece);
          }
        }
        builder.setUsage(
          { input: estimateTokens(request), output: Math.ceil(JSON.stringify(builder.message.content).length / 4) },
          request.model.cost,
        );
        yield* builder.done();
      } catch {
        // pi 1.6's faux provider's words.
        yield* builder.fail("Request was aborted", { aborted: true });
      }
    },
  };
}

/** Split text into streamable chunks that keep their spaces. */
function words(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? [text];
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(new Error("aborted"));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Error("aborted"));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function estimateTokens(request: ProviderRequest): number {
  return Math.ceil((request.systemPrompt.length + JSON.stringify(request.messages).length) / 4);
}

function textOf(message: LlmMessage): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .map((c) => (c.type === "text" ? c.text : ""))
    .join("")
    .trim();
}

/**
 * The rule set. It reads the last message: after a tool result it answers from that
 * result; after a user request it picks a tool by a few phrasings.
 */
export function ruleReply(request: ProviderRequest): FauxReply {
  const last = request.messages[request.messages.length - 1];
  const active = new Set(request.tools.map((t) => t.name));
  if (!last) return { text: HELP };
  if (last.role === "toolResult") return answerFromResult(request.messages, last);
  if (last.role !== "user") return { text: "Done." };
  const text = textOf(last);

  const run = /\brun\s+`([^`]+)`/i.exec(text) ?? /\brun(?:\s+the\s+command)?\s*:\s*(.+)$/im.exec(text);
  if (run && active.has("bash")) return call("bash", { command: run[1].trim() });

  if (/\b(list|show)\b.*\bfiles?\b|\bls\b/i.test(text)) {
    const dir = /\bin\s+(?:the\s+)?(?:folder\s+|directory\s+)?([\w./-]+)\s*$/i.exec(text)?.[1];
    const path = dir && !/^(here|this|it)$/i.test(dir) ? dir : ".";
    if (active.has("ls")) return call("ls", { path });
    if (active.has("bash")) return call("bash", { command: path === "." ? "ls -A" : `ls -A ${shellQuote(path)}` });
  }

  const read = /\b(?:read|show|cat|open)\s+(?:the\s+file\s+)?`?([\w./-]+\.\w+|[\w./-]*\/[\w./-]+)`?/i.exec(text);
  if (read && active.has("read")) return call("read", { path: read[1] });

  const replace = /\breplace\s+"([^"]+)"\s+with\s+"([^"]*)"\s+in\s+`?([\w./-]+)`?/i.exec(text);
  if (replace && active.has("edit")) {
    return call("edit", { path: replace[3], edits: [{ oldText: replace[1], newText: replace[2] }] });
  }

  const write = /\b(?:write|create)\s+(?:a\s+file\s+)?`?([\w./-]+\.\w+)`?\s+(?:with|containing)\s+"([^"]*)"/i.exec(
    text,
  );
  if (write && active.has("write"))
    return call("write", { path: write[1], content: `${write[2].replace(/\\n/g, "\n")}\n` });

  const grep = /\b(?:search|grep)\s+(?:for\s+)?"([^"]+)"/i.exec(text);
  if (grep && active.has("grep")) return call("grep", { pattern: grep[1], literal: true });
  if (grep && active.has("bash")) return call("bash", { command: `grep -rn -- ${shellQuote(grep[1])} .` });

  const find = /\bfind\s+(?:files\s+)?(?:named\s+|matching\s+)?`?([\w.*?/-]+)`?/i.exec(text);
  if (find && active.has("find")) return call("find", { pattern: find[1] });

  return { text: HELP };
}

const HELP =
  "I am the faux model: a scripted stand-in that needs no key and no network. " +
  'I understand "list the files", "read FILE", "run `COMMAND`", ' +
  '"replace "OLD" with "NEW" in FILE", "write FILE with "TEXT"", "search for "TEXT"" and "find PATTERN", ' +
  "and I use the real tools to do them. Pick a real model with --provider anthropic or --provider openai.";

function call(name: string, args: Record<string, unknown>): FauxReply {
  return { toolCalls: [{ name, arguments: args }] };
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function answerFromResult(messages: LlmMessage[], result: ToolResultMessage): FauxReply {
  const output = result.content
    .map((c) => (c.type === "text" ? c.text : `[${c.mimeType} image]`))
    .join("\n")
    .trimEnd();
  if (result.isError) return { text: `The ${result.toolName} tool failed:\n${output}` };
  const args = findCallArgs(messages, result.toolCallId);
  switch (result.toolName) {
    case "ls":
    case "find": {
      const lines = output.split("\n").filter((l) => l && !l.startsWith("["));
      return { text: `I found ${lines.length} entr${lines.length === 1 ? "y" : "ies"}:\n${output}` };
    }
    case "bash":
      if (/^ls\b/.test(String(args?.command ?? ""))) {
        const lines = output.split("\n").filter((l) => l.trim() !== "");
        return { text: `I found ${lines.length} entr${lines.length === 1 ? "y" : "ies"}:\n${output}` };
      }
      return { text: `I ran \`${String(args?.command ?? "")}\`. Its output:\n${output || "(no output)"}` };
    case "read": {
      // A cut read ends in the tool's notice: count the file's lines from it, not the notice's.
      const cut = /\n\n\[Showing lines (\d+)-(\d+) of (\d+)[^\]]*\]$/.exec(output);
      const lines = (cut ? output.slice(0, cut.index) : output).split("\n");
      const head = lines.slice(0, 20).join("\n");
      const path = String(args?.path ?? "The file");
      const what = cut
        ? `${path} has ${cut[3]} lines; lines ${cut[1]}-${cut[2]} came back`
        : `${path} has ${lines.length} line${lines.length === 1 ? "" : "s"}`;
      return { text: `${what}:\n${head}${lines.length > 20 ? "\n…" : ""}` };
    }
    case "edit":
      return { text: `I edited ${String(args?.path ?? "the file")}:\n${output}` };
    case "write":
      return { text: output };
    case "grep":
      return { text: `Matches:\n${output}` };
    default:
      return { text: `The ${result.toolName} tool returned:\n${output}` };
  }
}

function findCallArgs(messages: LlmMessage[], id: string): Record<string, unknown> | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== "assistant") continue;
    for (const c of m.content) if (c.type === "toolCall" && c.id === id) return c.arguments;
  }
  return undefined;
}
