// Lists dead exports, and exits 1 when there are any (run by `npm run check`): exported
// declarations that nothing in the product uses, neither an importer nor their own file.
// An export its own file uses but no other file imports is only over-exported (often a
// pure function exported for its table test): `--all` lists those too, without failing.
// An export of the code (shared/, worker/, supervisor/, ipc/, cli/) counts as used only
// when code, bench/ or examples/ imports it: an export that only tests import is test
// scaffolding inside the product, so the test should build it itself. An export of test
// support (a test/ file that is not a *.test.ts) counts as used when anything imports it.
// Entry points (the bins, the vitest config and its global setup) are used by definition.
// Uses the type checker, so re-exports, `import type` and `import * as` resolve to the
// declaration they name; a dynamic `import("./x.js")` marks every export of x used.
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const CODE = ["shared/", "worker/", "supervisor/", "ipc/", "cli/"];
const ENTRIES = new Set(["cli/pi.ts", "cli/pi-orch.ts", "vitest.config.ts", "test/support/e2e-setup.ts"]);

const configPath = resolve(root, "tsconfig.json");
const config = ts.readConfigFile(configPath, ts.sys.readFile);
const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
const checker = program.getTypeChecker();

const rel = (file) => relative(root, file.fileName);
const ours = program.getSourceFiles().filter((f) => !f.isDeclarationFile && !rel(f).startsWith(".."));
const isCode = (path) => CODE.some((dir) => path.startsWith(dir));
const isTest = (path) => path.startsWith("test/") && /\.test\.tsx?$/.test(path);
const isTestSupport = (path) => path.startsWith("test/") && !isTest(path);

/** The declaration a symbol stands for, through import and re-export aliases. */
function original(symbol) {
  let s = symbol;
  while (s && s.flags & ts.SymbolFlags.Alias) s = checker.getAliasedSymbol(s);
  return s;
}

/** Used symbols, each with the files that import it. */
const used = new Map();
function mark(symbol, from) {
  const s = original(symbol);
  if (!s) return;
  const set = used.get(s) ?? new Set();
  set.add(from);
  used.set(s, set);
}
function markModule(moduleSymbol, from) {
  for (const e of checker.getExportsOfModule(moduleSymbol)) mark(e, from);
}
function moduleOf(specifier) {
  const symbol = checker.getSymbolAtLocation(specifier);
  return symbol && symbol.flags & ts.SymbolFlags.ValueModule ? symbol : undefined;
}

for (const file of ours) {
  const from = rel(file);
  const visit = (node) => {
    if (ts.isImportDeclaration(node) && node.importClause) {
      const clause = node.importClause;
      if (clause.name) mark(checker.getSymbolAtLocation(clause.name), from);
      const bindings = clause.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) {
        const mod = moduleOf(node.moduleSpecifier);
        if (mod) markModule(mod, from);
      } else if (bindings) for (const el of bindings.elements) mark(checker.getSymbolAtLocation(el.name), from);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      // A re-export uses what it names only when something uses it in turn: followed through original().
      if (!node.exportClause) {
        // `export * from`: its names are the module's own exports.
      } else if (ts.isNamespaceExport(node.exportClause)) {
        const mod = moduleOf(node.moduleSpecifier);
        if (mod) markModule(mod, from);
      }
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = node.arguments[0];
      if (arg && ts.isStringLiteralLike(arg)) {
        const mod = moduleOf(arg);
        if (mod) markModule(mod, from);
      }
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      if (ts.isLiteralTypeNode(arg) && ts.isStringLiteralLike(arg.literal)) {
        const mod = moduleOf(arg.literal);
        if (mod) {
          if (node.qualifier) {
            const first = ts.isIdentifier(node.qualifier) ? node.qualifier : node.qualifier.left;
            const name = ts.isIdentifier(first) ? first.text : undefined;
            const e = checker.getExportsOfModule(mod).find((x) => x.name === name);
            if (e) mark(e, from);
          } else markModule(mod, from);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
}

/** Whether `node` is the name a declaration introduces (not a use of it). */
function isDeclarationName(node) {
  const parent = node.parent;
  return (
    (ts.isFunctionDeclaration(parent) ||
      ts.isClassDeclaration(parent) ||
      ts.isInterfaceDeclaration(parent) ||
      ts.isTypeAliasDeclaration(parent) ||
      ts.isEnumDeclaration(parent) ||
      ts.isVariableDeclaration(parent) ||
      ts.isModuleDeclaration(parent)) &&
    parent.name === node
  );
}

/** Symbols that `file` itself refers to (its declarations' own names aside). */
function usedInFile(file) {
  const local = new Set();
  const visit = (node) => {
    if (ts.isIdentifier(node)) {
      const parent = node.parent;
      if (ts.isShorthandPropertyAssignment(parent)) {
        const value = checker.getShorthandAssignmentValueSymbol(parent);
        if (value) local.add(original(value));
      } else if (!(isDeclarationName(node) || ts.isExportSpecifier(parent))) {
        const symbol = checker.getSymbolAtLocation(node);
        if (symbol) local.add(original(symbol));
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return local;
}

const dead = [];
for (const file of ours) {
  const path = rel(file);
  if (ENTRIES.has(path) || isTest(path)) continue;
  if (!isCode(path) && !isTestSupport(path)) continue;
  const moduleSymbol = checker.getSymbolAtLocation(file);
  if (!moduleSymbol) continue;
  const local = usedInFile(file);
  for (const e of checker.getExportsOfModule(moduleSymbol)) {
    const s = original(e);
    const importers = [...(used.get(s) ?? [])].filter((f) => f !== path);
    const counted = isCode(path) ? importers.filter((f) => !f.startsWith("test/")) : importers;
    if (counted.length > 0) continue;
    // A re-export names someone else's declaration: the finding is the declaration's, reported there.
    const decl = s.declarations?.[0];
    if (decl && decl.getSourceFile() !== file) continue;
    const line = decl ? file.getLineAndCharacterOfPosition(decl.getStart()).line + 1 : 1;
    dead.push({ path, line, name: e.name, testsOnly: importers.length > 0, local: local.has(s) });
  }
}

dead.sort((a, b) => a.path.localeCompare(b.path) || a.line - b.line);
const all = process.argv.includes("--all");
const shown = all ? dead : dead.filter((d) => !d.local);
for (const d of shown) {
  const why = d.testsOnly ? "only tests import it" : "nothing imports it";
  console.log(`${d.path}:${d.line}: ${d.name} is exported but ${why}${d.local ? " (its file uses it)" : ""}`);
}
const overExported = dead.length - dead.filter((d) => !d.local).length;
if (!all && overExported > 0)
  console.log(`(${overExported} more exports are used only in their own file; --all lists them)`);
if (shown.some((d) => !d.local)) {
  console.log(
    "dead exports: remove the code (nothing in the product uses it), or, for what only tests use, " +
      "let the test build it from what the code exports.",
  );
  process.exit(1);
}
