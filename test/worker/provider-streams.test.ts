/**
 * Streams recorded from the real APIs and servers (test/fixtures/provider-streams/,
 * sources in SOURCES.md), replayed byte for byte by the mock model server and read
 * through the official SDKs. Each case checks the assembled message, the sub-events,
 * the stop reason, the usage, and the body of the next request (tool results, thinking
 * with its signature or reasoning field passed back unchanged).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Type } from "typebox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type {
  AssistantMessage,
  LlmMessage,
  Model,
  StopReason,
  ToolResultMessage,
  Usage,
} from "../../shared/schema/messages.js";
import { Agent, userMessage } from "../../worker/agent/agent.js";
import { createAnthropicProvider } from "../../worker/providers/anthropic.js";
import { ProviderSet } from "../../worker/providers/index.js";
import { createOpenAIProvider } from "../../worker/providers/openai.js";
import { createOpenAIResponsesProvider } from "../../worker/providers/openai-responses.js";
import type { AgentTool, ProviderEvent } from "../../worker/types.js";
import { mockModel, sseFromChunks, startMockModelServer, type MockModelServer } from "../support/mock-model-server.js";

const FIXTURES = join(import.meta.dirname, "../fixtures/provider-streams");
type Api = "anthropic-messages" | "openai-completions" | "openai-responses";

/** A recording as the server sent it: `.sse` files are raw bodies, `.chunks.txt` one JSON event per line. */
function recording(file: string, api: Api): string {
  const raw = readFileSync(join(FIXTURES, file), "utf8");
  const framing =
    api === "anthropic-messages" ? "anthropic" : api === "openai-responses" ? "openai-responses" : "openai";
  return file.endsWith(".sse") ? raw : sseFromChunks(framing, raw);
}

interface Case {
  name: string;
  api: Api;
  /** One recording per request (a paused Anthropic turn takes two). */
  files: string[];
  /** Where the model lives (compat defaults follow the provider and base URL). */
  model?: Partial<Model>;
  thinkingLevel?: "off" | "medium";
  /** Sub-events, with runs of one delta type folded into `x_delta…`. */
  events: string[];
  stopReason: StopReason;
  /** The assembled content (exact). */
  content: AssistantMessage["content"];
  usage: Pick<Usage, "input" | "output" | "cacheRead">;
  errorMessage?: string;
  retryable?: boolean;
  contextOverflow?: boolean;
  /** Checks on the next request's body, after the message and a result per tool call went back. */
  next?: (body: any) => void;
}

const T = (text: string) => ({ type: "text" as const, text });

const CASES: Case[] = [
  {
    name: "Anthropic text with pings",
    api: "anthropic-messages",
    files: ["vercel-ai.anthropic-text.chunks.txt"],
    events: ["start", "text_start", "text_delta…", "text_end", "done"],
    stopReason: "stop",
    content: [
      T("Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?"),
    ],
    usage: { input: 12, output: 30, cacheRead: 0 },
    next: (body) => {
      expect(body.messages[1]).toEqual({
        role: "assistant",
        content: [
          {
            type: "text",
            text: "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
          },
        ],
      });
    },
  },
  {
    name: "Anthropic thinking with a signature",
    api: "anthropic-messages",
    files: ["vercel-ai.anthropic-clear-thinking.1.chunks.txt"],
    thinkingLevel: "medium",
    events: [
      "start",
      "thinking_start",
      "thinking_delta…",
      "thinking_end",
      "text_start",
      "text_delta…",
      "text_end",
      "done",
    ],
    stopReason: "stop",
    content: [
      {
        type: "thinking",
        thinking: "The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185",
        thinkingSignature:
          "EvQBCkYICxgCKkAxhD4NUKFzudtZ6NzbZdEiBACIScTzqjPViM596iWLZIk4EFKYYBj3B6Ptl3b0dcQv/VeJBNbejNWIWRBn+KPNEgz6HWtKx7p+QRgKsEoaDGjsiqfht7gTRFYHiyIwD1VSmNqHxv3wy8KEMP+LYb/TC4UH3H97tuoaADARFFcA0phdfxnzKQxFnc9lwY+dKlzUsaKSUAFeu1bDL5ikZJ1vL0Fkz6JjoFke0L/wOJRIUDUlDUOFJ1tZ3ea7g6LGE/5hwuvWgLwewdcm64d+43l7F57XrOmqNd6flI2K/oPr/4yzNgvi/EhT6Ca17BgB",
      },
      T("925 ÷ 5 = 185"),
    ],
    usage: { input: 69, output: 53, cacheRead: 0 },
    next: (body) => {
      const [thinking, text] = body.messages[1].content;
      // The signature goes back byte for byte, or the API rejects the turn.
      expect(thinking).toEqual({
        type: "thinking",
        thinking: "The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185",
        signature: CASES[1].content[0].type === "thinking" ? CASES[1].content[0].thinkingSignature : "",
      });
      expect(text).toEqual({ type: "text", text: "925 ÷ 5 = 185" });
    },
  },
  {
    name: "Anthropic tool use with input_json_delta",
    api: "anthropic-messages",
    files: ["vercel-ai.anthropic-json-tool.1.chunks.txt"],
    events: ["start", "toolcall_start", "toolcall_delta…", "toolcall_end", "done"],
    stopReason: "toolUse",
    content: [
      {
        type: "toolCall",
        id: "toolu_01KFbKqPYSuAKujiL6mTfzYA",
        name: "json",
        arguments: { elements: [{ location: "San Francisco", temperature: 58, condition: "sunny" }] },
      },
    ],
    usage: { input: 849, output: 47, cacheRead: 0 },
    next: (body) => {
      expect(body.messages[1].content).toEqual([
        {
          type: "tool_use",
          id: "toolu_01KFbKqPYSuAKujiL6mTfzYA",
          name: "json",
          input: { elements: [{ location: "San Francisco", temperature: 58, condition: "sunny" }] },
        },
      ]);
      expect(body.messages[2]).toEqual({
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_01KFbKqPYSuAKujiL6mTfzYA",
            content: "result of json",
            is_error: false,
            cache_control: { type: "ephemeral" },
          },
        ],
      });
    },
  },
  {
    name: "Anthropic text then a tool with no arguments",
    api: "anthropic-messages",
    files: ["vercel-ai.anthropic-tool-no-args.chunks.txt"],
    events: [
      "start",
      "text_start",
      "text_delta…",
      "text_end",
      "toolcall_start",
      "toolcall_delta…",
      "toolcall_end",
      "done",
    ],
    stopReason: "toolUse",
    content: [
      T("I'll update the issue list for you."),
      { type: "toolCall", id: "toolu_01QE1WLsSVp5hy5Q3GmGTmjP", name: "updateIssueList", arguments: {} },
    ],
    usage: { input: 565, output: 48, cacheRead: 0 },
  },
  {
    name: "Anthropic input tokens only in message_delta (a proxy)",
    api: "anthropic-messages",
    files: ["vercel-ai.anthropic-message-delta-input-tokens.chunks.txt"],
    events: ["start", "text_start", "text_delta…", "text_end", "done"],
    stopReason: "stop",
    content: [T("pong")],
    usage: { input: 61, output: 2, cacheRead: 0 },
  },
  {
    name: "Anthropic several tool uses in one message (hand-made)",
    api: "anthropic-messages",
    files: ["hand-made.anthropic-two-tool-uses.chunks.txt"],
    events: [
      "start",
      "text_start",
      "text_delta…",
      "text_end",
      "toolcall_start",
      "toolcall_delta…",
      "toolcall_end",
      "toolcall_start",
      "toolcall_delta…",
      "toolcall_end",
      "done",
    ],
    stopReason: "toolUse",
    content: [
      T("Checking both."),
      { type: "toolCall", id: "toolu_handmade_a", name: "read", arguments: { path: "a.txt" } },
      { type: "toolCall", id: "toolu_handmade_b", name: "read", arguments: { path: "b.txt" } },
    ],
    usage: { input: 320, output: 71, cacheRead: 0 },
    next: (body) => {
      // Both results in one user turn, as the API requires.
      expect(body.messages[2].content.map((c: any) => c.tool_use_id)).toEqual(["toolu_handmade_a", "toolu_handmade_b"]);
    },
  },
  {
    name: "Anthropic error event mid-stream (hand-made)",
    api: "anthropic-messages",
    files: ["hand-made.anthropic-error-mid-stream.chunks.txt"],
    events: ["start", "text_start", "text_delta…", "text_end", "error"],
    stopReason: "error",
    content: [T("Let me")],
    usage: { input: 25, output: 1, cacheRead: 0 },
    errorMessage: "Overloaded",
    retryable: true,
  },
  {
    name: "Anthropic max_tokens inside a tool call (hand-made)",
    api: "anthropic-messages",
    files: ["hand-made.anthropic-max-tokens-in-tool-call.chunks.txt"],
    events: ["start", "toolcall_start", "toolcall_delta…", "toolcall_end", "done"],
    stopReason: "length",
    // As pi 1.6: the cut text parsed once, so no arguments and why (in Node 22's words).
    content: [
      {
        type: "toolCall",
        id: "toolu_handmade_cut",
        name: "write",
        arguments: {},
        argumentsError:
          'Unterminated string in JSON at position 49 (line 1 column 50)\n\nReceived arguments:\n{"path": "notes.md", "content": "# Plan\\n\\n1. Rea',
      },
    ],
    usage: { input: 849, output: 32, cacheRead: 0 },
    next: (body) => {
      expect(body.messages[1].content).toEqual([
        {
          type: "tool_use",
          id: "toolu_handmade_cut",
          name: "write",
          input: {},
        },
      ]);
    },
  },
  {
    name: "Anthropic refusal with stop_details",
    api: "anthropic-messages",
    files: ["vercel-ai.anthropic-refusal.chunks.txt"],
    events: ["start", "text_start", "text_delta…", "text_end", "error"],
    stopReason: "error",
    content: [
      T(
        "This request triggered restrictions on violative cyber content and was blocked under Anthropic's Usage Policy.",
      ),
    ],
    usage: { input: 18, output: 5, cacheRead: 0 },
    errorMessage:
      'The model refused to answer (stop_reason "refusal", category "cyber"): This request triggered restrictions on violative cyber content and was blocked under Anthropic\'s Usage Policy.',
    retryable: false,
  },
  {
    name: "Anthropic pause_turn continues the turn (hand-made)",
    api: "anthropic-messages",
    files: ["hand-made.anthropic-pause-turn.1.chunks.txt", "hand-made.anthropic-pause-turn.2.chunks.txt"],
    events: ["start", "text_start", "text_delta…", "text_end", "text_start", "text_delta…", "text_end", "done"],
    stopReason: "stop",
    content: [T("First half."), T(" Second half.")],
    usage: { input: 88, output: 9, cacheRead: 0 },
  },
  {
    name: "Anthropic model_context_window_exceeded is an overflow (hand-made)",
    api: "anthropic-messages",
    files: ["hand-made.anthropic-context-window-exceeded.chunks.txt"],
    events: ["start", "text_start", "text_delta…", "text_end", "error"],
    stopReason: "error",
    content: [T("The summary of")],
    usage: { input: 199_000, output: 1000, cacheRead: 0 },
    errorMessage: 'The model ran out of context window while answering (stop_reason "model_context_window_exceeded").',
    contextOverflow: true,
  },
  {
    name: "Anthropic unknown stop reason is an error (hand-made)",
    api: "anthropic-messages",
    files: ["hand-made.anthropic-unknown-stop-reason.chunks.txt"],
    events: ["start", "text_start", "text_delta…", "text_end", "error"],
    stopReason: "error",
    content: [T("Partial")],
    usage: { input: 12, output: 2, cacheRead: 0 },
    errorMessage:
      'The model stopped with an unknown stop_reason "some_future_reason"; pi-orch does not know whether the answer is complete, so it is treated as an error.',
  },
  {
    name: "OpenAI text and the usage chunk",
    api: "openai-completions",
    files: ["openai-python.text-usage.sse"],
    events: ["start", "text_start", "text_delta…", "text_end", "done"],
    stopReason: "stop",
    content: [
      T(
        "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or a weather app.",
      ),
    ],
    usage: { input: 14, output: 30, cacheRead: 0 },
  },
  {
    name: "OpenAI parallel tool calls",
    api: "openai-completions",
    files: ["openai-python.parallel-tool-calls.sse"],
    events: [
      "start",
      "toolcall_start",
      "toolcall_delta…",
      "toolcall_end",
      "toolcall_start",
      "toolcall_delta…",
      "toolcall_end",
      "done",
    ],
    stopReason: "toolUse",
    content: [
      {
        type: "toolCall",
        id: "call_JMW1whyEaYG438VE1OIflxA2",
        name: "GetWeatherArgs",
        arguments: { city: "Edinburgh", country: "GB", units: "c" },
      },
      {
        type: "toolCall",
        id: "call_DNYTawLBoN8fj3KN6qU9N1Ou",
        name: "get_stock_price",
        arguments: { ticker: "AAPL", exchange: "NASDAQ" },
      },
    ],
    usage: { input: 149, output: 60, cacheRead: 0 },
    next: (body) => {
      expect(body.messages[2]).toEqual({
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_JMW1whyEaYG438VE1OIflxA2",
            type: "function",
            function: { name: "GetWeatherArgs", arguments: '{"city":"Edinburgh","country":"GB","units":"c"}' },
          },
          {
            id: "call_DNYTawLBoN8fj3KN6qU9N1Ou",
            type: "function",
            function: { name: "get_stock_price", arguments: '{"ticker":"AAPL","exchange":"NASDAQ"}' },
          },
        ],
      });
      expect(body.messages.slice(3)).toEqual([
        { role: "tool", tool_call_id: "call_JMW1whyEaYG438VE1OIflxA2", content: "result of GetWeatherArgs" },
        { role: "tool", tool_call_id: "call_DNYTawLBoN8fj3KN6qU9N1Ou", content: "result of get_stock_price" },
      ]);
    },
  },
  {
    name: "OpenAI finish_reason length",
    api: "openai-completions",
    files: ["openai-python.max-tokens-length.sse"],
    events: ["start", "text_start", "text_delta…", "text_end", "done"],
    stopReason: "length",
    content: [T('{"')],
    usage: { input: 79, output: 1, cacheRead: 0 },
  },
  {
    name: "OpenAI refusal",
    api: "openai-completions",
    files: ["openai-python.refusal.sse"],
    events: ["start", "text_start", "text_delta…", "text_end", "error"],
    stopReason: "error",
    content: [T("I'm sorry, I can't assist with that request.")],
    usage: { input: 79, output: 11, cacheRead: 0 },
    errorMessage:
      "The model refused to answer (finish_reason \"stop\", with a refusal): I'm sorry, I can't assist with that request.",
    retryable: false,
  },
  {
    name: "DeepSeek reasoning_content with a tool call",
    api: "openai-completions",
    files: ["vercel-ai.deepseek-tool-call.chunks.txt"],
    model: { provider: "deepseek", reasoning: true },
    thinkingLevel: "medium",
    events: [
      "start",
      "thinking_start",
      "thinking_delta…",
      "thinking_end",
      "toolcall_start",
      "toolcall_delta…",
      "toolcall_end",
      "done",
    ],
    stopReason: "toolUse",
    content: [
      {
        type: "thinking",
        thinking:
          'The user is asking for the weather in San Francisco. I need to use the weather tool to get this information. Let me invoke the weather tool with the location parameter set to "San Francisco".',
        thinkingSignature: "reasoning_content",
      },
      {
        type: "toolCall",
        id: "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF",
        name: "weather",
        arguments: { location: "San Francisco" },
      },
    ],
    // prompt_tokens 339 of which prompt_cache_hit_tokens 320.
    usage: { input: 19, output: 83, cacheRead: 320 },
    next: (body) => {
      // DeepSeek rejects a tool loop whose assistant turn lacks its reasoning_content.
      expect(body.messages[2]).toMatchObject({
        role: "assistant",
        reasoning_content: expect.stringMatching(/^The user is asking for the weather in San Francisco\./),
        tool_calls: [
          {
            id: "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF",
            function: { name: "weather", arguments: '{"location":"San Francisco"}' },
          },
        ],
      });
      expect(body.thinking).toEqual({ type: "enabled" });
    },
  },
  {
    name: "xAI reasoning_content, cached prompt, reasoning counted apart",
    api: "openai-completions",
    files: ["vercel-ai.xai-tool-call.chunks.txt"],
    events: [
      "start",
      "thinking_start",
      "thinking_delta…",
      "thinking_end",
      "toolcall_start",
      "toolcall_delta…",
      "toolcall_end",
      "done",
    ],
    stopReason: "toolUse",
    content: [
      expect.objectContaining({ type: "thinking", thinkingSignature: "reasoning_content" }) as any,
      expect.objectContaining({ type: "toolCall", name: "weather" }) as any,
    ],
    // total_tokens 560 = 307 prompt + 26 completion + 227 reasoning: xAI's completion excludes reasoning.
    usage: { input: 1, output: 253, cacheRead: 306 },
  },
  {
    name: "Cerebras `reasoning` and a tool call in one chunk",
    api: "openai-completions",
    files: ["vercel-ai.cerebras-reasoning-tool.first-response.chunks.txt"],
    model: { reasoning: true },
    events: [
      "start",
      "thinking_start",
      "thinking_delta…",
      "thinking_end",
      "toolcall_start",
      "toolcall_delta…",
      "toolcall_end",
      "done",
    ],
    stopReason: "toolUse",
    content: [
      expect.objectContaining({ type: "thinking", thinkingSignature: "reasoning" }) as any,
      { type: "toolCall", id: "bbd2b9d98", name: "nonUsefulTool", arguments: {} },
    ],
    usage: { input: 66, output: 104, cacheRead: 256 },
    next: (body) => {
      // Back in the field it came in.
      expect(body.messages[2].reasoning).toMatch(/^The user is asking about a "magic number"\./);
      expect(body.messages[2].reasoning_content).toBeUndefined();
    },
  },
  {
    name: "Groq: a whole call in one chunk",
    api: "openai-completions",
    files: ["vercel-ai.groq-tool-call.chunks.txt"],
    events: ["start", "toolcall_start", "toolcall_delta…", "toolcall_end", "done"],
    stopReason: "toolUse",
    content: [{ type: "toolCall", id: "tk85n1k4m", name: "weather", arguments: {} }],
    usage: { input: 210, output: 15, cacheRead: 0 },
  },
  {
    name: "Mistral: a call with no index",
    api: "openai-completions",
    files: ["vercel-ai.mistral-tool-call.chunks.txt"],
    events: ["start", "toolcall_start", "toolcall_delta…", "toolcall_end", "done"],
    stopReason: "toolUse",
    content: [{ type: "toolCall", id: "gSIMJiOkT", name: "weather", arguments: { location: "San Francisco" } }],
    usage: { input: 124, output: 22, cacheRead: 0 },
  },
  {
    name: "Qwen (Alibaba): continuations with index 0 and an empty id stay one call",
    api: "openai-completions",
    files: ["vercel-ai.alibaba-tool-call.chunks.txt"],
    events: ["start", "toolcall_start", "toolcall_delta…", "toolcall_end", "done"],
    stopReason: "toolUse",
    content: [
      {
        type: "toolCall",
        id: "call_eee11723464a4b9eb8cee71d",
        name: "weather",
        arguments: { location: "San Francisco" },
      },
    ],
    usage: { input: 295, output: 22, cacheRead: 0 },
  },
  {
    name: "Ollama: a whole call in one chunk",
    api: "openai-completions",
    files: ["ask-openai-nvim.ollama-one-chunk-call.sse"],
    events: ["start", "toolcall_start", "toolcall_delta…", "toolcall_end", "done"],
    stopReason: "toolUse",
    content: [{ type: "toolCall", id: "call_lbcjwr0u", name: "run_command", arguments: { command: "ls -a" } }],
    usage: { input: 0, output: 0, cacheRead: 0 },
  },
  {
    name: "Ollama: every call with index 0 and a new id (hand-made)",
    api: "openai-completions",
    files: ["hand-made.ollama-index-0-calls.chunks.txt"],
    events: [
      "start",
      "toolcall_start",
      "toolcall_delta…",
      "toolcall_end",
      "toolcall_start",
      "toolcall_delta…",
      "toolcall_end",
      "done",
    ],
    stopReason: "toolUse",
    content: [
      { type: "toolCall", id: "call_handmade_a", name: "bash", arguments: { command: "ls" } },
      { type: "toolCall", id: "call_handmade_b", name: "bash", arguments: { command: "pwd" } },
    ],
    usage: { input: 88, output: 24, cacheRead: 0 },
  },
  {
    name: "vLLM usage on every chunk",
    api: "openai-completions",
    files: ["discourse-ai.vllm-usage-every-chunk.sse"],
    events: ["start", "text_start", "text_delta…", "text_end", "done"],
    stopReason: "stop",
    content: [T("Hello Sam. It's nice to meet you. Is there something I can help you with or would you like to chat?")],
    usage: { input: 46, output: 26, cacheRead: 0 },
  },
  {
    name: "OpenAI Responses: encrypted reasoning, then a function call",
    api: "openai-responses",
    files: ["vercel-ai.openai-responses-reasoning-encrypted.response-1.chunks.txt"],
    model: { reasoning: true },
    thinkingLevel: "medium",
    events: [
      "start",
      "thinking_start",
      "thinking_delta…",
      "thinking_end",
      "toolcall_start",
      "toolcall_delta…",
      "toolcall_end",
      "done",
    ],
    stopReason: "toolUse",
    content: [
      expect.objectContaining({
        type: "thinking",
        thinking:
          "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7, then multiply the result by 3, and finally multiply that by 10, reporting the final product.",
      }) as any,
      {
        type: "toolCall",
        id: "call_AB6AaRZ1FYZB2RwS6A5vbdqn|fc_01830d662ab3856501693c32151234819091cfca267e98cc5f",
        name: "calculator",
        arguments: { a: 12, b: 7, op: "add" },
      },
    ],
    usage: { input: 134, output: 28, cacheRead: 0 },
    next: (body) => {
      const recorded = readFileSync(
        join(FIXTURES, "vercel-ai.openai-responses-reasoning-encrypted.response-1.chunks.txt"),
        "utf8",
      )
        .split("\n")
        .filter((l) => l.includes('"response.output_item.done"') && l.includes('"type":"reasoning"'))
        .map((l) => JSON.parse(l).item)[0];
      expect(body).toMatchObject({
        store: false,
        include: ["reasoning.encrypted_content"],
        reasoning: { effort: "medium", summary: "auto" },
      });
      // The reasoning item exactly as the API sent it (encrypted_content included), before its call
      // (after the system prompt, an instruction item as pi 1.6 sends it, and the prompt).
      expect(body.input.slice(2)).toEqual([
        recorded,
        {
          type: "function_call",
          call_id: "call_AB6AaRZ1FYZB2RwS6A5vbdqn",
          name: "calculator",
          arguments: '{"a":12,"b":7,"op":"add"}',
          id: "fc_01830d662ab3856501693c32151234819091cfca267e98cc5f",
        },
        { type: "function_call_output", call_id: "call_AB6AaRZ1FYZB2RwS6A5vbdqn", output: "result of calculator" },
      ]);
      expect(recorded.encrypted_content).toMatch(/^gAAAAA/);
    },
  },
  {
    name: "OpenAI Responses: text after tool results",
    api: "openai-responses",
    files: ["vercel-ai.openai-responses-reasoning-encrypted.response-4.chunks.txt"],
    events: ["start", "text_start", "text_delta…", "text_end", "done"],
    stopReason: "stop",
    content: [
      {
        ...T("The final result is **570**."),
        textSignature: '{"v":1,"id":"msg_01830d662ab3856501693c32183a488190a612c410a0a39823"}',
      },
    ],
    usage: { input: 299, output: 12, cacheRead: 0 },
    next: (body) => {
      expect(body.input[2]).toEqual({
        type: "message",
        role: "assistant",
        status: "completed",
        id: "msg_01830d662ab3856501693c32183a488190a612c410a0a39823",
        content: [{ type: "output_text", text: "The final result is **570**.", annotations: [] }],
      });
    },
  },
  {
    name: "OpenAI Responses: an error event mid-stream (insufficient_quota)",
    api: "openai-responses",
    files: ["vercel-ai.openai-responses-error.1.chunks.txt"],
    events: ["start", "error"],
    stopReason: "error",
    content: [],
    usage: { input: 0, output: 0, cacheRead: 0 },
    errorMessage:
      "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
    retryable: false,
  },
];

let server: MockModelServer | undefined;
beforeEach(async () => {
  server = await startMockModelServer();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function modelFor(c: Pick<Case, "api" | "model">): Model {
  return { ...mockModel(server!, c.api), reasoning: false, ...c.model };
}

/** Event types with runs of one delta type folded, so a case does not pin the chunking. */
function fold(events: ProviderEvent[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    const t = e.type.endsWith("_delta") ? `${e.type}…` : e.type;
    if (out.at(-1) !== t) out.push(t);
  }
  return out;
}

async function collect(stream: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const e of stream) events.push(e);
  return events;
}

describe("recorded provider streams through the official SDKs", () => {
  it.each(CASES.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const s = server!;
    for (const file of c.files) s.enqueue({ replay: { body: recording(file, c.api) } });
    const provider =
      c.api === "anthropic-messages"
        ? createAnthropicProvider()
        : c.api === "openai-responses"
          ? createOpenAIResponsesProvider()
          : createOpenAIProvider();
    const model = modelFor(c);
    const user: LlmMessage = { role: "user", content: "hi", timestamp: 1 };
    const base = { model, systemPrompt: "test", tools: [], thinkingLevel: c.thinkingLevel ?? "off", apiKey: "k" };
    const events = await collect(provider.stream({ ...base, messages: [user], signal: new AbortController().signal }));

    expect(fold(events)).toEqual(c.events);
    const last = events.at(-1)!;
    if (last.type !== "done" && last.type !== "error") throw new Error(`last event is ${last.type}`);
    const message = last.message;
    expect(message.stopReason).toBe(c.stopReason);
    expect(message.content).toEqual(c.content);
    expect(message.usage).toMatchObject(c.usage);
    expect(message.errorMessage).toBe(c.errorMessage);
    if (last.type === "error") {
      expect(last.retryable).toBe(c.retryable ?? false);
      expect(last.contextOverflow ?? false).toBe(c.contextOverflow ?? false);
    }
    expect(s.requests).toHaveLength(c.files.length);

    if (!c.next) return;
    const results: ToolResultMessage[] = message.content.flatMap((b) =>
      b.type === "toolCall"
        ? [
            {
              role: "toolResult" as const,
              toolCallId: b.id,
              toolName: b.name,
              content: [T(`result of ${b.name}`)],
              isError: false,
              timestamp: 2,
            },
          ]
        : [],
    );
    s.enqueue({ text: "next" });
    await collect(
      provider.stream({ ...base, messages: [user, message, ...results], signal: new AbortController().signal }),
    );
    c.next(s.requests.at(-1)!.body);
  });
});

describe("recorded streams through the agent loop", () => {
  /** A tool that records what it was asked to do. */
  function recordingTool(name: string, calls: unknown[]): AgentTool {
    return {
      name,
      label: name,
      description: `records ${name} calls`,
      parameters: Type.Object({}, { additionalProperties: true }),
      execute: async (args) => {
        calls.push(args);
        return { content: [T(`did ${name}`)] };
      },
    };
  }

  function agentOn(model: Model, tools: AgentTool[]): Agent {
    const providers = new ProviderSet();
    return new Agent(
      {
        cwd: process.cwd(),
        provider: (m) => providers.for(m),
        apiKey: () => "k",
        systemPrompt: () => "test",
        tools: () => tools,
      },
      { model, thinkingLevel: "medium" },
    );
  }

  it("a tool call cut off by max_tokens is not run; its error result says so, in pi 1.6's words", async () => {
    const s = server!;
    s.enqueue(
      { replay: { body: recording("hand-made.anthropic-max-tokens-in-tool-call.chunks.txt", "anthropic-messages") } },
      { text: "I will write it in parts." },
    );
    const writes: unknown[] = [];
    const agent = agentOn(modelFor({ api: "anthropic-messages" }), [recordingTool("write", writes)]);
    await agent.start([userMessage("write the plan")]).done;
    expect(writes).toEqual([]);
    const result = agent.messages.find((m): m is ToolResultMessage => m.role === "toolResult")!;
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([
      {
        type: "text",
        text: 'Tool call "write" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments.',
      },
    ]);
    expect(result.details).toEqual({});
    const next = s.requests[1].body.messages;
    expect(next[1].content).toEqual([
      {
        type: "tool_use",
        id: "toolu_handmade_cut",
        name: "write",
        input: {},
      },
    ]);
    expect(next[2].content[0]).toMatchObject({
      type: "tool_result",
      tool_use_id: "toolu_handmade_cut",
      is_error: true,
    });
  });

  it("DeepSeek's tool loop sends reasoning_content back on the second request", async () => {
    const s = server!;
    s.enqueue(
      { replay: { body: recording("vercel-ai.deepseek-tool-call.chunks.txt", "openai-completions") } },
      { text: "Sunny." },
    );
    const calls: unknown[] = [];
    const agent = agentOn(modelFor({ api: "openai-completions", model: { provider: "deepseek", reasoning: true } }), [
      recordingTool("weather", calls),
    ]);
    await agent.start([userMessage("weather in SF?")]).done;
    expect(calls).toEqual([{ location: "San Francisco" }]);
    const second = s.requests[1].body;
    const assistant = second.messages.find((m: any) => m.role === "assistant");
    expect(assistant.reasoning_content).toMatch(/^The user is asking for the weather in San Francisco\./);
    expect(second.messages.at(-1)).toEqual({
      role: "tool",
      tool_call_id: "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF",
      content: "did weather",
    });
  });

  it("Responses: output cut by max_output_tokens is a length stop; a scripted reply runs a tool loop", async () => {
    const s = server!;
    s.enqueue(
      { toolCalls: [{ name: "weather", arguments: { city: "Oslo" }, argChunks: 3 }] },
      { text: "Cold.", stopReason: "length" },
    );
    const calls: unknown[] = [];
    const agent = agentOn(modelFor({ api: "openai-responses", model: { reasoning: true } }), [
      recordingTool("weather", calls),
    ]);
    await agent.start([userMessage("weather?")]).done;
    expect(calls).toEqual([{ city: "Oslo" }]);
    expect((agent.messages.at(-1) as AssistantMessage).stopReason).toBe("length");
    expect(s.requests[1].body.input.slice(-2)).toEqual([
      {
        type: "function_call",
        call_id: "call_mock_1_0",
        name: "weather",
        arguments: '{"city":"Oslo"}',
        id: "fc_mock_1_0",
      },
      { type: "function_call_output", call_id: "call_mock_1_0", output: "did weather" },
    ]);
  });

  it("a dropped connection mid-recording is a retryable failure", async () => {
    const s = server!;
    const body = recording("openai-python.parallel-tool-calls.sse", "openai-completions");
    // Cut inside the first call's arguments ("Edinb|urgh").
    s.enqueue({ replay: { body, dropAfterBytes: body.indexOf("urgh") } });
    const events = await collect(
      createOpenAIProvider().stream({
        model: modelFor({ api: "openai-completions" }),
        systemPrompt: "test",
        messages: [{ role: "user", content: "hi", timestamp: 1 }],
        tools: [],
        thinkingLevel: "off",
        apiKey: "k",
        signal: new AbortController().signal,
      }),
    );
    const last = events.at(-1)!;
    expect(last).toMatchObject({ type: "error", retryable: true, message: { stopReason: "error" } });
    // The half-streamed call is dropped, never run with half its arguments.
    expect((last as { message: AssistantMessage }).message.content).toEqual([]);
  });
});
