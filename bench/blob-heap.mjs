// What a worker's startup snapshot holds of ours, and what a start from it runs. V8 heap
// snapshots taken before the first line of a start (a preload) from the blob of DIST and
// from an empty blob: their difference by object kind, and the bundle's functions (each
// closure with its SharedFunctionInfo, bytecode, scope info and feedback) by source file,
// through the bundle's source map. Then precise coverage of a start to its first
// `get_state` answer: which of the bundle's compiled functions ran. On this node.
//
//   node bench/blob-heap.mjs [DIST] [--kind=plain|extensions] [--top=N]
//
// BENCHMARKS.md ("Worker start-up") has what it found; sizes are V8's self sizes.
import { createJiti } from "jiti";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const argv = process.argv.slice(2);
const flag = (name) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const DIST = resolve(argv.find((a) => !a.startsWith("--")) ?? join(ROOT, "dist"));
const KIND = flag("kind") ?? "plain";
const TOP = Number(flag("top") ?? 25);
const BUNDLE = join(DIST, "cli/pi-worker.cjs");
const jiti = createJiti(import.meta.url);
const { buildSnapshot } = await jiti.import("../shared/startup-snapshot.ts");

delete process.env.NODE_EXTRA_CA_CERTS;
const home = mkdtempSync(join(tmpdir(), "pi-blob-heap-"));
const env = {
  ...process.env,
  PI_ORCH_SANDBOX: "off",
  PI_ORCH_HOME: join(home, "home"),
  PI_ORCH_CACHE_DIR: join(home, "cache"),
};
mkdirSync(env.PI_ORCH_HOME);
const KB = (n) => `${(n / 1024).toFixed(1)} KB`;

/** The blobs: ours as the supervisor builds it, and one of a script that does nothing. */
async function blobs() {
  const ours = join(home, `${KIND}.blob`);
  const problem = await buildSnapshot(
    { blob: ours, keyFile: `${ours}.key`, key: ours, kind: KIND },
    join(DIST, "cli/pi-snapshot.cjs"),
    join(DIST, "cli/pi.cjs"),
    env,
  );
  if (problem !== undefined) throw new Error(`could not build the ${KIND} blob: ${problem}`);
  const entry = join(home, "empty.cjs");
  writeFileSync(entry, 'require("node:v8").startupSnapshot.setDeserializeMainFunction(() => {});\n');
  const empty = join(home, "empty.blob");
  const built = spawnSync(process.execPath, ["--snapshot-blob", empty, "--build-snapshot", entry], { env });
  if (built.status !== 0) throw new Error(`could not build the empty blob: ${built.stderr}`);
  return { ours, empty, entry };
}

/** A heap snapshot of a start from `blob`, taken by a preload before anything else runs. */
function heapAtStart(blob, main) {
  const out = join(home, `${Math.random().toString(36).slice(2)}.heapsnapshot`);
  const preload = join(home, "heap-preload.cjs");
  writeFileSync(preload, 'require("node:v8").writeHeapSnapshot(process.env.BLOB_HEAP_OUT);\nprocess.exit(0);\n');
  const run = spawnSync(process.execPath, ["-r", preload, "--snapshot-blob", blob, ...main], {
    env: { ...env, BLOB_HEAP_OUT: out },
    stdio: ["ignore", "ignore", "pipe"],
  });
  if (run.status !== 0) throw new Error(`the start from ${blob} failed: ${run.stderr}`);
  return readHeap(out);
}

/** A heap snapshot's nodes and edges, with what the tables below need. */
function readHeap(file) {
  const s = JSON.parse(readFileSync(file, "utf8"));
  const m = s.snapshot.meta;
  const nf = m.node_fields.length;
  const ef = m.edge_fields.length;
  const [types] = m.node_types;
  const [edgeTypes] = m.edge_types;
  const count = s.nodes.length / nf;
  const first = new Uint32Array(count + 1);
  for (let i = 0, e = 0; i < count; i++) {
    first[i] = e;
    e += s.nodes[i * nf + 4] * ef;
    first[i + 1] = e;
  }
  return {
    count,
    type: (i) => types[s.nodes[i * nf]],
    name: (i) => s.strings[s.nodes[i * nf + 1]],
    size: (i) => s.nodes[i * nf + 3],
    edges: function* (i) {
      for (let e = first[i]; e < first[i + 1]; e += ef) {
        const t = edgeTypes[s.edges[e]];
        const named = t !== "element" && t !== "hidden";
        yield { type: t, name: named ? s.strings[s.edges[e + 1]] : s.edges[e + 1], to: s.edges[e + 2] / nf };
      }
    },
    locations: function* () {
      const lf = m.location_fields.length;
      for (let k = 0; k < s.locations.length; k += lf) {
        const [node, script, line, column] = s.locations.slice(k, k + 4);
        yield { node: node / nf, script, line, column };
      }
    },
  };
}

/** An object's kind for the table: strings by size, V8's internal objects by their name. */
function kindOf(h, i) {
  const type = h.type(i);
  const name = h.name(i);
  if (type.endsWith("string"))
    return `string ${h.size(i) > 100_000 ? "over 100 KB" : h.size(i) > 1000 ? "1-100 KB" : "under 1 KB"}`;
  if (type === "closure") return "closure";
  if (type === "code")
    return name.startsWith("system /") || name.startsWith("(") ? name : "SharedFunctionInfo or script";
  if (type === "object") return `object ${name.slice(0, 40)}`;
  if (["hidden", "array", "native", "synthetic", "object shape"].includes(type))
    return `${type} ${name.replace(/\d+/g, "N").slice(0, 50)}`;
  return type;
}

function byKind(h) {
  const out = new Map();
  for (let i = 0; i < h.count; i++) {
    const k = kindOf(h, i);
    const v = out.get(k) ?? { n: 0, size: 0 };
    v.n++;
    v.size += h.size(i);
    out.set(k, v);
  }
  return out;
}

/** The bundle's source map, decoded: for each generated line, [column, source] pairs in order. */
function sourceMap(file) {
  const map = JSON.parse(readFileSync(file, "utf8"));
  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const lines = [];
  let source = 0;
  for (const line of map.mappings.split(";")) {
    const segs = [];
    let column = 0;
    for (const seg of line.split(",")) {
      if (seg === "") continue;
      const values = [];
      let value = 0;
      let shift = 0;
      for (const ch of seg) {
        const d = B64.indexOf(ch);
        value += (d & 31) << shift;
        if (d & 32) shift += 5;
        else {
          values.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      column += values[0];
      if (values.length > 1) source += values[1];
      segs.push([column, values.length > 1 ? source : -1]);
    }
    lines.push(segs);
  }
  const sources = map.sources.map((p) => p.replace(/^(\.\.\/)+/, ""));
  /** The source file of generated `line` (0-based) and `column`. */
  return (line, column) => {
    const segs = lines[line] ?? [];
    let lo = 0;
    let hi = segs.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (segs[mid][0] <= column) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found >= 0 && segs[found][1] >= 0 ? sources[segs[found][1]] : "(the bundle's own wrapper and helpers)";
  };
}

/** A file's group: a package, or our folder. */
function groupOf(file) {
  const pkg = file.match(/^node_modules\/((?:@[^/]+\/)?[^/]+)/);
  return pkg ? pkg[1] : file.split("/").slice(0, 2).join("/");
}

/** The bundle's closures in `h` with what each holds alone (SharedFunctionInfo, bytecode, scope info, feedback), by source file. */
function bySource(h, sourceOf) {
  const scripts = new Map();
  for (const l of h.locations()) scripts.set(l.script, (scripts.get(l.script) ?? 0) + 1);
  // The bundle is the script with the most closures.
  const bundle = [...scripts].sort((a, b) => b[1] - a[1])[0][0];
  const seen = new Uint8Array(h.count);
  const out = new Map();
  const add = (file, i) => {
    seen[i] = 1;
    const v = out.get(file) ?? { closures: 0, size: 0 };
    v.size += h.size(i);
    out.set(file, v);
    return v;
  };
  const internal = (i) => ["code", "hidden", "array"].includes(h.type(i));
  for (const l of h.locations()) {
    if (l.script !== bundle || h.type(l.node) !== "closure" || seen[l.node]) continue;
    const file = sourceOf(l.line, l.column);
    add(file, l.node).closures++;
    for (const e of h.edges(l.node)) {
      if (seen[e.to]) continue;
      if (e.name === "feedback_cell") add(file, e.to);
      if (e.name !== "shared") continue;
      add(file, e.to);
      for (const f of h.edges(e.to)) {
        if (seen[f.to] || !internal(f.to)) continue;
        add(file, f.to);
        for (const g of h.edges(f.to)) if (!seen[g.to] && internal(g.to)) add(file, g.to);
      }
    }
  }
  return out;
}

/** Precise coverage of a start from `blob` to its first get_state answer: the bundle's functions, run or not. */
async function coverage(blob, sourceOf) {
  const dir = join(home, "coverage");
  await new Promise((res, rej) => {
    const p = spawn(
      process.execPath,
      ["--snapshot-blob", blob, join(DIST, "cli/pi.cjs"), "--mode", "rpc", "--provider", "faux", "--no-session"],
      { env: { ...env, NODE_V8_COVERAGE: dir }, stdio: ["pipe", "pipe", "ignore"] },
    );
    let out = "";
    p.stdout.on("data", (c) => {
      out += c;
      if (out.includes('"command":"get_state"')) p.stdin.end();
    });
    p.on("error", rej);
    p.on("exit", res);
    p.stdin.write(`${JSON.stringify({ id: "heap", type: "get_state" })}\n`);
  });
  const result = JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]), "utf8")).result;
  const script = result.find((r) => r.url.endsWith("/pi-worker.cjs"));
  const source = readFileSync(BUNDLE, "utf8");
  const lineStarts = [0];
  for (let i = 0; i < source.length; i++) if (source.charCodeAt(i) === 10) lineStarts.push(i + 1);
  const at = (offset) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return sourceOf(lo, offset - lineStarts[lo]);
  };
  const out = new Map();
  for (const fn of script.functions) {
    const [range] = fn.ranges;
    if (range.startOffset === 0) continue;
    const group = groupOf(at(range.startOffset));
    const v = out.get(group) ?? { ran: 0, ranBytes: 0, idle: 0, idleBytes: 0 };
    if (range.count > 0) {
      v.ran++;
      v.ranBytes += range.endOffset - range.startOffset;
    } else {
      v.idle++;
      v.idleBytes += range.endOffset - range.startOffset;
    }
    out.set(group, v);
  }
  return out;
}

try {
  const { ours, empty, entry } = await blobs();
  const a = heapAtStart(ours, [join(DIST, "cli/pi.cjs"), "--mode", "rpc"]);
  const b = heapAtStart(empty, [entry]);
  const ka = byKind(a);
  const kb = byKind(b);
  let total = 0;
  for (const v of ka.values()) total += v.size;
  let base = 0;
  for (const v of kb.values()) base += v.size;
  console.log(
    `Node ${process.version}, ${KIND} blob of ${DIST}: heap at start ${KB(total)} in ${a.count} objects; an empty blob's ${KB(base)} in ${b.count}: +${KB(total - base)}, +${a.count - b.count} objects`,
  );
  console.log("\nBy kind (more than the empty blob's):");
  const kinds = [...new Set([...ka.keys(), ...kb.keys()])].map((k) => {
    const x = ka.get(k) ?? { n: 0, size: 0 };
    const y = kb.get(k) ?? { n: 0, size: 0 };
    return { k, size: x.size - y.size, n: x.n - y.n };
  });
  for (const r of kinds.sort((p, q) => q.size - p.size).slice(0, TOP))
    console.log(`${KB(r.size).padStart(10)} ${String(r.n).padStart(7)} objects  ${r.k}`);

  const sourceOf = sourceMap(`${BUNDLE}.map`);
  const files = bySource(a, sourceOf);
  const groups = new Map();
  let attributed = 0;
  for (const [file, v] of files) {
    const g = groups.get(groupOf(file)) ?? { closures: 0, size: 0 };
    g.closures += v.closures;
    g.size += v.size;
    groups.set(groupOf(file), g);
    attributed += v.size;
  }
  console.log(`\nThe bundle's functions by source (${KB(attributed)}: closures with what each holds alone):`);
  for (const [g, v] of [...groups].sort((p, q) => q[1].size - p[1].size).slice(0, TOP))
    console.log(`${KB(v.size).padStart(10)} ${String(v.closures).padStart(6)} closures  ${g}`);
  console.log("\nThe same by file:");
  for (const [f, v] of [...files].sort((p, q) => q[1].size - p[1].size).slice(0, TOP))
    console.log(`${KB(v.size).padStart(10)} ${String(v.closures).padStart(6)} closures  ${f}`);

  const cov = await coverage(ours, sourceOf);
  const sum = { ran: 0, ranBytes: 0, idle: 0, idleBytes: 0 };
  for (const v of cov.values()) for (const k of Object.keys(sum)) sum[k] += v[k];
  console.log(
    `\nA start to its first answer (precise coverage): of the bundle's ${sum.ran + sum.idle} functions with bytecode, ${sum.ran} ran (${KB(sum.ranBytes)} of source), ${sum.idle} did not (${KB(sum.idleBytes)}):`,
  );
  for (const [g, v] of [...cov].sort((p, q) => q[1].idleBytes - p[1].idleBytes).slice(0, TOP))
    console.log(
      `  ${g.padEnd(40)} ran ${String(v.ran).padStart(4)} (${KB(v.ranBytes)}), not ${String(v.idle).padStart(4)} (${KB(v.idleBytes)})`,
    );
} finally {
  rmSync(home, { recursive: true, force: true });
}
