// Bundles the bins into dist/ with esbuild. One bundle per bin (plus shared chunks)
// because Node's ESM loader pays per file: the unbundled worker started in ~300 ms,
// the bundle in ~80 ms. Model SDKs, jiti and the UI libraries stay external and are
// imported lazily, so a start that does not need them never loads them.
import { build } from "esbuild";
import { chmodSync, existsSync, renameSync, rmSync } from "node:fs";

const entries = ["cli/pi.ts", "cli/pi-orch.ts"].filter((e) => existsSync(e));
// Build beside dist/ and swap it in, so a test run using dist/ never sees it half written.
const staging = `dist.staging-${process.pid}`;
rmSync(staging, { recursive: true, force: true });
await build({
  entryPoints: entries,
  outdir: staging,
  outbase: ".",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: true,
  // Less to parse at every start; names stay, so stack traces still read.
  minifyWhitespace: true,
  minifySyntax: true,
  chunkNames: "chunks/[name]-[hash]",
  external: ["@anthropic-ai/sdk", "openai", "jiti", "ink", "react", "react/*", "ink-*", "yoga-*", "bullmq"],
  banner: {
    js: "import { createRequire as __piCreateRequire } from 'node:module'; const require = __piCreateRequire(import.meta.url);",
  },
  logLevel: "warning",
});
for (const entry of entries) chmodSync(`${staging}/${entry.replace(/\.ts$/, ".js")}`, 0o755);
const old = `dist.old-${process.pid}`;
if (existsSync("dist")) renameSync("dist", old);
renameSync(staging, "dist");
rmSync(old, { recursive: true, force: true });
console.log(`built ${entries.map((e) => "dist/" + e.replace(/\.ts$/, ".js")).join(", ")}`);
