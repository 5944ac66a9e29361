/**
 * models.json's `compat` accepts what pi 1.6.0's compat schema accepts: the same fields
 * (checked against pi-ai 1.6.0's own `ProviderCompatSchema` where test/upstream has it),
 * each typed, unknown ones let through; and the catalogue carries every model's compat.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ModelCompatSchema } from "../../worker/providers/compat-schema.js";
import { BUILT_IN_MODELS, loadCatalogue } from "../../worker/providers/models.js";
import { tempDir } from "../support/rpc-worker.js";

const PI_AI = join(import.meta.dirname, "../upstream/node_modules/@earendil-works/pi-ai");
const SCHEMA = join(PI_AI, "dist/providers/compat-schema.js");

const dirs: { cleanup: () => void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

function load(compat: unknown) {
  const dir = tempDir();
  dirs.push(dir);
  const file = join(dir.path, "models.json");
  const models = [{ id: "m", compat }];
  writeFileSync(file, JSON.stringify({ providers: { p: { baseUrl: "http://h", api: "anthropic-messages", models } } }));
  return () => loadCatalogue(file).models.find((m) => m.provider === "p")!;
}

describe("models.json compat", () => {
  it.skipIf(!existsSync(SCHEMA))("has every field of pi 1.6.0's compat schema", async () => {
    const upstream = (await import(SCHEMA)) as { ProviderCompatSchema: { properties: Record<string, unknown> } };
    expect(Object.keys(ModelCompatSchema.properties).sort()).toEqual(
      Object.keys(upstream.ProviderCompatSchema.properties).sort(),
    );
  });

  it("keeps the mid-conversation fields and ones it does not know", () => {
    const compat = {
      supportsMidConvoSystemMessages: true,
      supportsMidConvoToolChanges: true,
      supportsMidConvoEffort: true,
      allowedFallbackModels: [
        { provider: "anthropic", model: "x", cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 } },
      ],
      somethingNewer: 1,
    };
    expect(load(compat)().compat).toEqual(compat);
  });

  it.each([
    ["supportsMidConvoEffort", "yes"],
    ["promptCacheKeyMode", "sometimes"],
    ["allowedFallbackModels", [{ provider: "", model: "x", cost: {} }]],
  ])("refuses a mistyped %s, naming the file and the field", (field, value) => {
    expect(load({ [field]: value })).toThrow(new RegExp(`models\\.json: /providers/p/models/0/compat/${field}`));
  });

  it("the catalogue carries pi 1.6.0's compat of each model", () => {
    const opus = BUILT_IN_MODELS.find((m) => m.id === "claude-opus-5-5")!;
    expect(opus.compat).toMatchObject({
      forceAdaptiveThinking: true,
      supportsMidConvoSystemMessages: true,
      supportsMidConvoToolChanges: true,
      supportsMidConvoEffort: true,
      supportsStrictTools: true,
    });
    const sol = BUILT_IN_MODELS.find((m) => m.id === "gpt-6.2-sol")!;
    expect(sol.compat).toMatchObject({ supportsMidConvoSystemMessages: true, supportsAdditionalTools: true });
  });
});
