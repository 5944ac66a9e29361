/**
 * The module names extensions written for pi import, mapped to module objects of
 * ours (jiti's `virtualModules`): pi's four packages under both of their scopes
 * (`@earendil-works/*` since pi 0.74, `@mariozechner/*` before), pi-ai's subpaths, and
 * both typebox names. As in pi, these names always resolve here; every other import
 * resolves from the extension's own folder (its `node_modules` first).
 */
import * as typebox from "typebox";
import * as compile from "typebox/compile";
import * as value from "typebox/value";
import type { ExtensionHost } from "../host.js";
import { piAiModule } from "./ai.js";
import { piCodingAgentModule } from "./coding-agent.js";
import { piTuiModule } from "./tui.js";

/** The scopes pi's packages were published under, newest first. */
export const PI_SCOPES = ["@earendil-works", "@mariozechner"] as const;

/**
 * pi-ai's subpaths an extension may import, each served by the whole of our pi-ai (a
 * superset of what pi's subpath holds): the ones pi's own loader maps (compat, models,
 * oauth, providers/all) and those of its package exports whose members we have.
 */
export const PI_AI_SUBPATHS = [
  "compat",
  "models",
  "oauth",
  "providers/all",
  "session-resources",
  "utils/uuid",
  "utils/transcript",
  "utils/text",
  "utils/event-stream",
  "utils/string-enum",
  "utils/json-parse",
] as const;

/**
 * The module objects, built once per worker; `home` is its agent directory. This module (and
 * typebox's whole index with it) is imported only when extensions load.
 */
export async function extensionModules(host: () => ExtensionHost, home: string): Promise<Record<string, unknown>> {
  const codingAgent = piCodingAgentModule(home);
  const ai = piAiModule(host, typebox.Type);
  const tui = piTuiModule();
  const modules: Record<string, unknown> = {};
  for (const scope of PI_SCOPES) {
    modules[`${scope}/pi-coding-agent`] = codingAgent;
    modules[`${scope}/pi-ai`] = ai;
    for (const sub of PI_AI_SUBPATHS) modules[`${scope}/pi-ai/${sub}`] = ai;
    // Extensions import only types from it; its values are the agent's, which extensions do not construct.
    modules[`${scope}/pi-agent-core`] = {};
    modules[`${scope}/pi-tui`] = tui;
  }
  return {
    ...modules,
    typebox,
    "typebox/compile": compile,
    "typebox/value": value,
    "@sinclair/typebox": typebox,
    "@sinclair/typebox/compile": compile,
    "@sinclair/typebox/value": value,
  };
}
