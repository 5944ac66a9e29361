/**
 * One codemode call: parse the source, give the script the session's callable tools and
 * the discovery globals, run it in the sandbox, and turn what it printed and returned
 * into pi 1.6.0's result. Loaded on the first script only (extension.ts imports it
 * lazily), so a worker that never runs one never pays for it.
 */
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionToolResult } from "../extensions/types.js";
import { rankTools, searchDocument } from "../tool-search/ranker.js";
import { formatSize } from "../tools/truncate.js";
import type { AgentTool, NestedToolOutcome } from "../types.js";
import {
  type Block,
  budgetOutput,
  DEFAULT_MAX_OUTPUT_TOKENS,
  failureText,
  header,
  joinText,
  layoutOutput,
} from "./output.js";
import { runSandbox } from "./sandbox.js";
import { parseScriptSource, scriptIdentifier } from "./source.js";

/** The custom entry one successful script's `store()` writes go to (pi 1.6.0's). */
export const STORE_ENTRY_TYPE = "codemode-store";
const DEFAULT_SEARCH_LIMIT = 8;
const ERROR_PREVIEW_CHARS = 500;
const IMAGE_EXTENSIONS: Record<string, string> = {
  "image/png": ".png",
  "image/jpeg": ".jpg",
  "image/gif": ".gif",
  "image/webp": ".webp",
};

/** What a script's call needs of the running tool's `ctx`. */
export interface CodemodeContext {
  tools?: AgentTool[];
  executeTool?: (name: string, args: unknown, options?: { signal?: AbortSignal }) => Promise<NestedToolOutcome>;
  sessionManager?: { getBranch(): unknown[] };
}

/** One nested call, for the result's details. */
interface CallRecord {
  id: string;
  name: string;
  status: "running" | "ok" | "error" | "cancelled";
  error?: string;
}

function textOf(result: { content?: { type: string; text?: string }[] }): string {
  return (result.content ?? [])
    .filter((b) => b.type === "text")
    .map((b) => b.text ?? "")
    .join("\n");
}

/** The values `load()` sees: the branch's `codemode-store` entries applied from the root. */
export function readStore(branch: unknown[]): Record<string, unknown> {
  const store = new Map<string, unknown>();
  for (const entry of branch as { type?: string; customType?: string; data?: unknown }[]) {
    if (entry.type !== "custom" || entry.customType !== STORE_ENTRY_TYPE) continue;
    const data = entry.data as { set?: unknown; delete?: unknown };
    if (typeof data?.set !== "object" || data.set === null || !Array.isArray(data.delete)) continue;
    for (const key of data.delete) if (typeof key === "string") store.delete(key);
    for (const [key, value] of Object.entries(data.set)) store.set(key, value);
  }
  return Object.fromEntries(store);
}

/** What a script gets of a nested call: the structured value of a tool that declares one, else its text. */
function scriptValue(tool: AgentTool, outcome: NestedToolOutcome): unknown {
  if (tool.outputSchema !== undefined && outcome.result.structuredContent !== undefined)
    return outcome.result.structuredContent;
  const text = textOf(outcome.result);
  if (outcome.isError) throw new Error(text || `Tool "${tool.name}" failed`);
  return text;
}

/** What a script sees of a tool in `ALL_TOOLS`, `searchTools()` and `describeTool()`. */
function declaration(tool: AgentTool): string {
  const id = scriptIdentifier(tool.name);
  return `${tool.description.trim()}\n\ntools.${id}(args: ${JSON.stringify(tool.parameters)})`;
}

/** `searchTools()`, `describeTool()`, `describeNamespace()` over the tools a script may call. */
function discoveryGlobals(tools: AgentTool[]): Record<string, (args: unknown[]) => unknown> {
  const entry = (t: AgentTool) => ({ name: scriptIdentifier(t.name), description: declaration(t) });
  const inNamespace = (t: AgentTool, name: string) =>
    t.namespace !== undefined &&
    [t.namespace.name, ...(t.namespace.aliases ?? [])].some(
      (n) => n === name || scriptIdentifier(n) === scriptIdentifier(name),
    );
  return {
    searchTools: ([query, options]) => {
      if (typeof query !== "string") throw new Error("searchTools() expects a query string");
      const { limit = DEFAULT_SEARCH_LIMIT, namespace } = (options ?? {}) as { limit?: unknown; namespace?: unknown };
      if (typeof limit !== "number" || !Number.isInteger(limit) || limit <= 0)
        throw new Error("searchTools() limit must be a positive integer");
      if (namespace !== undefined && namespace !== null && typeof namespace !== "string")
        throw new Error("searchTools() namespace must be a string");
      const pool = namespace ? tools.filter((t) => inNamespace(t, namespace)) : tools;
      const ranked = rankTools(
        query,
        pool.map((t) => searchDocument(t, t.namespace)),
        limit,
      );
      return ranked.flatMap((m) => {
        const tool = pool.find((t) => t.name === m.name);
        return tool ? [entry(tool)] : [];
      });
    },
    describeTool: ([name]) => {
      if (typeof name !== "string") throw new Error("describeTool() expects a tool name");
      const tool = tools.find((t) => t.name === name || scriptIdentifier(t.name) === name);
      return tool ? declaration(tool) : undefined;
    },
    describeNamespace: ([name]) => {
      if (typeof name !== "string") throw new Error("describeNamespace() expects a namespace name");
      const members = tools.filter((t) => inNamespace(t, name));
      const ns = members[0]?.namespace;
      if (!ns) return undefined;
      return {
        name: ns.name,
        ...(ns.description ? { description: ns.description } : {}),
        ...(ns.instructions ? { instructions: ns.instructions } : {}),
        tools: members.map((t) => scriptIdentifier(t.name)),
      };
    },
  };
}

async function writeOutputFile(extension: string, data: string | Buffer): Promise<string> {
  const path = join(tmpdir(), `pi-codemode-${randomBytes(8).toString("hex")}${extension}`);
  await writeFile(path, data, { mode: 0o600, flag: "wx" });
  return path;
}

/** Each image preceded by the file it was saved to, so a later turn can reach its bytes. */
async function saveImages(items: Block[]): Promise<Block[]> {
  const saved = new Map<string, Promise<string>>();
  const label = async (data: string, mimeType: string) => {
    const bytes = Buffer.from(data, "base64");
    const kind = `${mimeType}, ${formatSize(bytes.length)}`;
    try {
      return `[Image saved to ${await writeOutputFile(IMAGE_EXTENSIONS[mimeType] ?? ".bin", bytes)} (${kind})]`;
    } catch (err) {
      return `[Image (${kind}) could not be saved: ${(err as Error).message}]`;
    }
  };
  const out = await Promise.all(
    items.map(async (item): Promise<Block[]> => {
      if (item.type !== "image") return [item];
      let pending = saved.get(item.data);
      if (!pending) {
        pending = label(item.data, item.mimeType);
        saved.set(item.data, pending);
      }
      return [{ type: "text", text: await pending }, item];
    }),
  );
  return out.flat();
}

/** Run one script; `appendEntry` keeps a successful script's `store()` writes in the session. */
export async function executeCodemode(
  toolCallId: string,
  input: { code: string },
  signal: AbortSignal | undefined,
  onUpdate: ((partial: ExtensionToolResult) => void) | undefined,
  ctx: CodemodeContext,
  appendEntry: (customType: string, data: unknown) => void,
): Promise<ExtensionToolResult> {
  const started = performance.now();
  const { code, options } = parseScriptSource(input.code);
  const calls: CallRecord[] = [];
  const snapshot = () => ({ calls: calls.map((c) => ({ ...c })) });
  const publish = () => onUpdate?.({ content: [], details: snapshot() });
  publish();
  const callable = ctx.tools ?? [];
  const result = await runSandbox({
    code,
    tools: callable.map((t) => ({ name: t.name, jsName: scriptIdentifier(t.name), description: declaration(t) })),
    globals: discoveryGlobals(callable),
    store: ctx.sessionManager ? readStore(ctx.sessionManager.getBranch()) : {},
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(signal ? { signal } : {}),
    callTool: async (name, args, callSignal) => {
      const tool = callable.find((t) => t.name === name);
      if (!tool || !ctx.executeTool) throw new Error(`Tool "${name}" is not callable from this script`);
      const record: CallRecord = { id: `${toolCallId}/?`, name, status: "running" };
      calls.push(record);
      publish();
      const outcome = await ctx.executeTool(name, args ?? {}, { signal: callSignal });
      record.id = outcome.toolCall.id;
      if (outcome.isError) {
        record.status = callSignal.aborted ? "cancelled" : "error";
        record.error = (textOf(outcome.result) || `Tool "${name}" failed`).slice(0, ERROR_PREVIEW_CHARS);
      } else record.status = "ok";
      publish();
      return scriptValue(tool, outcome);
    },
  });
  for (const call of calls) if (call.status === "running") call.status = "cancelled";
  const printed = [...result.output];
  if (result.ok) {
    const set: Record<string, unknown> = {};
    const deleted: string[] = [];
    for (const [key, json] of result.writes) {
      if (json === undefined) deleted.push(key);
      else set[key] = JSON.parse(json);
    }
    if (result.writes.length > 0) appendEntry(STORE_ENTRY_TYPE, { set, delete: deleted });
    // A returned value is added like text().
    if (result.value !== undefined)
      printed.push({
        type: "text",
        text: typeof result.value === "string" ? result.value : JSON.stringify(result.value),
      });
  }
  const items = layoutOutput(printed);
  if (!result.ok) items.push({ type: "text", text: `Script error:\n${failureText(result.error, calls)}` });
  const budgeted = budgetOutput(joinText(items), options.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS);
  let blocks = budgeted.items;
  const details: { calls: CallRecord[]; fullOutputPath?: string } = snapshot();
  if (budgeted.spill !== undefined) {
    const first = blocks[0] as { type: "text"; text: string };
    try {
      details.fullOutputPath = await writeOutputFile(".txt", budgeted.spill);
      first.text += `\n\n[Full output: ${details.fullOutputPath} (read with offset/limit)]`;
    } catch (err) {
      first.text += `\n\n[Could not save the full output: ${(err as Error).message}]`;
    }
  }
  blocks = joinText(await saveImages(blocks));
  return {
    content: [{ type: "text", text: header(result.ok, (performance.now() - started) / 1000) }, ...blocks],
    details,
    ...(result.ok ? {} : { isError: true }),
  };
}
