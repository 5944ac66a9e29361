// typebox schemas made at build time, as data. Our modules build their schemas at load
// (`export const X = Type.Object({...})`): ~2,300 calls into typebox's builders at every start
// from the code cache, enough for V8 to optimise one of typebox's guards with TurboFan before
// the first answer, which paged in ~3 MB of its compiler and cost private memory in every
// worker. Here each such top-level `const` is evaluated once, at build, and its initializer
// replaced by the value it made, written out as object and array literals: the same objects,
// property for property (typebox's hidden `~kind`, `~optional`… stay non-enumerable, in the same
// key order), and the same sharing (a schema used in another is that very object, read by name:
// `AgentMessage`, `Id.id`). The build then evaluates the rewritten modules and checks every
// value against the one the original made (`checkSame`), so a difference fails the build.
//
// Which `const`s: at a module's top level, in a module of ours that imports `typebox/type`,
// whose initializer calls only typebox's `Type.*`, array methods, or functions of the same
// module (builders like `command(…)`) that assign nothing, reads nothing of the process
// (`process`, `Date`…), and whose value is plain data (objects, arrays, strings, numbers…; no function, class instance or
// symbol). The TypeScript stays as it is: the types (`Static<typeof X>`) still come from it.
// `PI_ORCH_SCHEMA_DATA_REPORT=FILE npm run build` writes which consts of which modules became data.
//
// The price: the literals are longer than the builder calls (the worker bundle's text, which
// every worker keeps, grew by ~41 KB), and typebox's builders stay in the bundle (the extension
// runner's `StringEnum` and the typebox modules the extension chunk takes from it use them).
import { build } from "esbuild";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";

const ROOT = process.cwd();
const DIRS = ["shared", "worker", "cli"];
/** Where the build evaluates the modules (in the project, so that their packages resolve). */
const SCRATCH = "node_modules/.cache/pi-orch-schema-data";

/**
 * Evaluate our schema modules and make their rewritten sources; returns the esbuild plugin that
 * loads them in their place, and what it rewrote (`report`: per module, the consts made data).
 * `options`: `external` and `define` of the bundle being built (the evaluation needs the same).
 */
export async function schemaData({ external = [], define = {} } = {}) {
  const modules = findModules();
  const original = await evaluate(modules, (m) => m.source, external, define);
  const sources = new Map();
  const report = [];
  // The values of every module's bindings, in the evaluation of the original sources.
  for (const m of modules) {
    const rewritten = rewrite(m, original.get(m.path), original);
    if (rewritten === undefined) continue;
    sources.set(m.path, rewritten.source);
    report.push({ module: relative(ROOT, m.path), consts: rewritten.consts });
  }
  const after = await evaluate(modules, (m) => sources.get(m.path) ?? m.source, external, define);
  const pairs = new Map();
  const back = new Map();
  for (const { module, consts } of report) {
    const path = join(ROOT, module);
    for (const name of consts) {
      const why = checkSame(original.get(path).top[name], after.get(path).top[name], pairs, back, `${module}: ${name}`);
      if (why !== undefined) throw new Error(`schema data: ${why}`);
    }
  }
  return {
    report,
    sources,
    plugin: {
      name: "schema-data",
      setup(b) {
        b.onLoad({ filter: /\.ts$/ }, (args) => {
          const contents = sources.get(args.path);
          // One with an import() is the worker bundle's to load (scripts/worker-chunks.mjs), from `sources`.
          return contents === undefined || contents.includes("import(") ? undefined : { contents, loader: "ts" };
        });
      },
    },
  };
}

/** Our TypeScript files that import `typebox/type` (tests left out), with what the rewrite needs of each. */
function findModules() {
  const out = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules" && entry.name !== "test") walk(path);
      } else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") && !entry.name.endsWith(".d.ts")) {
        const source = readFileSync(path, "utf8");
        if (!/from "typebox\/type"/.test(source)) continue;
        const parsed = parse(path, source);
        if (parsed !== undefined) out.push(parsed);
      }
    }
  };
  for (const dir of DIRS) walk(join(ROOT, dir));
  return out;
}

/**
 * A module's top-level consts (name, initializer's span, whether it may be made data), its
 * value imports (local names), and the name of typebox's `Type` namespace in it.
 */
function parse(path, source) {
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  let typeNs;
  const imports = [];
  const functions = new Map();
  const consts = [];
  for (const st of file.statements) {
    if (ts.isImportDeclaration(st)) {
      const clause = st.importClause;
      if (clause === undefined || clause.isTypeOnly) continue;
      const from = st.moduleSpecifier.text;
      if (clause.name) imports.push(clause.name.text);
      const nb = clause.namedBindings;
      if (nb && ts.isNamespaceImport(nb)) {
        if (from === "typebox/type") typeNs = nb.name.text;
        else imports.push(nb.name.text);
      } else if (nb) {
        for (const el of nb.elements) if (!el.isTypeOnly) imports.push(el.name.text);
      }
    } else if (ts.isFunctionDeclaration(st) && st.name) {
      functions.set(st.name.text, st.body);
    } else if (ts.isVariableStatement(st) && st.declarationList.flags & ts.NodeFlags.Const) {
      for (const d of st.declarationList.declarations) {
        if (!ts.isIdentifier(d.name) || d.initializer === undefined) continue;
        const init = d.initializer;
        if (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) functions.set(d.name.text, init.body);
        consts.push({ name: d.name.text, init, statement: st });
      }
    }
  }
  if (typeNs === undefined) return undefined;
  // Calls an initializer may make: typebox's builders, and functions of this module whose own
  // calls are such (a builder like `command(type, props)`), transitively.
  const pure = new Map();
  const callsOk = (node, seen) => {
    let ok = true;
    const visit = (n) => {
      if (!ok) return;
      if (ts.isNewExpression(n) || ts.isTaggedTemplateExpression(n) || ts.isMetaProperty(n)) ok = false;
      else if (ts.isIdentifier(n) && AMBIENT.has(n.text)) ok = false;
      // No assignment (a builder that counts or records what it made).
      else if (
        ts.isBinaryExpression(n) &&
        n.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
        n.operatorToken.kind <= ts.SyntaxKind.LastAssignment
      )
        ok = false;
      else if (
        (ts.isPrefixUnaryExpression(n) || ts.isPostfixUnaryExpression(n)) &&
        [ts.SyntaxKind.PlusPlusToken, ts.SyntaxKind.MinusMinusToken].includes(n.operator)
      )
        ok = false;
      else if (ts.isCallExpression(n)) {
        const callee = n.expression;
        if (
          ts.isPropertyAccessExpression(callee) &&
          ts.isIdentifier(callee.expression) &&
          callee.expression.text === typeNs
        ) {
          // Type.X(...)
        } else if (ts.isIdentifier(callee) && functions.has(callee.text)) {
          if (!functionOk(callee.text, seen)) ok = false;
        } else if (ts.isPropertyAccessExpression(callee) && ARRAY_METHODS.has(callee.name.text)) {
          // An array's (`values.map((v) => Type.Literal(v))`).
        } else ok = false;
      }
      if (ok) ts.forEachChild(n, visit);
    };
    visit(node);
    return ok;
  };
  const functionOk = (name, seen) => {
    if (pure.has(name)) return pure.get(name);
    if (seen.has(name)) return true;
    const next = new Set(seen).add(name);
    const body = functions.get(name);
    const ok = body !== undefined && callsOk(body, next);
    pure.set(name, ok);
    return ok;
  };
  let calls = false;
  for (const c of consts) {
    let hasCall = false;
    const find = (n) => {
      if (ts.isCallExpression(n)) hasCall = true;
      else ts.forEachChild(n, find);
    };
    find(c.init);
    c.candidate =
      hasCall && !ts.isArrowFunction(c.init) && !ts.isFunctionExpression(c.init) && callsOk(c.init, new Set());
    calls ||= c.candidate;
  }
  if (!calls) return undefined;
  return { path, source, typeNs, imports, consts };
}

/**
 * Bundle the modules (each one's source from `sourceOf`, with an export of its consts' and
 * imports' values added) and evaluate them together, so that a value shared between modules is
 * one object here too. Returns, per module path, `{ top, imports }`: name → value.
 */
async function evaluate(modules, sourceOf, external, define) {
  mkdirSync(SCRATCH, { recursive: true });
  const out = join(SCRATCH, `eval-${process.pid}-${Math.random().toString(36).slice(2)}.mjs`);
  const byPath = new Map(modules.map((m) => [m.path, m]));
  const names = (list) => `{ ${list.join(", ")} }`;
  try {
    await build({
      stdin: {
        contents: `${modules.map((m, i) => `import { __piSchemaData as m${i} } from ${JSON.stringify(m.path)};`).join("\n")}\nexport default [${modules.map((_, i) => `m${i}`).join(", ")}];\n`,
        resolveDir: ROOT,
        loader: "js",
      },
      outfile: out,
      bundle: true,
      format: "esm",
      platform: "node",
      target: "node20",
      external: [...external, "bullmq"],
      define,
      banner: {
        js: "import { createRequire as __piCreateRequire } from 'node:module'; const require = __piCreateRequire(import.meta.url);",
      },
      logLevel: "warning",
      plugins: [
        {
          name: "schema-data-eval",
          setup(b) {
            b.onLoad({ filter: /\.ts$/ }, (args) => {
              const m = byPath.get(args.path);
              if (m === undefined) return undefined;
              return {
                contents: `${sourceOf(m)}\nexport const __piSchemaData = { top: ${names(m.consts.map((c) => c.name))}, imports: ${names(m.imports)} };\n`,
                loader: "ts",
              };
            });
          },
        },
      ],
    });
    const loaded = (await import(pathToFileURL(join(ROOT, out)).href)).default;
    return new Map(modules.map((m, i) => [m.path, loaded[i]]));
  } finally {
    rmSync(out, { force: true });
  }
}

/** A plain object (or array) made of data properties only, which a literal can make again. */
function plainShape(value) {
  if (typeof value !== "object" || value === null) return undefined;
  if (!Object.isExtensible(value)) return undefined;
  const proto = Object.getPrototypeOf(value);
  const isArray = Array.isArray(value);
  if (isArray ? proto !== Array.prototype : proto !== Object.prototype) return undefined;
  if (Object.getOwnPropertySymbols(value).length > 0) return undefined;
  const keys = Object.getOwnPropertyNames(value);
  const hidden = [];
  for (const key of keys) {
    if (isArray && key === "length") continue;
    const d = Object.getOwnPropertyDescriptor(value, key);
    if (!("value" in d) || !d.writable || !d.configurable) return undefined;
    if (!d.enumerable) hidden.push(key);
    if (key === "__proto__") return undefined;
  }
  if (isArray) {
    // Dense, nothing but its elements.
    if (hidden.length > 0 || keys.length !== value.length + 1) return undefined;
    for (let i = 0; i < value.length; i++) if (!Object.hasOwn(value, i)) return undefined;
  }
  return { isArray, keys: isArray ? [] : keys, hidden };
}

/** Whether `value` is made of primitives and plain objects and arrays only (no cycle). */
function isData(value, path = new Set()) {
  if (typeof value === "function" || typeof value === "symbol") return false;
  if (typeof value !== "object" || value === null) return true;
  const shape = plainShape(value);
  if (shape === undefined || path.has(value)) return false;
  path.add(value);
  const children = shape.isArray ? value : shape.keys.map((k) => value[k]);
  const ok = children.every((v) => isData(v, path));
  path.delete(value);
  return ok;
}

/** What an initializer made at build must not read: it may differ at start. */
const AMBIENT = new Set(["process", "globalThis", "Date", "Math", "require", "__dirname", "__filename"]);

/** Methods of arrays that make new values (an initializer may call them). */
const ARRAY_METHODS = new Set(["map", "filter", "concat", "slice", "flatMap"]);

const IDENT = /^[A-Za-z_$][\w$]*$/;

/** Register every object under `value` as reachable by `expr` (its first, shortest name wins). */
function addPaths(paths, value, expr) {
  let level = [[value, expr]];
  while (level.length > 0) {
    const next = [];
    for (const [v, e] of level) {
      if (typeof v !== "object" || v === null || paths.has(v)) continue;
      const shape = plainShape(v);
      if (shape === undefined) continue;
      paths.set(v, e);
      if (shape.isArray) v.forEach((x, i) => next.push([x, `${e}[${i}]`]));
      else for (const k of shape.keys) next.push([v[k], IDENT.test(k) ? `${e}.${k}` : `${e}[${JSON.stringify(k)}]`]);
    }
    level = next;
  }
}

function primitive(v) {
  switch (typeof v) {
    case "string":
      return JSON.stringify(v);
    case "number":
      return Object.is(v, -0) ? "-0" : String(v);
    case "boolean":
      return String(v);
    case "bigint":
      return `${v}n`;
    case "undefined":
      return "void 0";
    default:
      if (v === null) return "null";
      throw new Error(`schema data: no literal for ${typeof v}`);
  }
}

/**
 * The module's source with each candidate const's initializer replaced by its value, or
 * undefined when none is data. `values`: this module's `{ top, imports }` from the evaluation.
 */
function rewrite(m, values) {
  const paths = new Map();
  for (const name of m.imports) addPaths(paths, values.imports[name], name);
  const edits = [];
  const consts = [];
  const hideSets = new Map();
  let temps = 0;
  // Descriptor sets for Object.defineProperties: [key] hides a key that is there, [key, value] adds one hidden.
  const hideSet = (entries) => {
    const k = JSON.stringify(entries);
    if (!hideSets.has(k)) hideSets.set(k, `__piHidden${hideSets.size}`);
    return hideSets.get(k);
  };
  for (const c of m.consts) {
    const value = values.top[c.name];
    if (!c.candidate || typeof value !== "object" || value === null || !isData(value)) {
      // Not rewritten; its value is what its own code makes at start, and nothing below names into it.
      continue;
    }
    // Objects met twice within this value (and not reachable by an earlier name) get a name of their own.
    const seen = new Map();
    const count = (v) => {
      if (typeof v !== "object" || v === null || paths.has(v)) return;
      seen.set(v, (seen.get(v) ?? 0) + 1);
      if (seen.get(v) > 1) return;
      const shape = plainShape(v);
      if (shape.isArray) v.forEach(count);
      else for (const k of shape.keys) count(v[k]);
    };
    count(value);
    const decls = [];
    const literal = (v, top) => {
      if (typeof v !== "object" || v === null) return primitive(v);
      if (paths.has(v)) return paths.get(v);
      if (!top && seen.get(v) > 1) {
        const name = `__piShared${temps++}`;
        const expr = literal(v, true);
        decls.push(`const ${name} = ${expr};`);
        addPaths(paths, v, name);
        return name;
      }
      const shape = plainShape(v);
      if (shape.isArray) return `[${v.map((x) => literal(x, false)).join(", ")}]`;
      const { keys, hidden } = shape;
      const props = (list) => `{ ${list.map((k) => `${JSON.stringify(k)}: ${literal(v[k], false)}`).join(", ")} }`;
      if (hidden.length === 0) return props(keys);
      // Hidden keys last, with values that are not objects (typebox's `~kind`, `~optional`):
      // added by one shared set of descriptors per kind, as typebox adds them.
      const shown = keys.slice(0, keys.length - hidden.length);
      if (hidden.every((k, i) => keys[shown.length + i] === k && (typeof v[k] !== "object" || v[k] === null)))
        return `__piHide(${props(shown)}, ${hideSet(hidden.map((k) => [k, primitive(v[k])]))})`;
      // Else every key in its place, the hidden ones made so after.
      return `__piHide(${props(keys)}, ${hideSet(hidden.map((k) => [k]))})`;
    };
    const expr = literal(value, true);
    edits.push({ at: c.init.getStart(), end: c.init.getEnd(), text: expr, before: c.statement.getStart(), decls });
    addPaths(paths, value, c.name);
    consts.push(c.name);
  }
  if (edits.length === 0) return undefined;
  // A statement's shared objects go just before it (an insertion at its start), each
  // initializer in place of the old one; applied from the end, so the spans stay right.
  const spans = [];
  const before = new Map();
  for (const e of edits) {
    spans.push({ at: e.at, end: e.end, text: e.text });
    if (e.decls.length > 0) before.set(e.before, [...(before.get(e.before) ?? []), ...e.decls]);
  }
  for (const [at, decls] of before) spans.push({ at, end: at, text: `${decls.join("\n")}\n` });
  spans.sort((x, y) => y.at - x.at);
  let src = m.source;
  for (const s of spans) src = src.slice(0, s.at) + s.text + src.slice(s.end);
  const head = [
    "const __piHide = Object.defineProperties;",
    "const __piHiddenKey = { enumerable: false };",
    ...[...hideSets].map(
      ([entries, name]) =>
        `const ${name} = { ${JSON.parse(entries)
          .map(([k, value]) =>
            value === undefined
              ? `${JSON.stringify(k)}: __piHiddenKey`
              : `${JSON.stringify(k)}: { value: ${value}, writable: true, configurable: true }`,
          )
          .join(", ")} };`,
    ),
  ].join("\n");
  return { source: `${head}\n${src}`, consts };
}

/**
 * Why `a` (from the original module) and `b` (from the rewritten one) differ, or undefined when
 * they are the same: same kinds, own keys in the same order with the same attributes, same
 * prototypes, and the same sharing (`pairs`/`back`: the objects matched so far, both ways).
 */
function checkSame(a, b, pairs, back, where) {
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null)
    return Object.is(a, b) ? undefined : `${where}: ${String(a)} became ${String(b)}`;
  if (pairs.has(a) || back.has(b)) return pairs.get(a) === b ? undefined : `${where}: shared differently`;
  pairs.set(a, b);
  back.set(b, a);
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return `${where}: another prototype`;
  if (Object.isExtensible(a) !== Object.isExtensible(b)) return `${where}: extensible or not`;
  const ka = Reflect.ownKeys(a);
  const kb = Reflect.ownKeys(b);
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i]))
    return `${where}: keys ${String(ka)} became ${String(kb)}`;
  for (const k of ka) {
    const da = Object.getOwnPropertyDescriptor(a, k);
    const db = Object.getOwnPropertyDescriptor(b, k);
    for (const attr of ["enumerable", "writable", "configurable"])
      if (da[attr] !== db[attr]) return `${where}.${String(k)}: ${attr} ${da[attr]} became ${db[attr]}`;
    if (!("value" in da) || !("value" in db)) return `${where}.${String(k)}: an accessor`;
    const why = checkSame(da.value, db.value, pairs, back, `${where}.${String(k)}`);
    if (why !== undefined) return why;
  }
  return undefined;
}

/** Write what was rewritten (the build's `PI_ORCH_SCHEMA_DATA_REPORT=FILE`). */
export function writeReport(file, report) {
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
}
