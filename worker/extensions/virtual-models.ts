/**
 * pi 1.6's virtual models (docs/virtual-models.md): a model an extension registers with
 * `pi.registerVirtualModel`, listed and selectable like any other, whose `route()` picks a
 * physical model and thinking level for each request. The selection stays the virtual
 * model; each request, and the assistant message it gives, names the physical one. A
 * router's `state` is kept on the session branch as a custom entry, so it follows forks.
 */
import type { AgentMessage, AssistantMessage, Model, ThinkingLevel } from "../../shared/schema/messages.js";
import { clampThinkingLevel, THINKING_LEVELS } from "../../shared/schema/messages.js";
import type { SessionEntry } from "../../shared/schema/session.js";

/** The api of a virtual model's catalogue entry: a request for it fails unless routed first. */
export const VIRTUAL_MODEL_API = "pi-virtual";
/** The custom entry type that keeps router state on the session branch (pi's name). */
const VIRTUAL_MODEL_STATE_ENTRY = "pi.virtual-model-state";

/** Why a request is made, as the router is told. */
export type RouteReason = "user" | "continuation" | "retry" | "direct";

/** What `pi.registerVirtualModel` takes (pi's `VirtualModelDefinition`). */
export interface VirtualModelDefinition {
  provider: string;
  id: string;
  name?: string;
  thinkingLevels?: ThinkingLevel[];
  contextWindow?: number;
  maxTokens?: number;
  input?: ("text" | "image")[];
  route(request: Record<string, unknown>, ctx: unknown): unknown;
}

/** A virtual model and the extension that registered it. */
export interface RegisteredVirtualModel {
  path: string;
  definition: VirtualModelDefinition;
}

/** Whether a model (or an assistant message's api) is a virtual one. */
export function isVirtualModel(model: { api: string }): boolean {
  return model.api === VIRTUAL_MODEL_API;
}

/** The catalogue entry of a virtual model, as pi builds it. */
export function createVirtualModel(definition: VirtualModelDefinition): Model {
  const levels = definition.thinkingLevels ?? ["off"];
  const thinkingLevelMap: Record<string, string | null> = {};
  for (const level of THINKING_LEVELS) thinkingLevelMap[level] = levels.includes(level) ? level : null;
  return {
    id: definition.id,
    // As pi: a model registered without a name has none (clients show its id).
    name: definition.name as string,
    api: VIRTUAL_MODEL_API,
    provider: definition.provider,
    baseUrl: "",
    reasoning: levels.some((level) => level !== "off"),
    thinkingLevelMap,
    input: definition.input ?? ["text", "image"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: definition.contextWindow ?? 0,
    maxTokens: definition.maxTokens ?? 0,
  };
}

/**
 * The catalogue with the virtual models in it: each after its provider's physical models,
 * hiding a physical model of the same id. Pure.
 */
export function withVirtualModels(models: readonly Model[], virtual: readonly RegisteredVirtualModel[]): Model[] {
  const entries = virtual.map((v) => createVirtualModel(v.definition));
  const hidden = (m: Model) => entries.some((v) => v.provider === m.provider && v.id === m.id);
  return [...models.filter((m) => !hidden(m)), ...entries];
}

/** The latest successful response in `messages`: its model is a physical one. */
function latestResponse(messages: readonly AgentMessage[]): AssistantMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "assistant" && m.stopReason !== "error" && m.stopReason !== "aborted") return m;
  }
  return undefined;
}

/** The router state the branch keeps for one virtual model (the latest), or undefined. */
function branchState(branch: readonly SessionEntry[], provider: string, modelId: string): unknown {
  for (let i = branch.length - 1; i >= 0; i--) {
    const entry = branch[i]!;
    if (entry.type !== "custom" || entry.customType !== VIRTUAL_MODEL_STATE_ENTRY) continue;
    const data = entry.data as { provider?: string; modelId?: string; state?: unknown } | undefined;
    if (data?.provider === provider && data.modelId === modelId) return data.state;
  }
  return undefined;
}

/** What routing one request needs of the session. */
export interface RouteSession {
  models(): Model[];
  /** Whether a physical model's provider has credentials. */
  hasKey(model: Model): boolean;
  branch(): SessionEntry[];
  appendEntry(customType: string, data: unknown): void;
  /** The context a router gets as its second argument (an extension's `ctx`). */
  context(): unknown;
}

/** One request to route. */
export interface RouteInput {
  model: Model;
  thinkingLevel: ThinkingLevel;
  reason: RouteReason;
  /** The conversation this request sends. */
  messages: readonly AgentMessage[];
  signal: AbortSignal;
  /** For a retry: the failed response, which `messages` no longer holds. */
  failed?: AssistantMessage;
}

/**
 * Ask the virtual model's router where this request goes, as pi's `resolveModel`: the
 * answer must be a physical model whose provider has a key; its thinking level is
 * clamped to it. A new `state` is stored on the branch before the request is sent
 * (`direct` requests have none). Throws with what went wrong, which ends the request
 * with an error response.
 */
export async function routeRequest(
  virtual: readonly RegisteredVirtualModel[],
  session: RouteSession,
  input: RouteInput,
): Promise<{ model: Model; thinkingLevel: ThinkingLevel }> {
  const { model } = input;
  const name = `Virtual model ${model.provider}/${model.id}`;
  const registered = virtual.find((v) => v.definition.provider === model.provider && v.definition.id === model.id);
  if (!registered) throw new Error(`${name} is not registered.`);
  const physical = (provider: string, id: string) =>
    session.models().find((m) => m.provider === provider && m.id === id && !isVirtualModel(m));
  const latest = latestResponse(input.messages);
  const previousModel = latest && physical(latest.provider, latest.model);
  const failedModel = input.failed && physical(input.failed.provider, input.failed.model);
  const direct = input.reason === "direct";
  const state = direct ? undefined : branchState(session.branch(), model.provider, model.id);
  const route = (await registered.definition.route(
    {
      model,
      thinkingLevel: input.thinkingLevel,
      reason: input.reason,
      ...(previousModel ? { previous: { model: previousModel, thinkingLevel: latest?.thinkingLevel } } : {}),
      ...(failedModel && input.failed
        ? { failed: { model: failedModel, thinkingLevel: input.failed.thinkingLevel, message: input.failed } }
        : {}),
      ...(state !== undefined ? { state } : {}),
      messages: input.messages,
      signal: input.signal,
    },
    session.context(),
  )) as { model?: Model; thinkingLevel?: ThinkingLevel; state?: unknown } | undefined;
  const chosen = route?.model;
  if (!chosen || typeof chosen.provider !== "string" || typeof chosen.id !== "string")
    throw new Error(`${name}: its route() returned no model; it must return { model, thinkingLevel }.`);
  const routed = `${name} routed to ${chosen.provider}/${chosen.id}`;
  const target = physical(chosen.provider, chosen.id);
  if (!target) throw new Error(`${routed}, which is not a physical model.`);
  if (!session.hasKey(target)) throw new Error(`${routed}, which has no credentials.`);
  // As pi: any returned object other than the current state is stored, before the request.
  if (!direct && route?.state !== undefined && route.state !== state)
    session.appendEntry(VIRTUAL_MODEL_STATE_ENTRY, { provider: model.provider, modelId: model.id, state: route.state });
  return { model: target, thinkingLevel: clampThinkingLevel(target, route?.thinkingLevel ?? "off") };
}

/**
 * Why a request of the agent loop is made, as pi tells the router: `retry` after a failed
 * response, `user` when a message the user wrote follows the last response (extension
 * messages do not start a turn), else `continuation`. Pure.
 */
export function routeReason(messages: readonly AgentMessage[], failed: AssistantMessage | undefined): RouteReason {
  if (failed) return "retry";
  let lastResponse = messages.length - 1;
  while (lastResponse >= 0 && messages[lastResponse]!.role !== "assistant") lastResponse--;
  return messages.slice(lastResponse + 1).some((m) => m.role === "user") ? "user" : "continuation";
}

/**
 * Whether a virtual model can be selected, as pi: under a provider of its own always; under
 * a provider with physical models only when that provider has credentials. Pure.
 */
export function virtualModelUsable(model: Model, models: readonly Model[], usable: (m: Model) => boolean): boolean {
  const physical = models.filter((m) => m.provider === model.provider && !isVirtualModel(m));
  return physical.length === 0 || physical.some(usable);
}
