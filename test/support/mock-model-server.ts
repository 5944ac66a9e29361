/**
 * A scripted model server for tests: real HTTP on 127.0.0.1 speaking OpenAI Chat
 * Completions (`POST /v1/chat/completions`) and Anthropic Messages (`POST /v1/messages`)
 * as SSE, close enough to the real APIs that the official SDKs parse it. Tests queue
 * replies in one endpoint-neutral shape, or replay responses recorded from the real
 * APIs (test/fixtures/provider-streams/); each request takes the next one.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import type { Model, ModelApi } from "../../shared/schema/messages.js";

/** A scripted successful reply, streamed in this order: thinking, text, tool calls. */
export interface MockStreamReply {
  /** One string is sent as one chunk; an array as one chunk per element. */
  text?: string | string[];
  thinking?: string;
  /** Signature of the thinking block (Anthropic only). */
  thinkingSignature?: string;
  /** Emits a `redacted_thinking` block with this opaque payload first (Anthropic only). */
  redactedThinking?: string;
  toolCalls?: MockToolCall[];
  /** Pause before every chunk after the first, so a test can act mid-stream. */
  chunkDelayMs?: number;
  usage?: { input: number; output: number; cacheRead?: number };
  /** Defaults to `toolUse` when there are tool calls, else `stop`. */
  stopReason?: "stop" | "length" | "toolUse";
}

/**
 * A tool call the mock model makes; `argChunks` splits the JSON arguments into that many
 * deltas. `rawArguments` is sent instead of them as is (malformed or cut-off JSON).
 */
export interface MockToolCall {
  id?: string;
  name: string;
  arguments: Record<string, unknown>;
  rawArguments?: string;
  argChunks?: number;
}

/**
 * An HTTP error in the endpoint's own error body shape (Anthropic `overloaded_error` for 529, ...),
 * or with `body` sent as is (a server's recorded error). `headers` go out with it (`retry-after`).
 */
export interface MockErrorReply {
  error: { status: number; message?: string; body?: string; headers?: Record<string, string> };
}

/**
 * A recorded response replayed byte for byte: `body` is the SSE text as the server sent
 * it (see `sseFromChunks` for recordings kept as one JSON event per line). `dropAfterBytes`
 * cuts the connection after that many bytes of the body, as a dropped connection does.
 */
export interface MockReplayReply {
  replay: { body: string; status?: number; headers?: Record<string, string>; dropAfterBytes?: number };
}

/**
 * Accept the request, send the stream's headers and nothing more until the client or the
 * server closes; `"before-headers"` sends not even the headers (a server still thinking).
 */
export interface MockHangReply {
  hang: true | "before-headers";
}

/** Anything a test can queue. */
export type MockReply = MockStreamReply | MockErrorReply | MockHangReply | MockReplayReply;

/** A request as the server received it. */
export interface RecordedRequest {
  path: string;
  headers: IncomingMessage["headers"];
  /** The parsed JSON body (undefined when the body was not JSON). */
  body: any;
  /** When the request arrived (`performance.now()`), so tests can measure the client's waits. */
  at: number;
}

/** The running server. */
export interface MockModelServer {
  /** `http://127.0.0.1:PORT`; the OpenAI base URL is `${url}/v1`, the Anthropic one `url`. */
  url: string;
  /** Queue replies; a function is called with the request it answers. */
  enqueue(...replies: (MockReply | ((req: RecordedRequest) => MockReply))[]): void;
  /** Every model request received, in order. */
  requests: RecordedRequest[];
  /** Resolves once `n` requests in total have arrived. */
  waitForRequests(n: number): Promise<void>;
  /** Stop listening and cut every open connection (hanging streams included). */
  close(): Promise<void>;
}

type Endpoint = "openai" | "anthropic" | "openai-responses";

const ENDPOINTS: Record<string, Endpoint> = {
  "/v1/chat/completions": "openai",
  "/v1/messages": "anthropic",
  "/v1/responses": "openai-responses",
};

/** Start a mock model server on a free port of 127.0.0.1. */
export async function startMockModelServer(): Promise<MockModelServer> {
  const queue: (MockReply | ((req: RecordedRequest) => MockReply))[] = [];
  const requests: RecordedRequest[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const sockets = new Set<Socket>();
  // Aborts the chunk delays of streams still running when the server closes.
  const closing = new AbortController();
  let counter = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `mock model server crashed: ${String(err)}` } }));
    });
  });
  // node closes a kept-alive connection after 5 s idle; a provider's front end keeps it a minute
  // or more. With 5 s, a tool that blocks the worker's event loop longer (an extension's
  // execFileSync over ssh on a slow machine) has the next request written on a socket the
  // server already closed: "other side closed", a retry, and a test that sees the run end early.
  server.keepAliveTimeout = 65_000;
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0];
    const endpoint = req.method === "POST" ? ENDPOINTS[path] : undefined;
    if (!endpoint) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `mock model server: no route for ${req.method} ${path}` } }));
      return;
    }
    const raw = Buffer.concat(await collect(req)).toString("utf8");
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const recorded: RecordedRequest = { path, headers: req.headers, body, at: performance.now() };
    requests.push(recorded);
    for (const w of waiters.filter((w) => requests.length >= w.n)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }

    const next = queue.shift();
    const reply: MockReply = next
      ? typeof next === "function"
        ? next(recorded)
        : next
      : {
          error: {
            status: 500,
            message: `mock model server: no scripted reply left for request #${requests.length} (POST ${path}); enqueue one more reply`,
          },
        };
    const id = ++counter;

    if ("error" in reply) {
      sendError(endpoint, res, reply.error);
      return;
    }
    if ("replay" in reply) {
      await replay(res, reply.replay);
      return;
    }
    if ("hang" in reply && reply.hang === "before-headers") return;
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    res.flushHeaders();
    if ("hang" in reply) return;

    // Stops the stream when the client goes away (abort) or the server closes.
    const stop = new AbortController();
    res.on("close", () => stop.abort());
    const signal = AbortSignal.any([stop.signal, closing.signal]);
    const model =
      typeof (body as { model?: unknown })?.model === "string" ? (body as { model: string }).model : "mock-1";
    const frames =
      endpoint === "openai"
        ? openAIFrames(reply, id, model)
        : endpoint === "anthropic"
          ? anthropicFrames(reply, id, model)
          : responsesFrames(reply, id, model);
    let first = true;
    for (const frame of frames) {
      if (!first && reply.chunkDelayMs) {
        try {
          await delay(reply.chunkDelayMs, undefined, { signal });
        } catch {
          return;
        }
      }
      first = false;
      if (signal.aborted) return;
      res.write(frame);
    }
    res.end();
  }

  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("mock model server: no TCP address");

  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    enqueue(...replies) {
      queue.push(...replies);
    },
    waitForRequests(n) {
      if (requests.length >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    async close() {
      closing.abort();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** A Model aimed at the mock server (id `mock-1`, provider `mock`, no costs). */
export function mockModel(
  server: MockModelServer,
  api: Extract<ModelApi, "openai-completions" | "openai-responses" | "anthropic-messages">,
): Model {
  return {
    id: "mock-1",
    name: "Mock 1",
    api,
    provider: "mock",
    baseUrl: api === "anthropic-messages" ? server.url : `${server.url}/v1`,
    reasoning: true,
    input: ["text", "image"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 128_000,
    maxTokens: 4096,
  };
}

async function collect(req: IncomingMessage): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks;
}

/** Anthropic's error `type` for an HTTP status, as the real API sends it. */
function anthropicErrorType(status: number): string {
  if (status === 529) return "overloaded_error";
  if (status === 429) return "rate_limit_error";
  if (status === 413) return "request_too_large";
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
}

/** Send a recorded response; a cut one ends by destroying the socket mid-body. */
async function replay(res: ServerResponse, r: MockReplayReply["replay"]): Promise<void> {
  const status = r.status ?? 200;
  const contentType = status === 200 ? "text/event-stream" : "application/json";
  res.writeHead(status, { "content-type": contentType, "cache-control": "no-cache", ...r.headers });
  const bytes = Buffer.from(r.body, "utf8");
  if (r.dropAfterBytes === undefined) {
    res.end(bytes);
    return;
  }
  res.flushHeaders();
  const sent = bytes.subarray(0, r.dropAfterBytes);
  if (sent.length > 0) await new Promise<void>((resolve) => res.write(sent, () => resolve()));
  res.socket?.destroy();
}

/**
 * SSE text from a recording kept as one JSON event per line (vercel/ai's `*.chunks.txt`).
 * Anthropic's and the Responses API's events go out as `event: <type>` plus `data:` (the
 * Anthropic SDK dispatches on the event name); Chat Completions chunks as `data:` lines
 * ending with `data: [DONE]`, as the API sends them.
 */
export function sseFromChunks(api: "anthropic" | "openai" | "openai-responses", jsonLines: string): string {
  const events = jsonLines.split("\n").filter((line) => line.trim() !== "");
  if (api === "openai") return `${events.map((line) => `data: ${line}\n\n`).join("")}data: [DONE]\n\n`;
  return events.map((line) => `event: ${(JSON.parse(line) as { type: string }).type}\ndata: ${line}\n\n`).join("");
}

function sendError(endpoint: Endpoint, res: ServerResponse, error: MockErrorReply["error"]): void {
  const { status, message } = error;
  if (error.body !== undefined) {
    res.writeHead(status, { "content-type": "application/json", ...error.headers });
    res.end(error.body);
    return;
  }
  const text = message ?? (status === 529 ? "Overloaded" : `mock error ${status}`);
  const body =
    endpoint === "anthropic"
      ? { type: "error", error: { type: anthropicErrorType(status), message: text } }
      : {
          error: {
            message: text,
            type: status === 429 ? "rate_limit_exceeded" : status >= 500 ? "server_error" : "invalid_request_error",
            param: null,
            code: /context length/i.test(text) ? "context_length_exceeded" : null,
          },
        };
  res.writeHead(status, { "content-type": "application/json", ...error.headers });
  res.end(JSON.stringify(body));
}

function textChunks(reply: MockStreamReply): string[] {
  if (reply.text === undefined) return [];
  return typeof reply.text === "string" ? [reply.text] : reply.text;
}

/** Split a call's JSON arguments into `argChunks` roughly equal pieces. */
function argumentChunks(call: MockToolCall): string[] {
  const json = call.rawArguments ?? JSON.stringify(call.arguments);
  const n = Math.max(1, Math.min(call.argChunks ?? 1, json.length));
  const size = Math.ceil(json.length / n);
  const out: string[] = [];
  for (let i = 0; i < json.length; i += size) out.push(json.slice(i, i + size));
  return out;
}

function stopReasonOf(reply: MockStreamReply): "stop" | "length" | "toolUse" {
  return reply.stopReason ?? (reply.toolCalls?.length ? "toolUse" : "stop");
}

function openAIFrames(reply: MockStreamReply, id: number, model: string): string[] {
  const base = {
    id: `chatcmpl-mock-${id}`,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model,
  };
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  const frames = [chunk({ role: "assistant", content: "" })];
  if (reply.thinking) frames.push(chunk({ reasoning_content: reply.thinking }));
  for (const text of textChunks(reply)) frames.push(chunk({ content: text }));
  (reply.toolCalls ?? []).forEach((call, index) => {
    const callId = call.id ?? `call_mock_${id}_${index}`;
    frames.push(
      chunk({ tool_calls: [{ index, id: callId, type: "function", function: { name: call.name, arguments: "" } }] }),
    );
    for (const piece of argumentChunks(call))
      frames.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  const finish = { stop: "stop", length: "length", toolUse: "tool_calls" }[stopReasonOf(reply)];
  frames.push(chunk({}, finish));
  const usage = reply.usage ?? { input: 10, output: 5 };
  const cached = usage.cacheRead ?? 0;
  frames.push(
    `data: ${JSON.stringify({
      ...base,
      choices: [],
      usage: {
        prompt_tokens: usage.input + cached,
        completion_tokens: usage.output,
        total_tokens: usage.input + cached + usage.output,
        prompt_tokens_details: { cached_tokens: cached },
      },
    })}\n\n`,
  );
  frames.push("data: [DONE]\n\n");
  return frames;
}

function anthropicFrames(reply: MockStreamReply, id: number, model: string): string[] {
  const frame = (data: { type: string; [key: string]: unknown }) =>
    `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
  const usage = reply.usage ?? { input: 10, output: 5 };
  const frames = [
    frame({
      type: "message_start",
      message: {
        id: `msg_mock_${id}`,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: usage.input,
          output_tokens: 1,
          cache_read_input_tokens: usage.cacheRead ?? 0,
          cache_creation_input_tokens: 0,
        },
      },
    }),
  ];
  let index = 0;
  const block = (start: object, deltas: object[]) => {
    frames.push(frame({ type: "content_block_start", index, content_block: start }));
    for (const delta of deltas) frames.push(frame({ type: "content_block_delta", index, delta }));
    frames.push(frame({ type: "content_block_stop", index }));
    index++;
  };
  if (reply.redactedThinking) block({ type: "redacted_thinking", data: reply.redactedThinking }, []);
  if (reply.thinking) {
    block({ type: "thinking", thinking: "", signature: "" }, [
      { type: "thinking_delta", thinking: reply.thinking },
      { type: "signature_delta", signature: reply.thinkingSignature ?? `sig_mock_${id}` },
    ]);
  }
  const texts = textChunks(reply);
  if (texts.length > 0) {
    block(
      { type: "text", text: "", citations: null },
      texts.map((text) => ({ type: "text_delta", text })),
    );
  }
  (reply.toolCalls ?? []).forEach((call, i) => {
    block(
      { type: "tool_use", id: call.id ?? `toolu_mock_${id}_${i}`, name: call.name, input: {} },
      argumentChunks(call).map((partial_json) => ({ type: "input_json_delta", partial_json })),
    );
  });
  const stop = { stop: "end_turn", length: "max_tokens", toolUse: "tool_use" }[stopReasonOf(reply)];
  frames.push(
    frame({
      type: "message_delta",
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: usage.output },
    }),
  );
  frames.push(frame({ type: "message_stop" }));
  return frames;
}

/** A scripted reply as Responses API events: a reasoning item, a message, function calls, then `response.completed`. */
function responsesFrames(reply: MockStreamReply, id: number, model: string): string[] {
  const frame = (data: { type: string; [key: string]: unknown }) =>
    `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
  const responseId = `resp_mock_${id}`;
  const base = { id: responseId, object: "response", created_at: Math.floor(Date.now() / 1000), model, output: [] };
  const frames = [frame({ type: "response.created", response: { ...base, status: "in_progress" } })];
  let index = 0;
  if (reply.thinking) {
    const item = {
      id: `rs_mock_${id}`,
      type: "reasoning",
      summary: [{ type: "summary_text", text: reply.thinking }],
      encrypted_content: `enc_mock_${id}`,
    };
    frames.push(frame({ type: "response.output_item.added", output_index: index, item: { ...item, summary: [] } }));
    frames.push(
      frame({
        type: "response.reasoning_summary_text.delta",
        item_id: item.id,
        output_index: index,
        summary_index: 0,
        delta: reply.thinking,
      }),
    );
    frames.push(frame({ type: "response.output_item.done", output_index: index, item }));
    index++;
  }
  const texts = textChunks(reply);
  if (texts.length > 0) {
    const itemId = `msg_mock_${id}`;
    frames.push(
      frame({
        type: "response.output_item.added",
        output_index: index,
        item: { id: itemId, type: "message", role: "assistant", status: "in_progress", content: [] },
      }),
    );
    for (const delta of texts)
      frames.push(
        frame({ type: "response.output_text.delta", item_id: itemId, output_index: index, content_index: 0, delta }),
      );
    const text = texts.join("");
    frames.push(
      frame({
        type: "response.output_item.done",
        output_index: index,
        item: {
          id: itemId,
          type: "message",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text, annotations: [] }],
        },
      }),
    );
    index++;
  }
  (reply.toolCalls ?? []).forEach((call, i) => {
    const item = {
      id: `fc_mock_${id}_${i}`,
      type: "function_call",
      call_id: call.id ?? `call_mock_${id}_${i}`,
      name: call.name,
      arguments: "",
      status: "in_progress",
    };
    frames.push(frame({ type: "response.output_item.added", output_index: index, item }));
    for (const delta of argumentChunks(call))
      frames.push(
        frame({ type: "response.function_call_arguments.delta", item_id: item.id, output_index: index, delta }),
      );
    frames.push(
      frame({
        type: "response.output_item.done",
        output_index: index,
        item: { ...item, arguments: call.rawArguments ?? JSON.stringify(call.arguments), status: "completed" },
      }),
    );
    index++;
  });
  const usage = reply.usage ?? { input: 10, output: 5 };
  const cached = usage.cacheRead ?? 0;
  const length = stopReasonOf(reply) === "length";
  frames.push(
    frame({
      type: length ? "response.incomplete" : "response.completed",
      response: {
        ...base,
        status: length ? "incomplete" : "completed",
        incomplete_details: length ? { reason: "max_output_tokens" } : null,
        usage: {
          input_tokens: usage.input + cached,
          input_tokens_details: { cached_tokens: cached },
          output_tokens: usage.output,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: usage.input + cached + usage.output,
        },
      },
    }),
  );
  return frames;
}
