#!/usr/bin/env node
/**
 * Regenerate worker/providers/catalogue.json, the built-in `anthropic` and `openai` models,
 * from upstream pi 1.6.0's own catalogue (`@earendil-works/pi-ai`
 * dist/providers/data/{anthropic,openai}.json, installed by `npm run upstream` in
 * test/upstream/). Facts only: ids, names, apis, prices, windows, output limits, the
 * thinking-level map and the model's whole `compat` (adaptive thinking, mid-conversation
 * system messages, tool changes and effort, strict tools, ...). Run after moving the upstream
 * reference: `node scripts/models-catalogue.mjs`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const upstream = join(root, "test/upstream/node_modules/@earendil-works");
const data = join(upstream, "pi-ai/dist/providers/data");
const version = JSON.parse(readFileSync(join(upstream, "pi-ai/package.json"), "utf8")).version;
const resolver = readFileSync(join(upstream, "pi-coding-agent/dist/core/model-resolver.js"), "utf8");

const models = [];
const defaults = {};
for (const provider of ["anthropic", "openai"]) {
  const file = JSON.parse(readFileSync(join(data, `${provider}.json`), "utf8"));
  for (const byKey of Object.values(file)) {
    for (const m of Object.values(byKey)) {
      if (m.type !== "chat") continue;
      models.push({
        id: m.id,
        name: m.name,
        api: m.api,
        provider: m.provider,
        baseUrl: m.baseUrl,
        reasoning: m.reasoning,
        input: m.input,
        cost: m.cost,
        contextWindow: m.contextWindow,
        maxTokens: m.maxTokens,
        ...(m.thinkingLevelMap ? { thinkingLevelMap: m.thinkingLevelMap } : {}),
        ...(m.compat && Object.keys(m.compat).length > 0 ? { compat: m.compat } : {}),
      });
    }
  }
  const match = new RegExp(`\\n\\s*"?${provider}"?: "([^"]+)"`).exec(resolver);
  if (!match) throw new Error(`no default model for ${provider} in pi-coding-agent's model-resolver.js`);
  defaults[provider] = match[1];
}
const out = {
  source: `@earendil-works/pi-ai@${version} dist/providers/data/{anthropic,openai}.json (chat models); defaults from pi-coding-agent's model-resolver.js`,
  defaults,
  models,
};
writeFileSync(join(root, "worker/providers/catalogue.json"), `${JSON.stringify(out, null, 2)}\n`);
console.log(`worker/providers/catalogue.json: ${models.length} models, defaults ${JSON.stringify(defaults)}`);
