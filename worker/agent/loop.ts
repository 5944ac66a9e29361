/**
 * The agent loop: model turns and tool calls (inner loop), follow-ups (outer loop).
 * It knows nothing of files, sessions, retries or extensions; everything specific
 * arrives through `LoopConfig` hooks, and everything observable leaves through `emit`.
 */
import { checkToolArguments } from "./arg-errors.js";
import type {
  AgentMessage,
  AssistantMessage,
  LlmMessage,
  Model,
  SystemMessage,
  ToolCall,
  ToolResultMessage,
} from "../../shared/schema/messages.js";
import { emptyUsage } from "../../shared/schema/messages.js";
import { checker } from "../../shared/validate.js";
import type {
  AgentTool,
  NestedToolOutcome,
  PlacedSystemMessage,
  ProviderEvent,
  ToolResult,
  ToolSpec,
} from "../types.js";
import type { AgentContextView, Emit, InjectSource, LoopConfig, ResponseFailure } from "./types.js";
import { createInitialSystemMessage, getCurrentSystemPrompt, getCurrentTools } from "../providers/transcript.js";

/** The longest a streamed reply runs without letting the event loop read input (ms). */
const YIELD_AFTER_MS = 10;

/**
 * Run the agent on `context` (mutated in place: new messages are appended) starting
 * with `prompts`. Resolves with the messages of this run once `agent_end` was emitted.
 * Never rejects for model or tool failures: they end up in messages.
 */
export async function runAgentLoop(
  context: AgentMessage[],
  prompts: AgentMessage[],
  config: LoopConfig,
  emit: Emit,
): Promise<AgentMessage[]> {
  const runMessages: AgentMessage[] = [];
  emit({ type: "agent_start" });
  // As pi does: steering queued while idle goes into the first turn, after the prompt,
  // so the model answers both at once instead of the steer taking over a later turn.
  const early = config.takeSteering();
  let pending = early.length > 0 ? [...prompts, ...early] : prompts;
  let pendingFrom: InjectSource = early.length > 0 ? "steering" : "prompt";

  // A finishTurn that asked for one more request no tool call, steer or follow-up made.
  let explicitContinuation = false;
  // A turn of this run ended: the next one is prepared first (the session may compact).
  let turnEnded = false;
  outer: for (;;) {
    let moreToolCalls = true;
    while (moreToolCalls || pending.length > 0) {
      if (turnEnded) {
        await config.prepareNextTurn?.();
        // As pi 1.6: a steer sent while the turn was prepared (a compaction) joins this turn.
        if (pending.length === 0) {
          pending = config.takeSteering();
          pendingFrom = "steering";
        }
      }
      turnEnded = true;
      emit({ type: "turn_start" });
      // What changed of the prompt and tools goes first in the turn; a run whose prompts bring
      // their own declaration is told of later changes (a before_agent_start handler's) after them.
      const declaredAhead = pending.some((m) => m.role === "system");
      if (!declaredAhead) await declareSystem(context, runMessages, config, emit);
      if (pending.length > 0) {
        config.onInject?.(pending, pendingFrom);
        for (const queued of pending) {
          if (pendingFrom !== "prompt" && !prompts.includes(queued)) config.onDeliver?.(queued);
          emit({ type: "message_start", message: queued });
          const message = await finalize(queued, config);
          context.push(message);
          runMessages.push(message);
          emit({ type: "message_end", message });
        }
        pending = [];
      }
      if (declaredAhead) await declareSystem(context, runMessages, config, emit);

      const assistant = await streamAssistant(context, config, emit);
      context.push(assistant);
      runMessages.push(assistant);
      if (assistant.stopReason === "error" || assistant.stopReason === "aborted") {
        // Its handlers run (they may write entries); a request after an error or abort never follows.
        await config.finishTurn?.({ message: assistant, toolResults: [] });
        emit({ type: "turn_end", message: assistant, toolResults: [] });
        break outer;
      }

      const calls = assistant.content.filter((c): c is ToolCall => c.type === "toolCall");
      const batch =
        calls.length === 0
          ? { messages: [], terminate: false }
          : assistant.stopReason === "length"
            ? await failCutOffCalls(calls, config, emit)
            : await executeToolCalls(assistant, calls, context, config, emit);
      const toolResults = batch.messages;
      for (const result of toolResults) {
        context.push(result);
        runMessages.push(result);
      }
      const asked = (await config.finishTurn?.({ message: assistant, toolResults })) ?? false;
      emit({ type: "turn_end", message: assistant, toolResults });
      // A batch whose every tool asked to terminate ends the run (pi's `terminate`).
      if (batch.terminate) break outer;
      moreToolCalls = calls.length > 0;
      pending = config.takeSteering();
      pendingFrom = "steering";
      // Natural work satisfies a continuation; otherwise it waits for the follow-ups below.
      explicitContinuation = asked && !moreToolCalls && pending.length === 0;
    }
    if (config.signal.aborted) break;
    const followUps = config.takeFollowUps();
    if (followUps.length > 0) {
      explicitContinuation = false;
      pending = followUps;
      pendingFrom = "followUp";
      continue;
    }
    // pi 1.6: no natural request came, so the continuation is one turn on the context as it is
    // (the next round's first turn runs with nothing pending).
    if (!explicitContinuation) break;
    explicitContinuation = false;
  }

  // The session layer decides whether a retry follows (and says so in willRetry).
  emit({ type: "agent_end", messages: runMessages, willRetry: false });
  return runMessages;
}

/** Put the session's declaration of a changed prompt or tool set into the context, with its events. */
async function declareSystem(context: AgentMessage[], runMessages: AgentMessage[], config: LoopConfig, emit: Emit) {
  const declared = config.declareSystem?.(context);
  if (!declared) return;
  emit({ type: "message_start", message: declared });
  const message = await finalize(declared, config);
  context.push(message);
  runMessages.push(message);
  emit({ type: "message_end", message });
}

/** An assistant message for a request that never started (aborted before the call). */
function syntheticMessage(model: Model, stopReason: "aborted" | "error", errorMessage: string): AssistantMessage {
  return {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: emptyUsage(),
    stopReason,
    errorMessage,
    timestamp: Date.now(),
  };
}

/**
 * One model call with its events. The `afterResponse` hook may ask for the same
 * request again (a retry, or a retry after compaction); the loop itself never retries.
 */
async function streamAssistant(context: AgentMessage[], config: LoopConfig, emit: Emit): Promise<AssistantMessage> {
  for (let repeats = 0; ; repeats++) {
    const model = config.model();
    if (config.signal.aborted) {
      // pi 1.6 resolves a request's credentials with the run's signal first, whose
      // `throwIfAborted()` ends a request the abort kept from starting with this text.
      const aborted = syntheticMessage(model, "aborted", "This operation was aborted");
      emit({ type: "message_start", message: aborted });
      emit({ type: "message_end", message: aborted });
      return aborted;
    }
    const { message, failure } = await streamOnce(context, config, emit);
    const decision = config.afterResponse
      ? await config.afterResponse({ message, failure, repeats, signal: config.signal })
      : "accept";
    if (decision === "accept") return message;
  }
}

/** A message as `finalizeMessage` leaves it; a replacement must keep the role. */
async function finalize<M extends AgentMessage>(message: M, config: LoopConfig): Promise<M> {
  if (!config.finalizeMessage) return message;
  const replaced = await config.finalizeMessage(message);
  return replaced && replaced.role === message.role ? (replaced as M) : message;
}

/** The context as hooks see it. */
function view(context: AgentMessage[], config: LoopConfig): AgentContextView {
  return { systemPrompt: config.systemPrompt(), messages: context, tools: config.tools() };
}

type Failure = ResponseFailure | null;

/**
 * Where the transcript's system messages stand among the messages sent (each before the
 * one at `at`), when they are what the request carries: a leading one, and together the
 * prompt and the tools being sent. Otherwise (an extension's prompt for this run, a
 * `context` handler's own list) undefined, and providers send the prompt folded as before.
 */
function placeSystemMessages(
  transcript: readonly AgentMessage[],
  toLlm: (messages: AgentMessage[]) => LlmMessage[],
  systemPrompt: string,
  specs: readonly ToolSpec[],
): PlacedSystemMessage[] | undefined {
  if (transcript[0]?.role !== "system") return undefined;
  const system = transcript.filter((m): m is SystemMessage => m.role === "system");
  if (getCurrentSystemPrompt(system) !== systemPrompt) return undefined;
  const tools = new Set(getCurrentTools(system).map((t) => t.name));
  if (tools.size !== specs.length || specs.some((t) => !tools.has(t.name))) return undefined;
  const placed: PlacedSystemMessage[] = [];
  transcript.forEach((m, i) => {
    if (m.role === "system") placed.push({ at: i === 0 ? 0 : toLlm(transcript.slice(0, i)).length, message: m });
  });
  return placed;
}

/**
 * Stream one response. `message_start` goes out when the provider accepted the
 * request; a failed attempt that will be retried is still closed with `message_end`
 * so clients never see a dangling message, but it is not added to the context.
 */
async function streamOnce(
  context: AgentMessage[],
  config: LoopConfig,
  emit: Emit,
): Promise<{ message: AssistantMessage; failure: Failure }> {
  let model = config.model();
  const tools = config.tools();
  let specs: ToolSpec[] = tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
  let systemPrompt = config.systemPrompt();
  let visible = config.transformContext
    ? await safeTransform(config.transformContext, context, config.signal)
    : context;
  // The transcript with its system messages where they stand, for providers that send them there.
  let transcript: readonly { role: string }[] = visible;
  const full = config.transformFullContext?.();
  if (full) {
    // The request as providers send it: the prompt and tools as one leading system message, then the conversation.
    const head = createInitialSystemMessage(systemPrompt, specs);
    const conversation = visible.filter((m) => m.role !== "system");
    const sent = await full(head ? [head, ...conversation] : conversation).catch(() => undefined);
    if (sent) {
      // Sent as returned: the prompt and the declared tools are what its system messages say.
      const all = sent as unknown as { role: string }[];
      systemPrompt = getCurrentSystemPrompt(all);
      specs = getCurrentTools(all).map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
      visible = sent.filter((m) => m.role !== "system");
      transcript = sent;
    }
  }
  const systemMessages = placeSystemMessages(transcript as AgentMessage[], config.toLlm, systemPrompt, specs);
  let started = false;
  let final: AssistantMessage | null = null;
  let failure: Failure = null;
  let thinkingLevel = config.thinkingLevel();
  const requested = performance.now();
  if (config.routeRequest) {
    try {
      const routed = await config.routeRequest({ model, thinkingLevel, messages: visible, signal: config.signal });
      if (routed) ({ model, thinkingLevel } = routed);
    } catch (err) {
      // As pi 1.6: a request whose routing failed ends with an error response naming the
      // selection, one empty text block and no thinking level (nothing was asked of a model).
      let failed: AssistantMessage = {
        ...syntheticMessage(model, "error", errorText(err)),
        content: [{ type: "text", text: "" }],
      };
      emit({ type: "message_start", message: structuredClone(failed) });
      failed = await finalize(failed, config);
      emit({ type: "message_end", message: failed });
      return { message: failed, failure: { retryable: false, contextOverflow: false } };
    }
  }

  const streamEvents = config.streamEvents?.(model);
  const events: AsyncIterable<ProviderEvent> = config.provider(model).stream({
    model,
    systemPrompt,
    messages: config.toLlm(visible),
    tools: specs,
    ...(systemMessages ? { systemMessages } : {}),
    thinkingLevel,
    apiKey: config.apiKey(model),
    signal: config.signal,
    ...(config.sessionId?.() ? { sessionId: config.sessionId() } : {}),
    ...(config.onPayload ? { onPayload: config.onPayload } : {}),
    ...(config.onResponse ? { onResponse: config.onResponse } : {}),
    ...(streamEvents ? { onStreamEvent: streamEvents } : {}),
  });

  // A provider can hand over thousands of events in one read (or the faux one with no
  // delay, in none): without a turn of the event loop now and then, stdin is not read and
  // a supervisor's presence ping waits for the whole reply (seen: 2.1 s, and 5 agents
  // SIGKILLed as unresponsive).
  // And a reader that is behind (a full stdout pipe) holds the next event back: otherwise
  // the reply piles up in memory and a command's answer waits behind the pile (seen: p50
  // 111-195 ms for get_state).
  let slice = performance.now();
  for await (const event of events) {
    const behind = config.signal.aborted ? undefined : config.pace?.();
    if (behind) {
      await untilSettledOrAborted(behind, config.signal);
      slice = performance.now();
    } else if (performance.now() - slice > YIELD_AFTER_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      slice = performance.now();
    }
    switch (event.type) {
      case "start":
        started = true;
        emit({ type: "message_start", message: pending(event.partial) });
        break;
      case "done":
        final = event.message;
        break;
      case "error":
        final = event.message;
        failure =
          event.message.stopReason === "aborted"
            ? null
            : {
                retryable: event.retryable,
                contextOverflow: event.contextOverflow ?? false,
                retryHint: event.retryHint,
              };
        break;
      default:
        if (!started) {
          started = true;
          emit({ type: "message_start", message: pending(event.partial) });
        }
        emit({ type: "message_update", message: event.partial, assistantMessageEvent: event });
    }
  }
  if (!final) final = syntheticMessage(model, "error", "provider stream ended without a final message");
  // pi 1.6: how long the response took, and the thinking level it was asked with.
  final.durationMs = Math.round(performance.now() - requested);
  final.thinkingLevel = thinkingLevel;
  // A request that failed before streaming starts and ends with its error, as in pi 1.6.
  if (!started) emit({ type: "message_start", message: structuredClone(final) });
  final = await finalize(final, config);
  emit({ type: "message_end", message: final });
  return { message: final, failure };
}

/**
 * The assistant message as `message_start` shows it (pi 1.6): nothing streamed yet, no
 * usage counted, `stopReason: "pending"`. A copy: the live object keeps changing.
 */
function pending(message: AssistantMessage): AssistantMessage {
  const { responseId: _id, errorMessage: _error, rawStopReason: _raw, ...rest } = structuredClone(message);
  return { ...rest, content: [], usage: emptyUsage(), stopReason: "pending" };
}

async function safeTransform(
  transform: NonNullable<LoopConfig["transformContext"]>,
  messages: AgentMessage[],
  signal: AbortSignal,
): Promise<AgentMessage[]> {
  try {
    return await transform(messages, signal);
  } catch {
    return messages;
  }
}

interface PreparedCall {
  call: ToolCall;
  tool?: AgentTool;
  args: Record<string, unknown>;
  /** Set when the call must not run: its error text. */
  rejected?: string;
}

/**
 * Validate every call in order, run the valid ones in parallel, and return the
 * results in call order, and whether every result asked to end the run. A failure
 * of one call never stops the others.
 */
async function executeToolCalls(
  assistant: AssistantMessage,
  calls: ToolCall[],
  context: AgentMessage[],
  config: LoopConfig,
  emit: Emit,
): Promise<{ messages: ToolResultMessage[]; terminate: boolean }> {
  const tools = config.tools();
  const run = async (p: PreparedCall) => {
    const outcome = await runTool(assistant, p, context, config, emit);
    emit({
      type: "tool_execution_end",
      toolCallId: p.call.id,
      toolName: p.call.name,
      result: outcome.result,
      isError: outcome.isError,
      ...(outcome.durationMs !== undefined ? { durationMs: outcome.durationMs } : {}),
    });
    return outcome;
  };
  const announceAndPrepare = async (call: ToolCall) => {
    emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments });
    return prepareCall(assistant, call, tools, context, config);
  };
  const messages: ToolResultMessage[] = [];
  const outcomes: ToolOutcome[] = [];
  // As pi: one tool asking for "sequential" makes the whole batch sequential: each call
  // is announced, checked, run and its result message sent before the next is announced.
  if (calls.some((c) => tools.find((t) => t.name === c.name)?.executionMode === "sequential")) {
    for (const call of calls) {
      const p = await announceAndPrepare(call);
      const outcome = await run(p);
      outcomes.push(outcome);
      messages.push(await resultMessage(p, outcome, config, emit));
    }
    return { messages, terminate: outcomes.every((o) => o.result.terminate === true) };
  }
  // Parallel (the default): each call is announced, then checked (`beforeToolCall` sees it
  // announced), in call order; the valid ones run at once; result messages follow in call order.
  const prepared: PreparedCall[] = [];
  for (const call of calls) prepared.push(await announceAndPrepare(call));
  outcomes.push(...(await Promise.all(prepared.map(run))));
  for (const [i, p] of prepared.entries()) messages.push(await resultMessage(p, outcomes[i], config, emit));
  return { messages, terminate: outcomes.every((o) => o.result.terminate === true) };
}

/**
 * The calls of a reply the output token limit cut off, none of them run (pi 1.6's
 * `failToolCallsFromTruncatedMessage`): any of them may carry arguments the model never
 * finished, even ones that parse and validate, so each gets pi's error result, with no
 * check and no hook.
 */
async function failCutOffCalls(
  calls: ToolCall[],
  config: LoopConfig,
  emit: Emit,
): Promise<{ messages: ToolResultMessage[]; terminate: boolean }> {
  const messages: ToolResultMessage[] = [];
  for (const call of calls) {
    emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments });
    const text =
      `Tool call "${call.name}" was not executed: the response hit the output token limit, so its arguments ` +
      "may be truncated. Re-issue the tool call with complete arguments.";
    const outcome: ToolOutcome = { result: { ...textResult(text), details: {} }, isError: true };
    emit({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, ...outcome });
    messages.push(await resultMessage({ call, args: call.arguments }, outcome, config, emit));
  }
  return { messages, terminate: false };
}

/** The tool result message of a finished call, through `finalizeMessage`, with its events. */
async function resultMessage(
  p: PreparedCall,
  outcome: ToolOutcome,
  config: LoopConfig,
  emit: Emit,
): Promise<ToolResultMessage> {
  const { result, isError, durationMs } = outcome;
  const built: ToolResultMessage = {
    role: "toolResult",
    toolCallId: p.call.id,
    toolName: p.call.name,
    content: result.content,
    ...(result.details !== undefined ? { details: result.details } : {}),
    isError,
    ...(durationMs !== undefined ? { durationMs } : {}),
    timestamp: Date.now(),
  };
  emit({ type: "message_start", message: built });
  const message = await finalize(built, config);
  emit({ type: "message_end", message });
  return message;
}

async function prepareCall(
  assistant: AssistantMessage,
  call: ToolCall,
  tools: AgentTool[],
  context: AgentMessage[],
  config: LoopConfig,
): Promise<PreparedCall> {
  // As pi 1.6: once the run is aborted, a call is neither checked nor shown to the hooks.
  if (config.signal.aborted) return { call, args: call.arguments, rejected: ABORTED };
  const tool = tools.find((t) => t.name === call.name);
  // pi 1.6's words, not a list of the tools: the request declares them already.
  if (!tool) return { call, args: call.arguments, rejected: `Tool ${call.name} not found` };
  let prepared: unknown = call.arguments;
  if (tool.prepareArguments) {
    // As pi: a prepareArguments that throws fails the call with its message.
    try {
      prepared = tool.prepareArguments(prepared);
    } catch (error) {
      return { call, tool, args: call.arguments, rejected: error instanceof Error ? error.message : String(error) };
    }
  }
  // As pi 1.6: arguments that were no JSON object fail after prepareArguments, with the text.
  if (call.argumentsError !== undefined)
    return {
      call,
      tool,
      args: call.arguments,
      rejected: `Invalid arguments for tool "${call.name}": ${call.argumentsError}`,
    };
  const checked = checkToolArguments(call.name, tool.parameters, prepared);
  if (!checked.ok) return { call, tool, args: call.arguments, rejected: checked.text };
  let args = checked.value;
  if (config.beforeToolCall) {
    const decision = await config.beforeToolCall({
      assistantMessage: assistant,
      toolCall: call,
      args,
      context: view(context, config),
      signal: config.signal,
    });
    if (config.signal.aborted) return { call, tool, args, rejected: ABORTED };
    if (decision?.block) {
      return { call, tool, args, rejected: decision.reason ?? `Tool call "${call.name}" was blocked.` };
    }
    if (decision?.args && decision.revalidate === false) {
      args = decision.args;
    } else if (decision?.args) {
      const rechecked = checker(tool.parameters)(decision.args);
      if (!rechecked.ok) {
        return { call, tool, args, rejected: `Changed arguments are invalid: ${rechecked.errors.join("; ")}` };
      }
      args = rechecked.value as Record<string, unknown>;
    }
  }
  return { call, tool, args };
}

/** A call's result, and how long its tool's execute() took (absent when it did not run), as pi 1.6 reports it. */
interface ToolOutcome {
  result: ToolResult;
  isError: boolean;
  durationMs?: number;
}

async function runTool(
  assistant: AssistantMessage,
  p: PreparedCall,
  context: AgentMessage[],
  config: LoopConfig,
  emit: Emit,
  parentToolCallId?: string,
): Promise<ToolOutcome> {
  // As pi 1.6: a call that does not run (rejected, or aborted before it started) gets its
  // error result without `afterToolCall` (no `tool_result` handler sees it); pi's error
  // results carry empty details, which the session file keeps.
  if (p.rejected !== undefined || !p.tool) {
    return { result: { ...textResult(p.rejected ?? "tool unavailable"), details: {} }, isError: true };
  }
  if (config.signal.aborted) return { result: { ...textResult(ABORTED), details: {} }, isError: true };
  let outcome: ToolOutcome;
  const started = performance.now();
  try {
    const result = await p.tool.execute(p.args as never, {
      cwd: config.cwd,
      toolCallId: p.call.id,
      signal: config.signal,
      model: config.model(),
      onUpdate: (partial) =>
        emit({
          type: "tool_execution_update",
          toolCallId: p.call.id,
          toolName: p.call.name,
          args: p.args,
          partialResult: partial,
          ...(parentToolCallId ? { parentToolCallId } : {}),
        }),
      tools: callable(config),
      executeTool: nestedCalls(assistant, p.call.id, context, config, emit),
    });
    // As pi 1.6: a tool may report a failure in its result (bash's non-zero exit) instead of throwing.
    outcome = { result, isError: result.isError === true };
  } catch (err) {
    outcome = { result: { ...textResult(errorText(err)), details: {} }, isError: true };
  }
  const durationMs = Math.round(performance.now() - started);
  if (config.afterToolCall) {
    const patch = await config.afterToolCall({
      assistantMessage: assistant,
      toolCall: p.call,
      args: p.args,
      result: outcome.result,
      isError: outcome.isError,
      context: view(context, config),
      signal: config.signal,
    });
    if (patch) outcome = { result: patch.result ?? outcome.result, isError: patch.isError ?? outcome.isError };
  }
  return { ...outcome, durationMs };
}

/** The tools a tool may call: pi 1.6's callable ones (active direct and every deferred), less none. */
function callable(config: LoopConfig): AgentTool[] {
  return config.callableTools?.() ?? config.tools();
}

/**
 * `executeTool` for the call `parentId`, as pi 1.6 runs a tool's nested calls: each gets the
 * id `<parentId>/<n>`, its own `tool_execution_start` / `_end` naming the parent, the same
 * validation and `beforeToolCall` / `afterToolCall` hooks as a call of the model, and runs
 * at once (a script decides what runs in parallel). A failure comes back as `isError`.
 */
function nestedCalls(
  assistant: AssistantMessage,
  parentId: string,
  context: AgentMessage[],
  config: LoopConfig,
  emit: Emit,
): (name: string, args: unknown, options?: { signal?: AbortSignal }) => Promise<NestedToolOutcome> {
  let next = 1;
  return async (name, args, options) => {
    const call: ToolCall = {
      type: "toolCall",
      id: `${parentId}/${next++}`,
      name,
      arguments:
        typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {},
    };
    const scoped = options?.signal ? { ...config, signal: options.signal } : config;
    emit({
      type: "tool_execution_start",
      toolCallId: call.id,
      toolName: name,
      args: call.arguments,
      parentToolCallId: parentId,
    });
    const p = await prepareCall(assistant, call, callable(config), context, scoped);
    const outcome = await runTool(assistant, p, context, scoped, emit, parentId);
    emit({
      type: "tool_execution_end",
      toolCallId: call.id,
      toolName: name,
      result: outcome.result,
      isError: outcome.isError,
      ...(outcome.durationMs !== undefined ? { durationMs: outcome.durationMs } : {}),
      parentToolCallId: parentId,
    });
    return { toolCall: { ...call, arguments: p.args as Record<string, unknown> }, ...outcome };
  };
}

/** pi 1.6's result text for a call the abort kept from running. */
const ABORTED = "Operation aborted";

function textResult(text: string): ToolResult {
  return { content: [{ type: "text", text }] };
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Wait for `promise`, or less when `signal` aborts first (an abort must not wait for a reader). */
function untilSettledOrAborted(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    signal.addEventListener("abort", done, { once: true });
    promise.then(done, done);
  });
}
