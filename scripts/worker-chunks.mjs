// The CommonJS worker bundle (dist/cli/pi-worker.cjs), split: every module our code loads
// with import() and that a start does not import statically is built as a file of its own
// beside the bundle (dist/cli/pi-worker-NAME.cjs), required on first use. Each worker reads
// and keeps the whole bundle (its source text, and in a startup snapshot every object it made),
// so what a start never runs (MCP, codemode, the OpenAI and Anthropic adapters, pi's modules
// for extensions, the `mcp` and `package` commands) costs it nothing there. TypeBox is a file
// of its own too (dist/cli/pi-worker-typebox.cjs, scripts/build.mjs: lazyTypebox), which the
// bundle and its chunks load through `typeboxModule` below: one copy of its state.
//
// esbuild splits code only for ESM. Two things make the split by hand right:
// - A chunk shares the bundle's modules, never a copy: what both import (the session, the
//   schemas) is handed to the chunk by the bundle (`hostModule`), so there is one of each
//   module's state, classes and registries in a worker.
// - No import() is left in the bundle: esbuild wraps the target of one (and everything it
//   imports) in a lazy initialiser, which keeps all of a wrapped module's exports and stops
//   tree-shaking (TypeBox's whole index was evaluated at every start through one). Each
//   `import("…")` in our source becomes `loadChunk("…")` (a chunk) or
//   `hostModule("…")` (a module the bundle has anyway) from the virtual module below.
import { build } from "esbuild";
import { rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, dirname, join, relative } from "node:path";

const LOADER = "pi-worker-chunks";
/** TypeBox, all of it, as a file of its own beside the bundle (scripts/build.mjs). */
export const TYPEBOX_FILE = "pi-worker-typebox.cjs";
const ROOT = process.cwd();

/**
 * Build the worker bundle with `options` (esbuild's, for the one file) and its chunks beside
 * `options.outfile`; a target of import() whose path from the project matches one of `keep`
 * stays in the bundle (one that some starts run). Returns the chunks' files and the bundle's
 * metafile.
 */
export async function buildWorkerChunks(options, keep = [], sources = new Map()) {
  rewritten = sources;
  // Pass 1: which modules a start imports statically (every import() a placeholder).
  let main = await mainModules(options, { chunks: undefined, host: new Set() });
  let chunks = new Map();
  const shared = new Set();
  const written = new Set();
  // A module handed to a chunk keeps all its exports in the bundle, which may bring in
  // modules that a chunk had its own copy of: repeat until nothing moves.
  for (let round = 0; round < 4; round++) {
    // A target with code in the bundle is answered from it; any other is a chunk (a file of
    // re-exports too).
    const targets = await dynamicTargets(options, main.withCode);
    const inBundle = (t) => main.withCode.has(t) || keep.some((k) => k.test(keyOf(t)));
    chunks = new Map();
    for (const target of targets) if (!inBundle(target)) chunks.set(target, chunkName(target));
    const host = new Set([...targets].filter(inBundle).map(keyOf));
    const owned = new Map();
    for (const [target, name] of chunks) {
      written.add(name);
      const used = await buildChunk(options, target, name, main.withCode, chunks);
      for (const key of used.host) host.add(key);
      for (const file of used.own) {
        // Two chunks with their own copy of one module would give it two states: the bundle
        // takes it (the providers' client options, shared by the OpenAI and Anthropic ones).
        if (owned.has(file) && owned.get(file) !== name) shared.add(keyOf(file));
        owned.set(file, name);
      }
    }
    for (const key of shared) host.add(key);
    const next = await mainModules(options, { chunks, host });
    const moved = [...next.withCode].some((f) => !main.withCode.has(f));
    main = next;
    if (!moved) break;
  }
  const files = [...chunks.values()].map((n) => chunkFile(options.outfile, n));
  // A chunk of an earlier round that the bundle took in.
  for (const name of written) {
    const file = chunkFile(options.outfile, name);
    if (!files.includes(file)) for (const f of [file, `${file}.map`]) rmSync(f, { force: true });
  }
  return { chunks: files, metafile: main.metafile };
}

/** dist/cli/pi-worker-NAME.cjs: beside the bundle, so `import.meta.url`-relative paths stay right. */
function chunkFile(outfile, name) {
  return join(dirname(outfile), `${basename(outfile, ".cjs")}-${name}.cjs`);
}

/** A chunk's name from its entry: `worker/mcp/connection.ts` → `worker-mcp-connection`, a package's index → its name. */
function chunkName(target) {
  const rel = relative(ROOT, target);
  const pkg = rel.match(/^node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/);
  const path = pkg ? (pkg[2] === "build/index.mjs" ? pkg[1] : `${pkg[1]}/${pkg[2]}`) : rel;
  return path.replace(/\.(ts|mjs|js|cjs)$/, "").replace(/[^A-Za-z0-9]+/g, "-");
}

/**
 * Our modules' sources as another plugin of the build rewrote them (scripts/schema-data.mjs),
 * by path: a file with an import() is loaded here, so the rewrite must start from them.
 */
let rewritten = new Map();

/** TypeScript files: import() is rewritten in ours (those not in node_modules). */
const OWN = /\.ts$/;
/** A string-literal import() in code, not in a type (`typeof import("…")`). */
const DYNAMIC = /(?<!typeof\s)\bimport\(\s*"([^"]+)"\s*\)/g;

/**
 * The plugin that rewrites our import()s: a chunk's becomes `loadChunk(file)`, a module in the
 * bundle's becomes `hostModule(key)`; externals (the SDKs, jiti) stay import()s, which the
 * build turns into require(). `found` collects the targets; `chunks` maps a target to its
 * chunk name (undefined while they are being found: then every target is a chunk).
 */
function rewriteImports(found, chunks, outfile) {
  return {
    name: "worker-chunks-rewrite",
    setup(b) {
      b.onLoad({ filter: OWN }, async (args) => {
        if (!args.path.startsWith(`${ROOT}/`) || args.path.includes("/node_modules/")) return undefined;
        const source = rewritten.get(args.path) ?? (await readFile(args.path, "utf8"));
        if (!source.includes("import(")) return undefined;
        const edits = [];
        for (const m of source.matchAll(DYNAMIC)) {
          const r = await b.resolve(m[1], { resolveDir: dirname(args.path), kind: "dynamic-import", pluginData: SKIP });
          if (r.errors.length > 0 || r.external || r.namespace !== "file") continue;
          found?.add(r.path);
          const name = chunks === undefined ? chunkName(r.path) : chunks.get(r.path);
          const call =
            name !== undefined
              ? `__piChunks.loadChunk(${JSON.stringify(basename(chunkFile(outfile, name)))})`
              : `__piChunks.hostModule(${JSON.stringify(keyOf(r.path))})`;
          edits.push([m.index, m[0].length, call]);
        }
        if (edits.length === 0) return rewritten.has(args.path) ? { contents: source, loader: "ts" } : undefined;
        let out = source;
        for (const [at, len, call] of edits.reverse()) out = out.slice(0, at) + call + out.slice(at + len);
        // After a `#!` line, which must stay the first.
        const head = out.startsWith("#!") ? out.slice(0, out.indexOf("\n") + 1) : "";
        return { contents: `${head}import * as __piChunks from "${LOADER}";\n${out.slice(head.length)}`, loader: "ts" };
      });
    },
  };
}

/** Marks b.resolve calls of our own plugins, which their onResolve hooks must let through. */
const SKIP = { workerChunks: "skip" };

/** A module's key between the bundle and its chunks: its path from the project's root. */
function keyOf(path) {
  return relative(ROOT, path);
}

/** Build the bundle (written when `chunks` is given in full); the modules in it, as absolute paths. */
async function mainModules(options, { chunks, host }) {
  const result = await build({
    ...options,
    write: chunks !== undefined,
    metafile: true,
    plugins: [
      ...(options.plugins ?? []),
      rewriteImports(undefined, chunks, options.outfile),
      {
        name: "worker-chunks-loader",
        setup(b) {
          b.onResolve({ filter: new RegExp(`^${LOADER}$`) }, () => ({ path: LOADER, namespace: LOADER }));
          b.onLoad({ filter: /.*/, namespace: LOADER }, () => ({
            // Sorted: the set fills in the order esbuild's parallel loads found the targets,
            // which made the bundle's module order (and so its bytes) differ between builds.
            contents: loaderSource([...host].sort()),
            loader: "js",
            resolveDir: ROOT,
          }));
        },
      },
    ],
  });
  // The modules with code in the bundle: a chunk takes these from it. One whose code was all
  // left out (unused there), or a file of re-exports, a chunk may have a copy of: it has no
  // state in the bundle.
  const out = Object.values(result.metafile.outputs).find((o) => o.entryPoint !== undefined);
  const withCode = new Set(
    Object.entries(out.inputs)
      .filter(([file, v]) => v.bytesInOutput > 0 && !file.includes(":"))
      .map(([file]) => join(ROOT, file)),
  );
  return { withCode, metafile: result.metafile };
}

/**
 * The targets of every import() in our source that the bundle or a chunk reaches (dry
 * builds: the bundle's, then each new chunk's, for the import()s in it).
 */
async function dynamicTargets(options, inMain) {
  const found = new Set();
  const done = new Set();
  let entries = options.entryPoints;
  while (entries.length > 0) {
    await build({
      ...options,
      entryPoints: entries,
      outfile: undefined,
      outdir: "dry-run",
      write: false,
      plugins: [
        ...(options.plugins ?? []),
        rewriteImports(found, undefined, options.outfile),
        {
          name: "worker-chunks-loader",
          setup(b) {
            b.onResolve({ filter: new RegExp(`^${LOADER}$`) }, () => ({ path: LOADER, namespace: LOADER }));
            b.onLoad({ filter: /.*/, namespace: LOADER }, () => ({
              contents: loaderSource([]),
              loader: "js",
              resolveDir: ROOT,
            }));
          },
        },
      ],
    });
    for (const e of entries) done.add(e);
    entries = [...found].filter((t) => !done.has(t) && !inMain.has(t));
  }
  return found;
}

/**
 * Build one chunk: `target` as the entry, the bundle's modules (`inMain`) taken from it
 * (`__piHost(key)`), the rest its own. Returns the keys it
 * takes and its own files.
 */
async function buildChunk(options, target, name, inMain, chunks) {
  const hostKeys = new Set();
  const result = await build({
    ...options,
    entryPoints: [target],
    outfile: chunkFile(options.outfile, name),
    metafile: true,
    // Called by the bundle with its modules; returns the chunk's exports.
    banner: {
      js: `module.exports = function (__piHost) {\n"use strict";\nvar module = { exports: {} }, exports = module.exports, __piMetaUrl = require("node:url").pathToFileURL(__filename).href;`,
    },
    footer: { js: "return module.exports;\n};" },
    plugins: [
      // First: a module of the bundle must be taken from it whoever would resolve it.
      {
        name: "worker-chunks-host",
        setup(b) {
          b.onResolve({ filter: new RegExp(`^${LOADER}$`) }, () => {
            hostKeys.add(LOADER);
            return { path: `${LOADER}#host`, namespace: "pi-host" };
          });
          b.onResolve({ filter: /.*/ }, async (args) => {
            // A plugin's own b.resolve (pluginData set) is passed through to the plugins after this one.
            if (args.pluginData !== undefined || args.kind === "entry-point" || args.namespace !== "file")
              return undefined;
            const r = await b.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, pluginData: SKIP });
            if (r.errors.length > 0 || r.external || r.namespace !== "file" || !inMain.has(r.path)) return undefined;
            const key = keyOf(r.path);
            hostKeys.add(key);
            // Not ending in .mjs: the stand-in is CommonJS, whatever the module it stands for.
            return { path: `${key}#host`, namespace: "pi-host" };
          });
          b.onLoad({ filter: /.*/, namespace: "pi-host" }, (args) => {
            const key = args.path.replace(/#host$/, "");
            return { contents: `module.exports = __piHost(${JSON.stringify(key)});`, loader: "js" };
          });
        },
      },
      ...(options.plugins ?? []),
      rewriteImports(undefined, chunks, options.outfile),
    ],
  });
  const out = Object.values(result.metafile.outputs).find((o) => o.entryPoint !== undefined);
  const own = Object.entries(out.inputs)
    .filter(([file, v]) => v.bytesInOutput > 0 && !file.includes(":"))
    .map(([file]) => join(ROOT, file));
  return { host: [...hostKeys].filter((k) => k !== LOADER), own };
}

/**
 * The virtual module `pi-worker-chunks` in the bundle: the modules chunks take from it
 * (namespaces, marked as ES modules so a chunk's default imports read their `default`), and
 * `loadChunk`, which requires a chunk file beside the bundle and hands it those modules.
 */
function loaderSource(hostKeys) {
  const imports = hostKeys.map((k, i) => `import * as h${i} from ${JSON.stringify(join(ROOT, k))};`).join("\n");
  const entries = hostKeys.map((k, i) => `    ${JSON.stringify(k)}: h${i},`).join("\n");
  return `${imports}
import { join } from "node:path";
import { runCachedCommonJs } from ${JSON.stringify(join(ROOT, "shared/cached-commonjs.ts"))};
let host;
const own = () => ({ loadChunk, requireChunk, typeboxModule, hostModule, __esModule: true });
/** The bundle's module \`key\` (its path from the project), as a chunk imports it. */
export function hostModule(key) {
  if (key === ${JSON.stringify(LOADER)}) return own();
  host ??= {
${entries}
  };
  const ns = host[key];
  if (ns === undefined) throw new Error(\`the worker bundle has no module \${key} for its chunks; rebuild it (npm run build)\`);
  if (!ns.__esModule) Object.defineProperty(ns, "__esModule", { value: true });
  return ns;
}
const loaded = new Map();
/** The exports of chunk \`file\` (beside this bundle), required on first use. */
export function loadChunk(file) {
  return Promise.resolve().then(() => requireChunk(file));
}
/** The same, now: for a module that is called, not imported (TypeBox's, below). */
export function requireChunk(file) {
  let exports = loaded.get(file);
  if (exports === undefined) {
    const path = join(__dirname, file);
    // With the code cache the build made (its run with extensions, PI_ORCH_CODE_CACHE=write-jiti).
    const mode = process.env.PI_ORCH_CODE_CACHE;
    const name = file.replace(/.cjs$/, "");
    const { module, status } = runCachedCommonJs(path, { cacheFile: \`\${path}.cache\`, name, write: mode === "write-jiti" });
    if (mode === "report") process.stderr.write(\`pi: \${name} code cache \${status}\n\`);
    exports = module.exports(hostModule);
    loaded.set(file, exports);
  }
  return exports;
}
/**
 * TypeBox's module \`sub\` (\`type\`, \`schema\`…; \`index\` for the package's own), from its file beside
 * the bundle (${TYPEBOX_FILE}), loaded at the first use of any of its exports
 * (scripts/build.mjs, lazyTypebox).
 */
export function typeboxModule(sub) {
  const ns = requireChunk(${JSON.stringify(TYPEBOX_FILE)})[sub];
  if (ns === undefined) throw new Error(\`${TYPEBOX_FILE} has no module \${sub}; rebuild it (npm run build)\`);
  return ns;
}
`;
}
