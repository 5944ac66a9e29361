// Run with pi 1.6.0's Node: what pi's own package manager loads of one `packages` entry.
// argv[2]: JSON [entry, agentDir]; prints {extensions, skills, prompts, themes} (enabled paths).
import { join } from "node:path";

const [entry, agentDir, pkg] = JSON.parse(process.argv[2]);
const { DefaultPackageManager, SettingsManager } = await import(join(pkg, "dist/index.js"));
const settingsManager = SettingsManager.inMemory({ packages: [entry] });
const resolved = await new DefaultPackageManager({ cwd: agentDir, agentDir, settingsManager }).resolve();
const pick = (list) => list.filter((e) => e.enabled && e.metadata.origin === "package").map((e) => e.path);
process.stdout.write(
  JSON.stringify({
    extensions: pick(resolved.extensions),
    skills: pick(resolved.skills),
    prompts: pick(resolved.prompts),
    themes: pick(resolved.themes),
  }),
);
