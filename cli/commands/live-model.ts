/**
 * The model an agent runs, named one way (`provider/id`) by `list`, `status` and the TUI.
 * The supervisor's info carries what the worker last reported at a ping (kept in the
 * registry as `reportedModel`). A running worker is asked again (`get_state`), so a
 * model switched since the last ping shows at once; a stopped agent from a registry
 * older than `reportedModel` is read from its session file (its last model there).
 */
import { readFile } from "node:fs/promises";
import type { IpcClient } from "../../ipc/client.js";
import { RUNNING_STATUSES, type AgentInfo } from "../../shared/schema/agent.js";
import { checkSessionEntry } from "../../shared/schema/session.js";

/** A model's provider and id. */
export interface ModelRef {
  provider: string;
  id: string;
}

/**
 * The last model a session file records: its last `model_change` entry or assistant
 * reply. Pure; null when the text names none. Lines that do not parse or do not match
 * their entry's schema (shared/schema/session.ts) are skipped, as the session loader skips them.
 */
export function lastModelInSession(text: string): ModelRef | null {
  const lines = text.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    // Most lines are neither: skip them without parsing.
    if (!line.includes('"model_change"') && !line.includes('"assistant"')) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    const checked = checkSessionEntry(value);
    if (!checked.ok) continue;
    const entry = checked.value;
    if (entry.type === "model_change") return { provider: entry.provider, id: entry.modelId };
    if (entry.type === "message" && entry.message.role === "assistant")
      return { provider: entry.message.provider, id: entry.message.model };
  }
  return null;
}

async function runningModel(client: IpcClient, agent: string): Promise<ModelRef | null> {
  try {
    const state = await client.rpc(agent, { type: "get_state" }, { timeoutMs: 1000 });
    const model = state.success ? state.data.model : undefined;
    if (model) return { provider: model.provider, id: model.id };
  } catch {
    // gone or slow: what the session file or the request says
  }
  return null;
}

async function sessionModel(file: string | null): Promise<ModelRef | null> {
  if (!file) return null;
  try {
    return lastModelInSession(await readFile(file, "utf8"));
  } catch {
    return null;
  }
}

/**
 * The agent with `provider` and `model` (the id) set to the model it runs or last ran;
 * unchanged when neither the worker nor its session file says.
 */
export async function withResolvedModel(client: IpcClient, agent: AgentInfo): Promise<AgentInfo> {
  const live = RUNNING_STATUSES.has(agent.status) ? await runningModel(client, agent.name) : null;
  const model = live ?? (agent.reportedModel ? null : await sessionModel(agent.sessionFile));
  return model ? { ...agent, provider: model.provider, model: model.id } : agent;
}
