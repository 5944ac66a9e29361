/**
 * The Responses API `input` and `tools` for one provider request, as pi-ai 1.6.0's
 * `convertResponsesMessages` makes them: the system prompt as the first `developer` (or
 * `system`) item, and for a model whose `compat` takes them, the session's later system
 * messages in place (`supportsMidConvoSystemMessages`), every tool declared in
 * `additional_tools` items with removals announced as text (with `supportsAdditionalTools`),
 * or added tools loaded by a client-side tool search (`supportsToolSearch`), and the
 * thinking level as `configuration_update` items (`supportsMidConvoEffort`), so a change
 * keeps the start of the request the provider cached. Pure.
 */
import type OpenAI from "openai";
import type {
  AssistantMessage,
  ImageContent,
  Model,
  SystemMessage,
  TextContent,
  ToolResultMessage,
} from "../../shared/schema/messages.js";
import type { ProviderRequest, ToolSpec } from "../types.js";
import type { ModelCompat } from "./compat-schema.js";
import {
  createInitialSystemMessage,
  getSystemMessageText,
  renderSystemMessageUpdate,
  resolveTranscriptTools,
} from "./transcript.js";

/** An input item: the SDK's, or one it does not know yet (`additional_tools`, `configuration_update`). */
export type ResponsesItem = OpenAI.Responses.ResponseInputItem | Record<string, unknown>;

/** The `compat` settings the Responses request reads, with pi-ai 1.6.0's defaults. */
export function responsesCompat(model: Model) {
  const c = (model.compat ?? {}) as ModelCompat;
  return {
    supportsDeveloperRole: c.supportsDeveloperRole ?? true,
    supportsMidConvoSystemMessages: c.supportsMidConvoSystemMessages ?? false,
    supportsStrictMode: c.supportsStrictMode ?? false,
    supportsAdditionalTools: c.supportsAdditionalTools ?? false,
    supportsToolSearch: c.supportsToolSearch ?? false,
    supportsMidConvoEffort: c.supportsMidConvoEffort ?? false,
    supportsMaxOutputTokens: c.supportsMaxOutputTokens ?? true,
    supportsLongCacheRetention: c.supportsLongCacheRetention ?? true,
    supportsExplicitPromptCacheMode: c.supportsExplicitPromptCacheMode ?? false,
    promptCacheKeyMode: c.promptCacheKeyMode ?? "auto",
  };
}

/**
 * pi-ai's `getResponsesToolSupport`: `additional_tools` items accumulate and cannot remove a
 * tool or replace a top-level one, so with them every tool is declared there and removals
 * are said in text ("changes"); a client tool search can only add ("additions").
 */
function toolSupport(compat: ReturnType<typeof responsesCompat>): "none" | "additions" | "changes" {
  if (compat.supportsMidConvoSystemMessages && compat.supportsAdditionalTools) return "changes";
  return compat.supportsToolSearch ? "additions" : "none";
}

/** pi-ai's notice before every `additional_tools` item after the first (smaller models otherwise read it as the whole set). */
function incrementalToolsNotice(unavailable: Set<string>): string {
  const notice =
    "This is an incremental tools update. Previously declared tools remain available unless explicitly marked unavailable. A tool declared again here is available again, and its latest definition replaces the earlier one.";
  return unavailable.size > 0 ? `${notice}\nStill unavailable: ${[...unavailable].join(", ")}.` : notice;
}

function toolRemovalNotice(names: string[]): string {
  return `The following tools are no longer available. Do not call them:\n${names.map((n) => `- ${n}`).join("\n")}`;
}

/** pi-ai's `shortHash`: a fast deterministic hash for ids made from content. */
function shortHash(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h2 >>> 0).toString(36) + (h1 >>> 0).toString(36);
}

/** Tools as function tools; `strict` only where the server takes the field (none of ours asks for constrained sampling). */
export function toResponsesTools(tools: readonly ToolSpec[], strictField: boolean, deferred = false): ResponsesItem[] {
  return tools.map((tool) => ({
    type: "function",
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters as Record<string, unknown>,
    ...(deferred ? { defer_loading: true } : {}),
    ...(strictField ? { strict: false } : {}),
  }));
}

/**
 * The request's `input`, the tools it declares at the top (`requestTools`), and the effort
 * the reply is made with when `configuration_update` items carry it (`effort`, which the
 * reply records as its `providerThinkingLevel`).
 */
export function buildResponsesInput(
  request: ProviderRequest,
  effort: string | undefined,
): { input: ResponsesItem[]; requestTools: ToolSpec[] } {
  const { model } = request;
  const compat = responsesCompat(model);
  const support = toolSupport(compat);
  // The transcript: the session's system messages where they stand, or one leading message
  // with the current prompt and tools when the model does not take them later.
  const placed =
    compat.supportsMidConvoSystemMessages && request.systemMessages?.[0]?.at === 0
      ? request.systemMessages
      : (() => {
          const head = createInitialSystemMessage(request.systemPrompt, request.tools);
          return head ? [{ at: 0, message: head }] : [];
        })();
  const plan = resolveTranscriptTools(
    placed.map((p) => p.message as unknown as { role: string }),
    support,
  );
  const instructionRole = model.reasoning && compat.supportsDeveloperRole ? "developer" : "system";
  const out: ResponsesItem[] = [];
  let declaredAdditional = false;
  /** Tools announced as removed and not declared again since. */
  const unavailable = new Set<string>();
  let msgIndex = 0;
  let systemIndex = 0;

  const toolAdditions = (message: SystemMessage, seed: string) => {
    const tools = message.toolsAdded ?? [];
    for (const t of tools) unavailable.delete(t.name);
    if (tools.length === 0) return;
    if (support === "changes") {
      if (declaredAdditional) out.push({ role: instructionRole, content: incrementalToolsNotice(unavailable) });
      declaredAdditional = true;
      out.push({
        type: "additional_tools",
        role: "developer",
        tools: toResponsesTools(tools, compat.supportsStrictMode),
      });
      return;
    }
    if (support !== "additions") return;
    const names = tools.map((t) => t.name);
    const callId = `pi_tool_load_${shortHash(`${seed}:${names.join(",")}`)}`;
    const call = { call_id: callId, execution: "client", status: "completed" };
    out.push({ type: "tool_search_call", ...call, arguments: { query: names.join(" "), limit: names.length } });
    out.push({ type: "tool_search_output", ...call, tools: toResponsesTools(tools, compat.supportsStrictMode, true) });
  };

  const system = (message: SystemMessage, leading: boolean) => {
    const anchors = systemIndex++ >= plan.foldedSystemMessages;
    if (anchors) toolAdditions(message, `system:${msgIndex}`);
    const parts = [leading ? getSystemMessageText(message) : renderSystemMessageUpdate(message)];
    if (anchors) {
      // A redefinition is a removal and an addition of one name: only true removals are announced.
      const added = new Set((message.toolsAdded ?? []).map((t) => t.name));
      const removed = (message.toolsRemoved ?? []).map((t) => t.name).filter((n) => !added.has(n));
      if (removed.length > 0) parts.push(toolRemovalNotice(removed));
      for (const n of removed) unavailable.add(n);
    }
    const text = parts.filter((p) => p.length > 0).join("\n\n");
    if (text.length > 0) out.push({ role: instructionRole, content: text });
  };

  let next = 0;
  for (let i = 0; i <= request.messages.length; i++) {
    for (; next < placed.length && placed[next]!.at <= i; next++) {
      const leading = next === 0 && placed[next]!.at === 0;
      system(placed[next]!.message, leading);
      if (!leading) msgIndex++;
    }
    const msg = request.messages[i];
    if (!msg) break;
    if (msg.role === "user") {
      const parts = typeof msg.content === "string" ? [{ type: "text" as const, text: msg.content }] : msg.content;
      if (parts.length === 0) continue;
      out.push({ role: "user", content: parts.map(toInputPart) });
    } else if (msg.role === "assistant") {
      const items = assistantItems(msg, model, msgIndex);
      if (items.length === 0) continue;
      if (effort !== undefined && sameModel(msg, model) && msg.providerThinkingLevel !== undefined)
        out.push(configurationUpdate(msg.providerThinkingLevel));
      out.push(...items);
    } else {
      out.push(toolResultItem(msg, model));
    }
    msgIndex++;
  }
  if (effort !== undefined) out.push(configurationUpdate(effort));
  return { input: out, requestTools: plan.requestTools };
}

const configurationUpdate = (effort: string): ResponsesItem => ({
  type: "configuration_update",
  reasoning: { effort },
});

const sameModel = (msg: AssistantMessage, model: Model) =>
  msg.provider === model.provider && msg.api === model.api && msg.model === model.id;

/**
 * A reply's items: its reasoning items as they came (this API's only), its text as
 * messages with their ids (pi's `msg_pi_N` where none was kept), its calls with their item
 * ids where they are this model's (`fc_...`): the API pairs reasoning with the items after it.
 */
function assistantItems(msg: AssistantMessage, model: Model, msgIndex: number): ResponsesItem[] {
  const out: ResponsesItem[] = [];
  const ownApi = msg.api === "openai-responses";
  const differentModel = msg.provider === model.provider && msg.api === model.api && msg.model !== model.id;
  let textIndex = 0;
  for (const block of msg.content) {
    if (block.type === "thinking") {
      const item = ownApi && block.thinkingSignature ? parseItem(block.thinkingSignature) : null;
      if (item) out.push(item);
    } else if (block.type === "text") {
      const fallback = textIndex === 0 ? `msg_pi_${msgIndex}` : `msg_pi_${msgIndex}_${textIndex}`;
      textIndex++;
      let id = (ownApi ? messageId(block.textSignature) : null) ?? fallback;
      if (id.length > 64) id = `msg_${shortHash(id)}`;
      out.push({
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: block.text, annotations: [] }],
        status: "completed",
        id,
      });
    } else {
      const [callId, itemId] = block.id.split("|");
      out.push({
        type: "function_call",
        ...(itemId?.startsWith("fc_") && !differentModel ? { id: itemId } : {}),
        call_id: callId,
        name: block.name,
        arguments: JSON.stringify(block.arguments),
      });
    }
  }
  return out;
}

/** A tool result: its text, or with images (where the model takes them) text and images as one output. */
function toolResultItem(msg: ToolResultMessage, model: Model): ResponsesItem {
  const text = msg.content
    .filter((c): c is TextContent => c.type === "text")
    .map((c) => c.text)
    .join("\n");
  const images = msg.content.filter((c): c is ImageContent => c.type === "image");
  const hasText = text.trim().length > 0;
  const callId = msg.toolCallId.split("|")[0];
  if (images.length === 0 || !model.input.includes("image")) {
    const output = hasText ? text : images.length > 0 ? "(see attached image)" : "(no tool output)";
    return { type: "function_call_output", call_id: callId, output };
  }
  const output = [...(hasText ? [{ type: "input_text", text }] : []), ...images.map(toInputPart)];
  return { type: "function_call_output", call_id: callId, output };
}

function toInputPart(c: TextContent | ImageContent): OpenAI.Responses.ResponseInputContent {
  if (c.type === "text") return { type: "input_text", text: c.text };
  return { type: "input_image", detail: "auto", image_url: `data:${c.mimeType};base64,${c.data}` };
}

function parseItem(signature: string): OpenAI.Responses.ResponseReasoningItem | null {
  try {
    const item = JSON.parse(signature) as { type?: unknown };
    return item && item.type === "reasoning" ? (item as OpenAI.Responses.ResponseReasoningItem) : null;
  } catch {
    return null;
  }
}

/** The message id in a text block's signature (pi's `{"v":1,"id":"msg_..."}`, or an older bare id), or null. */
function messageId(signature: string | undefined): string | null {
  if (!signature) return null;
  if (!signature.startsWith("{")) return signature;
  try {
    const parsed = JSON.parse(signature) as { id?: unknown };
    return typeof parsed.id === "string" ? parsed.id : null;
  } catch {
    return null;
  }
}
