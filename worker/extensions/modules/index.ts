/**
 * The module names extensions written for pi import, mapped to module objects of
 * ours (jiti's `virtualModules`): pi's four packages and both typebox names, each
 * with the subpaths pi maps. As in pi, these names always resolve here; every other
 * import resolves from the extension's own folder (its `node_modules` first).
 */
import type { ExtensionHost } from "../host.js";
import { piAiModule } from "./ai.js";
import { piCodingAgentModule } from "./coding-agent.js";
import { piTuiModule } from "./tui.js";

/** The module objects, built once per worker (typebox is imported only when extensions load). */
export async function extensionModules(host: () => ExtensionHost): Promise<Record<string, unknown>> {
  const [typebox, compile, value] = await Promise.all([
    import("typebox"),
    import("typebox/compile"),
    import("typebox/value"),
  ]);
  return {
    "@mariozechner/pi-coding-agent": piCodingAgentModule(),
    "@mariozechner/pi-ai": piAiModule(host),
    // Extensions import only types from it; its values are the agent's, which extensions do not construct.
    "@mariozechner/pi-agent-core": {},
    "@mariozechner/pi-tui": piTuiModule(),
    typebox,
    "typebox/compile": compile,
    "typebox/value": value,
    "@sinclair/typebox": typebox,
    "@sinclair/typebox/compile": compile,
    "@sinclair/typebox/value": value,
  };
}
