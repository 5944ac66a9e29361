// Bundles the bins into dist/ with esbuild. One bundle per bin (plus shared chunks)
// because Node's ESM loader pays per file: the unbundled worker started in ~300 ms,
// the bundle in ~80 ms. Model SDKs, jiti and the UI libraries stay external and are
// imported lazily, so a start that does not need them never loads them.
import { build } from "esbuild";
import { schemaData, writeReport } from "./schema-data.mjs";
import { buildWorkerChunks, TYPEBOX_FILE } from "./worker-chunks.mjs";
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** TypeBox's modules our code imports, by the name of their namespace in its file (`index`: the package's own). */
const TYPEBOX_SUBPATHS = {
  index: "typebox",
  type: "typebox/type",
  compile: "typebox/compile",
  schema: "typebox/schema",
  format: "typebox/format",
  value: "typebox/value",
};

const entries = ["cli/pi.ts", "cli/pi-orch.ts"].filter((e) => existsSync(e));
const version = { __PI_ORCH_VERSION__: JSON.stringify(JSON.parse(readFileSync("package.json", "utf8")).version) };
// Build beside dist/ and swap it in, so a test run using dist/ never sees it half written.
const staging = `dist.staging-${process.pid}`;
/** What the worker's CommonJS files (its bundle, the TypeBox file) have in common: one bundled file each, for Node 20 and later. */
const WORKER_CJS = {
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  minifyWhitespace: true,
  minifySyntax: true,
};
rmSync(staging, { recursive: true, force: true });
// Packages left out of the bundles (loaded from node_modules at run time); the ESM bundle also leaves out bullmq.
const external = [
  "@anthropic-ai/sdk",
  "@modelcontextprotocol/sdk",
  "@modelcontextprotocol/sdk/*",
  "openai",
  "jiti",
  "ink",
  "react",
  "react/*",
  "ink-*",
  "yoga-*",
];
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
  define: version,
  external: [...external, "bullmq"],
  banner: {
    js: "import { createRequire as __piCreateRequire } from 'node:module'; const require = __piCreateRequire(import.meta.url);",
  },
  logLevel: "warning",
});
for (const entry of entries) chmodSync(`${staging}/${entry.replace(/\.ts$/, ".js")}`, 0o755);

// The codemode sandbox's worker thread, its own file: loaded only when a script runs, so
// the QuickJS engine (quickjs-wasi, from node_modules with its .wasm) never costs a start.
await build({
  entryPoints: ["worker/codemode/sandbox-thread.ts"],
  outfile: `${staging}/cli/codemode-thread.mjs`,
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: true,
  minifyWhitespace: true,
  minifySyntax: true,
  external: ["quickjs-wasi"],
  logLevel: "warning",
});

// Our modules' schemas as data, made here rather than by typebox's builders at every start
// (scripts/schema-data.mjs): a start from the code cache built them all and V8 optimised one of
// typebox's guards with TurboFan before the first answer.
const schemas = await schemaData({ external, define: version });
if (process.env.PI_ORCH_SCHEMA_DATA_REPORT) writeReport(process.env.PI_ORCH_SCHEMA_DATA_REPORT, schemas.report);
// The worker again as one CommonJS file, started by dist/cli/pi.cjs with a V8 code cache:
// the `pi` bin and the supervisor's default worker. It answers its first get_state in
// about half the time of the ESM bundle above, which stays for `import`ers. What a start
// does not import is in files of their own beside it, required on first use
// (scripts/worker-chunks.mjs).
const worker = await buildWorkerChunks(
  {
    entryPoints: ["cli/pi.ts"],
    plugins: [
      schemas.plugin,
      lazyBuiltins(["child_process", "crypto", "fs/promises", "os", "v8"]),
      withoutInteractive(),
      await lazyTypebox(),
      nativeImportFile(),
    ],
    outfile: `${staging}/cli/pi-worker.cjs`,
    ...WORKER_CJS,
    // Short local names: the file is read and kept in memory by every worker (900 KB
    // became 470 KB; start-up CPU -1.5 ms, RSS -0.6 MB). Exported and property names stay.
    // The source map beside it maps a stack trace's positions back to the TypeScript.
    sourcemap: true,
    minifyIdentifiers: true,
    external,
    // V8 drops a script's dynamic-import callback when it is loaded from a code cache
    // (Node 20: "A dynamic import callback was not specified"), so import() of the SDKs (the MCP one too),
    // typebox and jiti becomes require(): all of them ship CommonJS.
    supported: { "dynamic-import": false },
    // The launcher passes the bundle's own URL; import.meta does not exist in CommonJS.
    define: { "import.meta.url": "__piMetaUrl", "import.meta.dirname": "__dirname", ...version },
    // The file is the very text the launcher compiles, CommonJS wrapper included: wrapping
    // it at start-up made a second 0.9 MB copy of the source, kept alive by the script.
    banner: { js: "(function (exports, require, module, __filename, __dirname, __piMetaUrl) {" },
    footer: { js: "})" },
    logLevel: "warning",
    // Run by every start outside a sandbox (PI_ORCH_SANDBOX=off, the snapshot's warm-up).
  },
  [/^cli\/sandbox-exec\.ts$/],
  schemas.sources,
);
await buildTypeboxFile(`${staging}/cli/${TYPEBOX_FILE}`);
await build({
  entryPoints: ["cli/pi-launcher.ts"],
  // crypto and os serve only a start that has no cache for its node (shared/code-cache.ts);
  // child_process only one that starts a sandbox (the sandbox check imports it at the top):
  // loading it cost every other start ~3 ms of CPU.
  plugins: [lazyBuiltins(["child_process", "crypto", "os"])],
  outfile: `${staging}/cli/pi.cjs`,
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  banner: { js: "#!/usr/bin/env node" },
  logLevel: "warning",
});
chmodSync(`${staging}/cli/pi.cjs`, 0o755);
// The worker bundle's import() of node's built-ins for cached extension modules (worker/extensions/native-import.ts).
writeFileSync(`${staging}/cli/native-import.cjs`, '"use strict";\nmodule.exports = (id) => import(id);\n');
// The entry of the worker's startup snapshot (cli/pi-snapshot.ts): the supervisor builds a
// blob from it for the node it runs on, in the user's cache folder.
await build({
  entryPoints: ["cli/pi-snapshot.ts"],
  outfile: `${staging}/cli/pi-snapshot.cjs`,
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  logLevel: "warning",
});

const old = `dist.old-${process.pid}`;
if (existsSync("dist")) renameSync("dist", old);
renameSync(staging, "dist");
rmSync(old, { recursive: true, force: true });
// After the move: V8 keeps the file name a code cache was made under, so every stack
// trace of the worker would otherwise name the staging folder, which no longer exists.
await writeCodeCache("dist/cli/pi.cjs", {
  mode: "write",
  args: [],
  cache: "dist/cli/pi-worker.cjs.cache",
  what: "the worker's",
});
await writeJitiCache("dist/cli/pi.cjs");
console.log(
  `built ${entries.map((e) => `dist/${e.replace(/\.ts$/, ".js")}`).join(", ")}, dist/cli/pi.cjs (worker with its code cache, and jiti's; ${worker.chunks.length} files it loads on first use)`,
);

/**
 * Node's built-in modules that the worker imports at the top of a file but uses only
 * when a tool runs, a key is fetched or an id is made: each becomes an object whose
 * properties require the real module on first use. Loading them at start-up cost
 * ~35 of node's internal modules (crypto alone is 16, fs/promises brings readline).
 * Their export names are read here from this node; a name that a later node adds is
 * simply not reachable through the stand-in (tsc checks what the code uses).
 */
function lazyBuiltins(names) {
  const req = createRequire(import.meta.url);
  const filter = new RegExp(`^(node:)?(${names.map((n) => n.replace("/", "\\/")).join("|")})$`);
  return {
    name: "lazy-builtins",
    setup(b) {
      b.onResolve({ filter }, (args) =>
        // The stand-in's own require() is the real module.
        args.namespace === "lazy-builtin"
          ? { path: args.path, external: true }
          : { path: args.path.replace(/^node:/, ""), namespace: "lazy-builtin" },
      );
      b.onLoad({ filter: /.*/, namespace: "lazy-builtin" }, (args) => {
        const keys = Object.keys(req(`node:${args.path}`)).filter((k) => k !== "default");
        // The getters sit on the stand-in's prototype, not on the stand-in: esbuild gives each
        // importing module its own copy of a CommonJS module's own properties (a getter and a
        // closure per name: 13 copies of crypto's 70-odd names, ~2,500 objects in every
        // worker's startup snapshot), while the copy's prototype is the stand-in's, so the
        // names still read through it.
        return {
          loader: "js",
          contents:
            `let real; const load = () => (real ??= require(${JSON.stringify(`node:${args.path}`)}));\n` +
            `const names = {};\n` +
            `for (const key of ${JSON.stringify(keys)}) Object.defineProperty(names, key, { enumerable: true, get: () => load()[key] });\n` +
            `module.exports = Object.create(names);\n`,
        };
      });
    },
  };
}

/**
 * TypeBox out of the worker bundle: every import of it in our code (`typebox`, `typebox/type`…)
 * becomes a stand-in module, and TypeBox itself, all of it, one file beside the bundle
 * (buildTypeboxFile), one copy of its state for the bundle and its chunks. In the bundle a
 * stand-in loads that file at the first use of any of its exports: a function calls through,
 * an object's properties read through, a string or number is a literal. A start's checks are
 * our own (shared/schema-check.ts), so a start that checks nothing our check does not cover
 * never loads TypeBox: its ~1,500 functions (typebox was 327 of the 833 KB of our heap a
 * startup snapshot attributes) were created at every start by the bundle's one scope. In a
 * chunk (the extension modules', which hands TypeBox's index to extensions) a stand-in takes
 * the real exports when the chunk loads. The stand-ins' names and kinds come from TypeBox, as
 * this node loads it.
 */
async function lazyTypebox() {
  const modules = {};
  for (const [sub, id] of Object.entries(TYPEBOX_SUBPATHS)) modules[id] = { sub, ns: await import(id) };
  return {
    name: "lazy-typebox",
    setup(b) {
      const inChunk = b.initialOptions.outfile !== undefined && !b.initialOptions.outfile.endsWith("/pi-worker.cjs");
      b.onResolve({ filter: /^typebox(\/|$)/ }, (args) => {
        if (args.importer.includes("/node_modules/typebox/")) return undefined;
        if (!Object.hasOwn(modules, args.path))
          throw new Error(`lazy-typebox: ${args.path} (imported by ${args.importer}) is not in TYPEBOX_SUBPATHS`);
        return { path: args.path, namespace: "lazy-typebox", sideEffects: false };
      });
      b.onLoad({ filter: /.*/, namespace: "lazy-typebox" }, (args) => {
        const { sub, ns } = modules[args.path];
        const names = Object.keys(ns);
        const head = 'import { typeboxModule } from "pi-worker-chunks";\n';
        const exportAs = (name, expr) =>
          name === "default" ? `export default ${expr};` : `export const ${name} = ${expr};`;
        if (inChunk) {
          return {
            loader: "js",
            contents: `${head}const m = typeboxModule(${JSON.stringify(sub)});\n${names.map((n) => exportAs(n, `m.${n}`)).join("\n")}\n`,
          };
        }
        const lines = [
          head,
          `const m = () => typeboxModule(${JSON.stringify(sub)});`,
          "const lazyObject = (get, keys) => { const o = {}; for (const k of keys) Object.defineProperty(o, k, { enumerable: true, get: () => get()[k] }); return o; };",
        ];
        for (const name of names) {
          const v = ns[name];
          if (typeof v === "function") {
            // A class too: constructed through, when called with new.
            const f = `function (...a) { return new.target ? Reflect.construct(m().${name}, a, new.target) : m().${name}.apply(this, a); }`;
            lines.push(
              name === "default" ? `export default ${f}` : `export ${f.replace("function", `function ${name}`)}`,
            );
          } else if (typeof v === "object" && v !== null) {
            lines.push(
              exportAs(name, `/* @__PURE__ */ lazyObject(() => m().${name}, ${JSON.stringify(Object.keys(v))})`),
            );
          } else if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") {
            lines.push(exportAs(name, JSON.stringify(v)));
          } else
            throw new Error(`lazy-typebox: ${args.path} exports ${name}, a ${typeof v}, which a stand-in cannot hold`);
        }
        return { loader: "js", contents: `${lines.join("\n")}\n`, resolveDir: process.cwd() };
      });
    },
  };
}

/**
 * TypeBox's modules (TYPEBOX_SUBPATHS) as one CommonJS file, loaded as a chunk of the worker
 * bundle is (scripts/worker-chunks.mjs): its export is a function returning the namespaces.
 */
async function buildTypeboxFile(outfile) {
  await build({
    stdin: {
      contents: Object.entries(TYPEBOX_SUBPATHS)
        .map(([sub, id]) => `export * as ${sub} from ${JSON.stringify(id)};`)
        .join("\n"),
      resolveDir: process.cwd(),
      loader: "js",
    },
    outfile,
    ...WORKER_CJS,
    minifyIdentifiers: true,
    sourcemap: true,
    banner: {
      js: 'module.exports = function () {\n"use strict";\nvar module = { exports: {} }, exports = module.exports;',
    },
    footer: { js: "return module.exports;\n};" },
    logLevel: "warning",
  });
}

/**
 * The interactive mode (ink and react, ~70 KB of the bundle) never runs from this
 * bundle: the launcher starts the ESM build whenever stdin and stdout are a terminal,
 * and only then does pi go interactive.
 */
function withoutInteractive() {
  return {
    name: "without-interactive",
    setup(b) {
      b.onResolve({ filter: /\/tui\/interactive\.js$/ }, () => ({
        path: "interactive",
        namespace: "without-interactive",
      }));
      b.onLoad({ filter: /.*/, namespace: "without-interactive" }, () => ({
        loader: "js",
        contents: `export function runInteractive() { throw new Error("the interactive mode runs from dist/cli/pi.js (started on a terminal)"); }`,
      }));
    },
  };
}

/**
 * worker/extensions/native-import.ts in the CommonJS bundle: its import() would become a
 * require() there (no import() in a script run from a code cache), which gives a built-in's
 * CommonJS object, not the namespace jiti gives an extension. It loads dist/cli/native-import.cjs
 * instead, compiled by node's own loader, with import() working, when first needed.
 */
function nativeImportFile() {
  return {
    name: "native-import-file",
    setup(b) {
      b.onLoad({ filter: /worker\/extensions\/native-import\.ts$/ }, () => ({
        loader: "js",
        contents:
          "let load;\n" +
          'export function nativeImport(id) { load ??= require(require("node:path").join(__dirname, "native-import.cjs")); return load(id); }\n',
      }));
    },
  };
}

/**
 * jiti's own cache (dist/cli/jiti.cjs.cache): a start with extensions then skips compiling
 * jiti's 190 KB, and what jiti runs for a typical extension is compiled already. Made by
 * a start of its own (the worker's cache keeps only what a start without extensions
 * compiles) that loads our example extension and a two-file one in the style of pi's
 * examples, whose `./helper.js` import of a `.ts` file takes jiti's slowest resolution
 * path. A first start fills jiti's transform cache, so the second, the one recorded, runs
 * what a usual start runs (a cache hit, no Babel).
 */
async function writeJitiCache(launcher) {
  // A fixed folder: jiti names its transform cache after the file's path, so a new temporary
  // folder per build would leave two more files in jiti's cache each time.
  const dir = "node_modules/.cache/pi-orch-build-extension";
  mkdirSync(dir, { recursive: true });
  try {
    writeFileSync(
      join(dir, "helper.ts"),
      "export const describe = (what: string): string => `a command made ${what}`;\n",
    );
    writeFileSync(
      join(dir, "index.ts"),
      'import { Type } from "typebox";\nimport { describe } from "./helper.js";\n' +
        'export default function (pi: any): void {\n  pi.registerTool({ name: "build_cache", label: "build", description: describe("at build time"), parameters: Type.Object({}), execute: async () => ({ content: [] }) });\n}\n',
    );
    const args = ["-e", "examples/extensions/guard.ts", "-e", dir];
    await writeCodeCache(launcher, { mode: undefined, args, cache: undefined, what: "jiti's" });
    await writeCodeCache(launcher, { mode: "write-jiti", args, cache: "dist/cli/jiti.cjs.cache", what: "jiti's" });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Start the worker once in code-cache-writing mode (`PI_ORCH_CODE_CACHE=<mode>`), ask for
 * its state, close stdin: what V8 compiled by then is saved to `cache` (with no mode, the
 * start only warms what the next one reads). A failure only
 * costs start-up time, so it is a warning, not a failed build.
 */
async function writeCodeCache(launcher, { mode, args, cache, what }) {
  const home = mkdtempSync(join(tmpdir(), "pi-build-cache-"));
  try {
    const answered = await new Promise((resolve) => {
      // PI_ORCH_CACHE_DIR: a start without the cache being made writes one for itself; not into the user's ~/.cache.
      const env = { ...process.env, PI_ORCH_HOME: home, PI_ORCH_CACHE_DIR: join(home, "cache") };
      if (mode === undefined) delete env.PI_ORCH_CODE_CACHE;
      else env.PI_ORCH_CODE_CACHE = mode;
      const child = spawn(
        process.execPath,
        [launcher, "--mode", "rpc", "--provider", "faux", "--no-session", ...args],
        { env, stdio: ["pipe", "pipe", "ignore"] },
      );
      let out = "";
      let ok = false;
      child.stdout.on("data", (c) => {
        out += c;
        if (!ok && out.includes('"command":"get_state"')) {
          ok = true;
          child.stdin.end();
        }
      });
      child.on("error", () => resolve(false));
      child.on("exit", (code) => resolve(ok && code === 0));
      child.stdin.write(`${JSON.stringify({ id: "build", type: "get_state" })}\n`);
    });
    if (!answered || (cache !== undefined && !existsSync(cache))) {
      console.warn(`build: could not write ${what} code cache; pi starts without it (slower, still correct)`);
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
