/**
 * How `tool_search` ranks tools, as pi 1.6.0 does (so the same query loads the same tools):
 * Okapi BM25 over a tool's description and its schema's descriptions and property names,
 * with its name and its namespace as separate fields. A tool matching more query terms in
 * any field ranks above one matching fewer; a term in the name outweighs any number of
 * mentions; a tool whose whole local name is in the query gets a bonus; a query that is
 * exactly a tool's name (or its `__` suffix) ranks it first. Ties keep document order. Pure.
 */

/** What is searched of one tool. */
export interface SearchDocument {
  name: string;
  /** Description, schema descriptions and property names. */
  text: string;
  /** Namespace name, description and instructions (shared by a server's tools). */
  namespaceText?: string;
}

const STOP_WORDS = new Set("a an and are as at be by for from in is it of on or that the this to with".split(" "));
// Made on first use: building it loads ICU's word-break data, which a start without a search does not need.
let wordSegmenter: Intl.Segmenter | undefined;

/** A naive singular, so `issues` finds `issue` and `searches` `search`. */
function stem(term: string): string {
  if (term.length > 4 && term.endsWith("ies")) return `${term.slice(0, -3)}y`;
  if (term.length > 4 && /(ches|shes|sses|xes|zes)$/.test(term)) return term.slice(0, -2);
  if (term.length > 3 && term.endsWith("s") && !term.endsWith("ss")) return term.slice(0, -1);
  return term;
}

/** Words of `text`: split at identifier boundaries (`camelCase`, `snake_case`), lower case, stop words out, singular. */
export function tokenize(text: string): string[] {
  const normalized = text
    .normalize("NFC")
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}]+/gu, " ");
  // Plain ASCII splits at spaces; other text (Chinese without spaces) needs the segmenter.
  const words = /^[a-z0-9 ]*$/.test(normalized)
    ? normalized.split(" ")
    : Array.from((wordSegmenter ??= new Intl.Segmenter(undefined, { granularity: "word" })).segment(normalized), (s) =>
        s.isWordLike ? s.segment : "",
      );
  return words.filter((w) => w.length > 0 && !STOP_WORDS.has(w)).map((w) => (/^[a-z0-9]+$/.test(w) ? stem(w) : w));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The subschema a local `$ref` (`#`, `#/$defs/Item`) points to in `root`. */
function resolveRef(ref: string, root: unknown): unknown {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let at: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    at = isObject(at) || Array.isArray(at) ? (at as Record<string, unknown>)[key] : undefined;
  }
  return at;
}

/** Schema descriptions and property names, recursively; each `$ref` target read once. */
function schemaText(schema: unknown, root: unknown, parts: string[], seen: Set<unknown>): void {
  if (!isObject(schema)) return;
  if (typeof schema.$ref === "string") {
    const target = resolveRef(schema.$ref, root);
    if (isObject(target) && !seen.has(target)) {
      seen.add(target);
      schemaText(target, root, parts, seen);
    }
  }
  if (typeof schema.description === "string") parts.push(schema.description);
  if (isObject(schema.properties))
    for (const [name, property] of Object.entries(schema.properties)) {
      parts.push(name);
      schemaText(property, root, parts, seen);
    }
  schemaText(schema.items, root, parts, seen);
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const variants = schema[key];
    if (Array.isArray(variants)) for (const v of variants) schemaText(v, root, parts, seen);
  }
}

/** The search document of a tool. */
export function searchDocument(
  tool: { name: string; description: string; parameters: unknown },
  namespace?: { name: string; description?: string; instructions?: string },
): SearchDocument {
  const parts = [tool.description];
  schemaText(tool.parameters, tool.parameters, parts, new Set([tool.parameters]));
  return {
    name: tool.name,
    text: parts.filter((p) => p.trim()).join(" "),
    namespaceText: namespace
      ? [namespace.name, namespace.description ?? "", namespace.instructions ?? ""].join(" ")
      : "",
  };
}

/** A name in lower case with what a script identifier cannot hold as `_` (`dev-radius` is `dev_radius`). */
function normalizeName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_$]/g, "_");
}

/** A name term counts this many times its IDF: more than any number of mentions in the text (at most 2.2). */
const NAME_WEIGHT = 3;
/** A namespace term helps find the server, less its one tool. */
const NAMESPACE_WEIGHT = 0.5;
const K1 = 1.2;
const B = 0.75;

/** The best `limit` documents for `query`, best first. */
export function rankTools(
  query: string,
  documents: SearchDocument[],
  limit: number,
): { name: string; score: number }[] {
  const queryTerms = new Set(tokenize(query));
  if (queryTerms.size === 0 || documents.length === 0 || limit <= 0) return [];
  const indexed = documents.map((d) => {
    const textCounts = new Map<string, number>();
    for (const term of tokenize(d.text)) textCounts.set(term, (textCounts.get(term) ?? 0) + 1);
    const segments = d.name.split("__");
    return {
      name: d.name,
      nameTerms: new Set(tokenize(d.name)),
      localNameTerms: [...new Set(tokenize(segments[segments.length - 1]!))],
      textCounts,
      textLength: [...textCounts.values()].reduce((a, b) => a + b, 0),
      namespaceTerms: new Set(tokenize(d.namespaceText ?? "")),
    };
  });
  const averageLength = indexed.reduce((sum, d) => sum + d.textLength, 0) / indexed.length || 1;
  const idf = new Map(
    [...queryTerms].map((term) => {
      const frequency = indexed.filter(
        (d) => d.nameTerms.has(term) || d.textCounts.has(term) || d.namespaceTerms.has(term),
      ).length;
      return [term, Math.log(1 + (indexed.length - frequency + 0.5) / (frequency + 0.5))];
    }),
  );
  const fullNameBonus = [...idf.values()].reduce((a, b) => a + b, 0);
  const exactQuery = normalizeName(query);
  const matches: { name: string; score: number; covered: number; exact: boolean }[] = [];
  for (const d of indexed) {
    const norm = K1 * (1 - B + (B * d.textLength) / averageLength);
    let score = 0;
    let covered = 0;
    for (const term of queryTerms) {
      const count = d.textCounts.get(term) ?? 0;
      const weight =
        (d.nameTerms.has(term) ? NAME_WEIGHT : 0) +
        (d.namespaceTerms.has(term) ? NAMESPACE_WEIGHT : 0) +
        (count * (K1 + 1)) / (count + norm);
      if (weight > 0) covered++;
      score += (idf.get(term) ?? 0) * weight;
    }
    if (score === 0) continue;
    if (d.localNameTerms.length > 0 && d.localNameTerms.every((t) => queryTerms.has(t))) score += fullNameBonus;
    const name = normalizeName(d.name);
    matches.push({ name: d.name, score, covered, exact: name === exactQuery || name.endsWith(`__${exactQuery}`) });
  }
  return matches
    .sort((a, b) => Number(b.exact) - Number(a.exact) || b.covered - a.covered || b.score - a.score)
    .slice(0, limit)
    .map(({ name, score }) => ({ name, score }));
}
